import { parse } from "@bytecodealliance/jco-transpile/wasm-tools";
import { describe, expect, it } from "vitest";
import { type Backstop, backstop, vmTimeoutBackstop } from "./backstop.js";
import { InspectorWatchdog } from "./inspector-watchdog.js";

const spinner = async () => {
  const bytes = (await parse(`(module (func (export "spin") (loop $l (br $l))))`)) as Uint8Array<ArrayBuffer>;
  return (new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports as { spin(): void }).spin;
};

/**
 * Posts `fn` and resolves with what it returned, or with "interrupted" once the backstop says so;
 * `selfTimed`: as a call that reads the clock itself (`guardSelfTimed`).
 */
const run = <T>(b: Backstop, fn: () => T, limitMs: number, selfTimed = false) =>
  new Promise<{ value?: T; interrupted?: true; after?: true }>((resolve) =>
    b.post(() => {
      const interrupted = () => resolve({ interrupted: true });
      const value = selfTimed ? b.guardSelfTimed(fn, limitMs, interrupted) : b.guard(fn, limitMs, interrupted);
      resolve({ value, after: true });
    }),
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

  it("a self-timed call that asks to be watched is interrupted past the time it was given", async () => {
    const spin = await spinner();
    const outcome = await run(
      b,
      () => {
        b.watch(150);
        return spin();
      },
      150,
      true,
    );
    expect(outcome).toEqual({ interrupted: true });
    expect(await run(b, () => "next", 1000)).toEqual({ value: "next", after: true });
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

describe("the watchdog's poll interval (an eighth of the shortest limit a call has had, 10–250 ms)", () => {
  it("a call with a shorter limit than any before is watched at once, not after the longer poll the watchdog is waiting out", async () => {
    const dog = new InspectorWatchdog();
    const spin = await spinner();
    // A call of a 5 s limit starts the watchdog, which then waits 250 ms between looks at the word.
    expect(await run(dog, () => 1, 5000)).toEqual({ value: 1, after: true });
    await new Promise((r) => setTimeout(r, 60)); // the watchdog is up (~30 ms) and in its first wait
    const t = performance.now();
    expect(await run(dog, spin, 20)).toEqual({ interrupted: true });
    const elapsed = performance.now() - t;
    // Woken by the shorter limit, it polls every 10 ms: ~30 ms. Left to its wait it would have seen
    // the spin ~220 ms late (the margin is for a loaded machine).
    expect(elapsed).toBeLessThan(150);
    // Calls of longer limits after it do not lengthen the interval again.
    expect(await run(dog, () => "next", 5000)).toEqual({ value: "next", after: true });
    const t2 = performance.now();
    expect(await run(dog, spin, 20)).toEqual({ interrupted: true });
    expect(performance.now() - t2).toBeLessThan(150);
  });
});

describe("self-timed calls (a metered guest, whose refuel door reads the clock)", () => {
  const selfTimed = <T>(b: Backstop, fn: () => T, limitMs: number) => run(b, fn, limitMs, true);

  it("start no watchdog: one is started only when a call asks (`watch`), and watches the rest of that call", async () => {
    const dog = new InspectorWatchdog();
    const spin = await spinner();
    for (let i = 0; i < 100; i++) expect(await selfTimed(dog, () => i, 1000)).toEqual({ value: i, after: true });
    expect(dog.started).toBe(0);
    expect(dog.watching).toBe(false);
    const t = performance.now();
    const outcome = await selfTimed(
      dog,
      () => {
        dog.watch(100);
        dog.watch(100); // asked twice: one watchdog
        return spin();
      },
      100,
    );
    expect(outcome).toEqual({ interrupted: true });
    expect(performance.now() - t).toBeGreaterThanOrEqual(90);
    expect(dog.started).toBe(1);
    // The next calls end normally, watched by the watchdog now up.
    expect(await selfTimed(dog, () => "next", 1000)).toEqual({ value: "next", after: true });
    expect(await run(dog, () => "plain", 1000)).toEqual({ value: "plain", after: true });
  });

  it("are watched from their start while a watchdog is up (started by another call), without asking", async () => {
    const dog = new InspectorWatchdog();
    const spin = await spinner();
    expect(await run(dog, () => 1, 1000)).toEqual({ value: 1, after: true });
    expect(dog.watching).toBe(true);
    expect(await selfTimed(dog, spin, 100)).toEqual({ interrupted: true });
    expect(dog.started).toBe(1);
  });

  it("a call that asks after a watchdog's idle exit starts another", async () => {
    const dog = new InspectorWatchdog({ exitAfterMs: 30 });
    const spin = await spinner();
    expect(await run(dog, () => 1, 1000)).toEqual({ value: 1, after: true });
    for (let waited = 0; dog.watching && waited < 5000; waited += 10) await sleep(10);
    expect(dog.watching).toBe(false);
    expect(await selfTimed(dog, () => 2, 1000)).toEqual({ value: 2, after: true });
    expect(dog.started).toBe(1);
    const outcome = await selfTimed(
      dog,
      () => {
        dog.watch(100);
        return spin();
      },
      100,
    );
    expect(outcome).toEqual({ interrupted: true });
    expect(dog.started).toBe(2);
  });
});

describe("the watchdog's idle exit", () => {
  it("ends the watchdog after it idled, and the next guarded call starts another, which still interrupts", async () => {
    const dog = new InspectorWatchdog({ exitAfterMs: 50 });
    const spin = await spinner();
    expect(dog.watching).toBe(false); // none before the first guarded call
    expect(await run(dog, () => 1, 1000)).toEqual({ value: 1, after: true });
    expect(dog.watching).toBe(true);
    for (let waited = 0; dog.watching && waited < 5000; waited += 10) await sleep(10);
    expect(dog.watching).toBe(false);
    expect(await run(dog, spin, 100)).toEqual({ interrupted: true });
    expect(dog.started).toBe(2);
    expect(await run(dog, () => "next", 1000)).toEqual({ value: "next", after: true });
  });

  it("a call that begins just as the watchdog ends is watched all the same (one of the two swaps wins)", async () => {
    const dog = new InspectorWatchdog({ exitAfterMs: 20 });
    const spin = await spinner();
    for (let i = 0; i < 12; i++) {
      await sleep(5 + ((i * 7) % 40)); // before, around and after the exit (20 ms, polled every 10)
      expect(await run(dog, spin, 60)).toEqual({ interrupted: true });
    }
    expect(dog.started).toBeGreaterThan(1);
  });
});
