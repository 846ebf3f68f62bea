/**
 * The wall-clock backstop of the in-thread sandbox: a guest call still running on the main thread
 * past its limit is interrupted, whatever it is doing. Fuel (`fuel.ts`) is what normally stops a
 * guest, and the clock its host reads at the refuel door stops one whose work fuel misprices (a
 * machine slower than the calibration); this bounds what neither sees, one step between two fuel
 * checks that runs long (a host import slower than its price, a bulk operation slower than its
 * per-byte weight). A call that reads the clock itself is guarded with `guardSelfTimed`: no
 * watchdog is started for it unless it asks (`watch`).
 *
 * Two mechanisms behind one interface:
 * - `watchdog` (`inspector-watchdog.ts`, the default): a watchdog worker that reads a shared word
 *   the main thread sets around each guarded call, and past the deadline asks the main thread's
 *   inspector to `Runtime.terminateExecution`. ~15 ns per guarded call on the main thread.
 * - `vm-timeout` (`wall-clock.ts`), when the inspector is unavailable (Node built without it, or
 *   Cordon itself running in a worker, where `connectToMainThread` would reach the wrong thread):
 *   Node's `vm` timeout, which starts and joins a watchdog thread per call (~20–90 µs).
 *
 * Contract, the same for both: guarded calls run only inside a task given to `post`, and only guest
 * code and the caller's own bookkeeping run under `guard` — never the router. When a call is
 * interrupted nothing after it in that task runs (no `catch` or `finally` of the interrupted frames
 * either), so what it was in the middle of (the guest instance) must be thrown away; `interrupted`
 * is then called from a later task.
 */
import { isMainThread } from "node:worker_threads";
import { InspectorWatchdog } from "./inspector-watchdog.js";
import { vmTimeoutBackstop } from "./wall-clock.js";

export { vmTimeoutBackstop };

export interface Backstop {
  readonly mechanism: "watchdog" | "vm-timeout";
  /** Runs `task` later, at the bottom of its own event-loop task (where an interruption unwinds cleanly), in order. */
  post(task: () => void): void;
  /**
   * Inside a posted task: runs `fn`. If it is still running `limitMs` after it began it is
   * interrupted: nothing after it in this task runs, and `interrupted` is called from a later task.
   */
  guard<T>(fn: () => T, limitMs: number, interrupted: () => void): T;
  /**
   * `guard` for a call that reads the clock itself while it runs long (a metered guest: its fuel
   * comes in slices through the refuel door, `fuel.ts` `openRefuelDoor`, whose host stops it past
   * its limit). Nothing is started for it: a watchdog already up watches it as any call, and
   * `watch`, called from inside it, starts one for the rest of it.
   */
  guardSelfTimed<T>(fn: () => T, limitMs: number, interrupted: () => void): T;
  /**
   * Inside `guardSelfTimed`: the call has run long (or is about to run a large step); watch it from
   * now on, for at most `leftMs` more. Nothing if it is watched already.
   */
  watch(leftMs: number): void;
}

let chosen: Backstop | null = null;

/** The process's backstop: the inspector watchdog where it can reach this thread, else the vm timeout. */
export function backstop(): Backstop {
  if (chosen) return chosen;
  chosen = vmTimeoutBackstop;
  if (process.env.CORDON_BACKSTOP !== "vm-timeout" && process.features.inspector && isMainThread) {
    try {
      chosen = new InspectorWatchdog();
    } catch {
      // no inspector after all: the vm timeout, which needs none
    }
  }
  return chosen;
}
