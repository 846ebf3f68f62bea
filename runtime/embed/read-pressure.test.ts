import { describe, expect, it } from "vitest";
import { ReadPressure } from "./read-pressure.js";

describe("ReadPressure", () => {
  it("signals once when the first reader falls behind and once when the last catches up", () => {
    const signals: boolean[] = [];
    const p = new ReadPressure((c) => signals.push(c));
    const a = {};
    const b = {};
    p.set(a, true);
    p.set(b, true);
    p.set(a, true);
    p.set(a, false);
    expect(signals).toEqual([true]);
    p.set(b, false);
    expect(signals).toEqual([true, false]);
  });

  it("does not pause while the application waits on the chain for something else, and pauses again once it does not", () => {
    const signals: boolean[] = [];
    let waiting = true;
    const p = new ReadPressure(
      (c) => signals.push(c),
      () => waiting,
    );
    const a = {};
    p.set(a, true);
    expect(signals).toEqual([]);
    waiting = false;
    p.recheck();
    expect(signals).toEqual([true]);
    waiting = true;
    p.recheck();
    expect(signals).toEqual([true, false]);
  });

  it("once closed, lets go of the chain and never pauses it again", () => {
    const signals: boolean[] = [];
    const p = new ReadPressure((c) => signals.push(c));
    p.set({}, true);
    p.close();
    p.set({}, true);
    p.recheck();
    expect(signals).toEqual([true, false]);
    expect(p.congested).toBe(false);
  });
});
