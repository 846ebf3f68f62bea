import { describe, expect, it } from "vitest";
import { hiddenField } from "./hidden-field.js";

describe("hiddenField", () => {
  it("is read back from the object it was set on, and nothing else sees it or copies it", () => {
    const field = hiddenField<string>();
    const message = JSON.parse('{"jsonrpc":"2.0","id":1,"method":"x"}');
    expect(field.has(message)).toBe(false);
    expect(field.get(message)).toBeUndefined();
    field.set(message, "text");
    expect(field.get(message)).toBe("text");
    field.set(message, "again");
    expect(field.get(message)).toBe("again");
    // copies, keys, JSON, clones and equality: as if it were not there
    for (const copy of [{ ...message }, Object.assign({}, message), structuredClone(message)]) expect(field.has(copy)).toBe(false);
    expect(Object.keys(message)).toEqual(["jsonrpc", "id", "method"]);
    expect(Reflect.ownKeys(message)).toEqual(["jsonrpc", "id", "method"]);
    expect(JSON.stringify(message)).toBe('{"jsonrpc":"2.0","id":1,"method":"x"}');
    expect(message).toStrictEqual({ jsonrpc: "2.0", id: 1, method: "x" });
  });

  it("each field is its own", () => {
    const a = hiddenField<number>();
    const b = hiddenField<number>();
    const target = {};
    a.set(target, 1);
    expect(b.has(target)).toBe(false);
    b.set(target, 2);
    expect([a.get(target), b.get(target)]).toEqual([1, 2]);
  });
});
