import { parse } from "@bytecodealliance/jco-transpile/wasm-tools";
import { describe, expect, it } from "vitest";
import { WallClockExceeded, withinWallClock } from "./wall-clock.js";

describe("withinWallClock", () => {
  it("interrupts a pure wasm loop (no calls, no fuel) at its limit; the thread goes on", async () => {
    const bytes = (await parse(`(module (func (export "spin") (loop $l (br $l))))`)) as Uint8Array<ArrayBuffer>;
    const module = new WebAssembly.Module(bytes);
    const { spin } = new WebAssembly.Instance(module).exports as { spin(): void };
    const t = performance.now();
    expect(() => withinWallClock(spin, 200)).toThrow(WallClockExceeded);
    expect(performance.now() - t).toBeGreaterThanOrEqual(190);
    expect(withinWallClock(() => 42, 200)).toBe(42);
  });

  it("passes results and the call's own errors through unchanged, and nests", () => {
    const boom = new RangeError("boom");
    expect(() =>
      withinWallClock(() => {
        throw boom;
      }, 1000),
    ).toThrow(boom);
    expect(withinWallClock(() => withinWallClock(() => "inner", 1000) + " outer", 1000)).toBe("inner outer");
  });

  it("costs one watchdog thread per run (measured, printed)", () => {
    const n = 2000;
    let t = performance.now();
    for (let i = 0; i < n; i++) withinWallClock(() => i, 1000);
    const per = ((performance.now() - t) * 1000) / n;
    t = performance.now();
    console.log(`wall-clock backstop: ${per.toFixed(1)} µs per run`);
    expect(per).toBeGreaterThan(0);
  });
});
