import { parse } from "@bytecodealliance/jco-transpile/wasm-tools";
import { describe, expect, it } from "vitest";
import { type Backstop, backstop, vmTimeoutBackstop } from "./backstop.js";

const spinner = async () => {
  const bytes = (await parse(`(module (func (export "spin") (loop $l (br $l))))`)) as Uint8Array<ArrayBuffer>;
  return (new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports as { spin(): void }).spin;
};

/** Posts `fn` and resolves with what it returned, or with "interrupted" once the backstop says so. */
const run = <T>(b: Backstop, fn: () => T, limitMs: number) =>
  new Promise<{ value?: T; interrupted?: true; after?: true }>((resolve) =>
    b.post(() => {
      const value = b.guard(fn, limitMs, () => resolve({ interrupted: true }));
      resolve({ value, after: true });
    }),
  );

describe("the process's backstop", () => {
  it("is the inspector watchdog here (Node has an inspector and this is the main thread)", () => {
    expect(backstop().mechanism).toBe("watchdog");
  });
});

describe.each([
  ["watchdog", backstop()],
  ["vm-timeout", vmTimeoutBackstop],
])("the %s backstop", (_, b) => {
  it("interrupts a pure wasm loop (no calls, no fuel) after its limit; nothing after it in the task runs; the thread goes on", async () => {
    const spin = await spinner();
    const t = performance.now();
    expect(await run(b, spin, 200)).toEqual({ interrupted: true });
    expect(performance.now() - t).toBeGreaterThanOrEqual(190);
    expect(await run(b, () => 42, 200)).toEqual({ value: 42, after: true });
  });

  it("tasks posted behind an interrupted one still run, in order", async () => {
    const spin = await spinner();
    const seen: string[] = [];
    const done = new Promise<void>((resolve) => {
      b.post(() => {
        seen.push("a");
        b.guard(spin, 100, () => seen.push("a interrupted"));
        seen.push("never");
      });
      b.post(() => seen.push("b"));
      b.post(() => {
        seen.push("c");
        resolve();
      });
    });
    await done;
    await new Promise((r) => setTimeout(r, 10));
    expect(seen.filter((s) => s !== "a interrupted")).toEqual(["a", "b", "c"]);
    expect(seen).toContain("a interrupted");
  });

  it("passes results and the call's own errors through unchanged", async () => {
    const boom = new RangeError("boom");
    const caught = await new Promise((resolve) =>
      b.post(() => {
        try {
          b.guard(
            () => {
              throw boom;
            },
            1000,
            () => resolve("interrupted"),
          );
        } catch (error) {
          resolve(error);
        }
      }),
    );
    expect(caught).toBe(boom);
  });

  it("calls that end near their limit either return or are interrupted, and no termination lands after them", async () => {
    for (let i = 0; i < 10; i++) {
      const outcome = await run(
        b,
        () => {
          const until = performance.now() + 20;
          while (performance.now() < until);
          return i;
        },
        20,
      );
      expect([{ value: i, after: true }, { interrupted: true }]).toContainEqual(outcome);
      expect(await run(b, () => "next", 1000)).toEqual({ value: "next", after: true });
    }
  });

  it("costs little per guarded call (measured, printed)", async () => {
    const n = b.mechanism === "watchdog" ? 200_000 : 2_000;
    const per = await new Promise<number>((resolve) =>
      b.post(() => {
        const f = () => 1;
        const none = () => {};
        const t = performance.now();
        for (let i = 0; i < n; i++) b.guard(f, 1000, none);
        resolve(((performance.now() - t) * 1e6) / n);
      }),
    );
    console.log(`${b.mechanism} backstop: ${per.toFixed(0)} ns per guarded call`);
    expect(per).toBeGreaterThan(0);
  });
});
