/**
 * The backstop's fallback mechanism (`backstop.ts`), where the inspector watchdog cannot run: runs
 * a synchronous call with a time limit that holds whatever the call does. Fuel (`fuel.ts`) is what normally stops a guest; this bounds
 * what fuel cannot price (a host import slower than its price, a bulk operation slower than its
 * per-byte weight, a machine slower than the calibration).
 *
 * How: the call is made from a `vm.Script` run with `timeout`. Node then arms a watchdog thread
 * that calls V8's `TerminateExecution` when the time is up; V8 interrupts wasm at its loop and
 * function-entry stack checks, unwinds to the script, and Node turns the termination into an
 * error here (and cancels it, so the thread goes on). No `finally` of the interrupted code runs,
 * so what it was in the middle of must be thrown away: callers run only guest code and their own
 * bookkeeping under it, never the router.
 *
 * Cost: Node starts and joins that watchdog thread on every run (~20–90 µs on the reference
 * machine, measured in `wall-clock.test.ts`), so callers run a batch of calls under one limit.
 */
import vm from "node:vm";
import type { Backstop } from "./backstop.js";

export class WallClockExceeded extends Error {
  constructor(readonly limitMs: number) {
    super(`did not return within ${limitMs} ms`);
    this.name = "WallClockExceeded";
  }
}

/** The call in flight, read by the script when it starts (saved and restored, so runs may nest). */
let current: () => unknown = () => undefined;
/** Made on first use: a chain whose watchdog runs never needs them, and a context is ~1 ms of a start. */
let context: vm.Context | undefined;
let script: vm.Script | undefined;

/** Runs `fn`, interrupting it after `limitMs` of wall time with `WallClockExceeded`. */
export function withinWallClock<T>(fn: () => T, limitMs: number): T {
  const previous = current;
  current = fn;
  try {
    context ??= vm.createContext({ call: () => current() });
    script ??= new vm.Script("call()", { filename: "cordon:wall-clock" });
    return script.runInContext(context, { timeout: Math.max(1, Math.ceil(limitMs)) }) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") throw new WallClockExceeded(limitMs);
    throw error;
  } finally {
    current = previous;
  }
}

/** Unwinds the rest of a posted task after the vm fallback interrupted a call (the watchdog needs none). */
export const INTERRUPTED = Symbol("interrupted");

/** `vm`'s `timeout` around each guarded call; posted tasks run as microtasks. */
export const vmTimeoutBackstop: Backstop = {
  mechanism: "vm-timeout",
  post(task) {
    queueMicrotask(() => {
      try {
        task();
      } catch (error) {
        if (error !== INTERRUPTED) throw error;
      }
    });
  },
  guard(fn, limitMs, interrupted) {
    try {
      return withinWallClock(fn, limitMs);
    } catch (error) {
      if (!(error instanceof WallClockExceeded)) throw error;
      queueMicrotask(interrupted);
      throw INTERRUPTED;
    }
  },
  // Nothing can be started halfway through a call here: a self-timed call is watched from its start.
  guardSelfTimed(fn, limitMs, interrupted) {
    return vmTimeoutBackstop.guard(fn, limitMs, interrupted);
  },
  watch() {},
};
