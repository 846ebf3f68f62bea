import { describe, expect, it } from "vitest";
import { ChurnMap } from "./churn-map.js";

describe("ChurnMap", () => {
  it("keeps a Map's semantics through entries that come and go: order, last set wins, size, delete's answer", () => {
    const m = new ChurnMap<string, number>();
    expect(m.delete("a")).toBe(false);
    m.set("a", 1).set("b", 2).set("a", 3);
    expect([...m]).toEqual([
      ["a", 3],
      ["b", 2],
    ]);
    expect(m.delete("a")).toBe(true);
    expect(m.delete("missing")).toBe(false); // one entry left: a miss leaves it
    expect(m.size).toBe(1);
    expect(m.get("b")).toBe(2);
    expect(m.delete("b")).toBe(true); // the last one
    expect(m.size).toBe(0);
    expect(m.has("b")).toBe(false);
    expect(m.get("b")).toBeUndefined();
    expect(m.delete("b")).toBe(false);
    m.set("c", 4);
    expect([...m.keys()]).toEqual(["c"]);
    expect([...m.values()]).toEqual([4]);
    expect([...m.entries()]).toEqual([["c", 4]]);
  });

  it("iterates as a Map does while an entry is deleted under the loop, the last one included", () => {
    const m = new ChurnMap<number, string>();
    for (let i = 0; i < 3; i++) m.set(i, `v${i}`);
    const seen: number[] = [];
    for (const [key] of m) {
      seen.push(key);
      m.delete(key);
    }
    expect(seen).toEqual([0, 1, 2]);
    expect(m.size).toBe(0);
  });

  it("forEach and clear", () => {
    const m = new ChurnMap<string, number>();
    m.set("x", 1).set("y", 2);
    const each: [string, number][] = [];
    m.forEach((value, key, map) => {
      expect(map).toBe(m);
      each.push([key, value]);
    });
    expect(each).toEqual([
      ["x", 1],
      ["y", 2],
    ]);
    m.clear();
    expect(m.size).toBe(0);
    expect([...m]).toEqual([]);
  });
});
