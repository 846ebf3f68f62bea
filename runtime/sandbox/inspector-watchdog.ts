/**
 * The backstop's default mechanism (`backstop.ts`): a watchdog worker interrupts the main thread
 * through its inspector when a guarded call runs past its deadline.
 *
 * The handshake: one shared word `gen << 2 | phase`. The main thread writes the deadline, then
 * `RUNNING` with a new generation when a guarded call begins, and compare-and-swaps it back to
 * `IDLE` when it returns. The watchdog compare-and-swaps `RUNNING → KILLING` for the generation it
 * saw past its deadline, and only then posts `Runtime.terminateExecution` to the main thread's
 * inspector session (`connectToMainThread`), which V8 delivers as an interrupt at the next stack
 * check of the running code (wasm loops and function entries have them). So a termination is only
 * ever sent for a call still in flight; if the call returns just after the watchdog won the swap,
 * `end` sees `KILLING` and spins until the termination lands there — it must never land in the
 * caller. V8 cancels the termination once the stack has unwound to the task's bottom; the
 * watchdog's message naming the generation is then read, and its `interrupted` callback runs.
 *
 * Why a dedicated `MessagePort` task: an interrupted posted task must be the bottom of the stack
 * and leave nothing half-run behind it. A termination inside a `setImmediate` or timer task
 * crashes Node ("async hook stack corrupted"), and inside a promise job drops the other
 * microtasks queued with it; a `MessagePort` 'message' task unwinds cleanly.
 *
 * Cost on the main thread: three atomic operations per guarded call and no clock read (~50 ns; ~0.6 µs on a loaded 2-core machine),
 * and a `postMessage` to schedule a batch of posted tasks (tasks posted meanwhile, or by the batch's
 * own tasks, share it). The watchdog polls the word while calls happen, every eighth of the
 * shortest limit any guarded call has had (`pollFor`: at least `MIN_POLL_MS`, at most
 * `MAX_POLL_MS`; word [1]): with the default limits 4 wake-ups a second instead of 100, each a
 * futex wait and a thread switch (polling every 10 ms, the watchdog's thread took 12 µs of CPU
 * per 100 KB P3 prompt; measured). A call with a shorter limit than any before lowers the
 * interval and wakes the watchdog (one `Atomics.notify` per new shortest limit), so no call waits
 * on a poll longer than its own limit allows. Interrupt latency past the limit: at most the poll
 * interval, an eighth of the limit or 10 ms (the watchdog starts a call's clock when it first sees
 * it), plus the time V8 takes to reach a stack check.
 *
 * Started when needed, ended when idle: a watchdog is a worker, an isolate and a Node environment
 * of its own, ~10 MiB of the process's memory (7 of it returned when it ends; measured). After
 * `EXIT_AFTER_MS` without a guarded call it swaps `IDLE → GONE` and ends; the next guarded call,
 * finding `GONE` where it swaps `IDLE → RUNNING`, starts a new watchdog with that call already in
 * flight — unless the call is self-timed (`guardSelfTimed`: a metered guest whose refuel door
 * reads the clock), which runs unwatched until it asks (`watch`, from the door, once it has run
 * long), and then gets a watchdog for the rest of it. Exactly one of the two swaps wins, so no
 * call that is not self-timed ever runs with nobody watching it. A new watchdog takes ~30 ms to
 * start watching (~1 ms of it on the main thread, ~35 ms of CPU in all), which only delays an
 * interruption by that much, as the first one's start always did; restarts cost at most that per
 * `EXIT_AFTER_MS` of a chain's activity.
 */
import { MessageChannel, Worker } from "node:worker_threads";
import { createLogger } from "../log.js";
import type { Backstop } from "./backstop.js";
import { INTERRUPTED, vmTimeoutBackstop } from "./wall-clock.js";

const IDLE = 0;
const RUNNING = 1;
const KILLING = 2;
/** The watchdog has ended (idle): the next guarded call starts another. */
const GONE = 3;
/** The watchdog's poll interval, and so its overshoot past a deadline, is at least this (ms)… */
const MIN_POLL_MS = 10;
/** …and at most this: an eighth of the shortest limit a guarded call has had, within these bounds. */
const MAX_POLL_MS = 250;
/** How often the watchdog looks at the word while calls happen, when no call's limit is below `limitMs`. */
const pollFor = (limitMs: number): number => Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Math.floor(limitMs / 8)));
/**
 * Idle time after which the watchdog ends. Restarting costs ~35 ms of CPU, so chains busy with
 * gaps just over this pay at most a few percent of a core; one idle for longer holds ~7 MiB less.
 */
const EXIT_AFTER_MS = 1_000;
/** Longest a batch of posted tasks runs before the rest go to the next task (I/O runs between). */
const BATCH_MS = 4;
/**
 * The watchdog's old-space limit. Its loop allocates next to nothing: Node's own bootstrap and the
 * inspector session hold ~4.2 MiB of old space (measured). A worker otherwise inherits the main
 * thread's limit (4 GiB here), and V8 sizes the heap it starts with by it: with a limit, the
 * process holds ~0.8 MiB less while the watchdog is up (10.7 → 9.9 MiB for the first sandbox,
 * `bench/sandbox-memory.ts`, 5 interleaved runs; 16, 32 and 64 MiB all save the same). A
 * watchdog that ran out anyway would end, and calls fall back to the vm timeout (`lost`).
 */
const WATCHDOG_OLD_SPACE_MB = 16;
/** How long the process's exit waits for a watchdog to disconnect from the main thread's inspector. */
const EXIT_WAIT_MS = 200;

interface WatchdogData {
  shared: SharedArrayBuffer;
  exitAfterMs: number;
}

/**
 * The watchdog worker's body, run from its source text (`eval`): it must not use anything from
 * this module's scope. Words: [0] = gen << 2 | phase, [1] = the poll interval in ms (`pollFor`),
 * [2] = the limit of the call in flight, in ms (the main thread reads no clock), [3] = 1 once the process exits, [4] = 1 once this watchdog's
 * session is disconnected (Node waits at exit, saying "Waiting for the debugger to
 * disconnect...", for any session still connected to the main thread).
 */
function watch(data: WatchdogData): void {
  // `getBuiltinModule`, not `require`: a bundler rewrites `require` in this body to a helper of its
  // own, which the worker's copy of the source does not have (build/bundle.mjs).
  const { Session } = process.getBuiltinModule("node:inspector");
  const { parentPort } = process.getBuiltinModule("node:worker_threads");
  const session = new Session();
  session.connectToMainThread();
  parentPort!.postMessage("up");
  const word = new Int32Array(data.shared);
  const now = () => performance.now();
  const leave = () => {
    session.disconnect();
    Atomics.store(word, 4, 1);
    Atomics.notify(word, 4);
  };
  const loop = (): void => {
    let seen = -1;
    let idleSince = now();
    let watched = -1;
    let deadline = 0;
    for (;;) {
      if (Atomics.load(word, 3) === 1) return leave();
      const state = Atomics.load(word, 0);
      if ((state & 3) === 1) {
        const t = now();
        if (state !== watched) {
          // A new call: its limit runs from when it is first seen (at most a poll interval after it began).
          watched = state;
          deadline = t + Atomics.load(word, 2);
        }
        if (deadline > t) {
          Atomics.wait(word, 0, state, Math.min(deadline - t, Atomics.load(word, 1)));
          continue;
        }
        // Only a call still in flight is terminated: the swap fails if it has returned.
        if (Atomics.compareExchange(word, 0, state, (state & ~3) | 2) !== state) continue;
        session.post("Runtime.terminateExecution");
        // The main thread reads this only once the interrupted task is over (it cannot run
        // another before), so it may be sent now; the reply is not awaited.
        parentPort!.postMessage(state >>> 2);
        setTimeout(loop, 0);
        return;
      }
      const t = now();
      if (state !== seen) {
        seen = state;
        idleSince = t;
      }
      if (t - idleSince < data.exitAfterMs || (state & 3) !== 0) {
        Atomics.wait(word, 0, state, Atomics.load(word, 1));
        continue;
      }
      // Idle long enough: gone, unless a call began meanwhile (then the swap fails and it is watched).
      if (Atomics.compareExchange(word, 0, state, (state & ~3) | 3) === state) return leave();
    }
  };
  loop();
}

/** One watchdog worker and the words it shares with the main thread. */
interface Dog {
  word: Int32Array;
}

export interface InspectorWatchdogOptions {
  /** Idle time after which the watchdog ends (tests); default `EXIT_AFTER_MS`. */
  exitAfterMs?: number;
}

export class InspectorWatchdog implements Backstop {
  readonly mechanism = "watchdog";
  /** The current watchdog; none until the first guarded call (its word reads `GONE`). */
  private current: Dog = { word: new Int32Array(new SharedArrayBuffer(20)).fill(GONE, 0, 1) };
  /** Watchdogs not yet ended, the process's exit waits for each to disconnect. */
  private readonly live = new Set<Dog>();
  private gen = 0;
  /** Watchdogs started so far (tests read it). */
  started = 0;
  /** A self-timed call in flight that no watchdog watches: its running word, for `watch`; else -1. */
  private unwatched = -1;
  /** The guarded call in flight (or interrupted, until the watchdog's reply). */
  private interrupted: (() => void) | null = null;
  private readonly channel = new MessageChannel();
  /** Emptied by a new array, not `length = 0` (a call into V8's runtime): it empties at nearly every batch. */
  private tasks: (() => void)[] = [];
  private head = 0;
  private posted = false;
  /** A watchdog died (it should not): guarded calls fall back to the vm timeout. */
  private lost = false;
  private readonly exitAfterMs: number;
  /** The shortest limit a guarded call has had (ms), and the poll interval it sets (`pollFor`). */
  private shortestLimit = Number.POSITIVE_INFINITY;
  private pollMs = MAX_POLL_MS;

  constructor(options: InspectorWatchdogOptions = {}) {
    this.exitAfterMs = options.exitAfterMs ?? EXIT_AFTER_MS;
    this.channel.port1.on("message", this.runTasks);
    this.channel.port1.unref();
    // Synchronous, as an exit handler must be: each watchdog still connected is told, disconnects, and says so.
    process.once("exit", () => {
      for (const { word } of this.live) {
        Atomics.store(word, 3, 1);
        Atomics.notify(word, 0);
      }
      for (const { word } of this.live) Atomics.wait(word, 4, 0, EXIT_WAIT_MS);
    });
  }

  /** Whether a watchdog worker is up (started and not yet ended). */
  get watching(): boolean {
    return this.live.size > 0;
  }

  post(task: () => void): void {
    this.tasks.push(task);
    if (this.posted) return;
    this.posted = true;
    // Kept alive while tasks wait, so a process with nothing else to do still runs them.
    this.channel.port1.ref();
    this.channel.port2.postMessage(null);
  }

  guard<T>(fn: () => T, limitMs: number, interrupted: () => void): T {
    return this.guarded(fn, limitMs, interrupted, false);
  }

  guardSelfTimed<T>(fn: () => T, limitMs: number, interrupted: () => void): T {
    return this.guarded(fn, limitMs, interrupted, true);
  }

  watch(leftMs: number): void {
    const running = this.unwatched;
    if (running === -1) return;
    this.unwatched = -1;
    this.startWatchdog(running, Math.max(1, leftMs));
  }

  private guarded<T>(fn: () => T, limitMs: number, interrupted: () => void, selfTimed: boolean): T {
    if (this.lost) return vmTimeoutBackstop.guard(fn, limitMs, interrupted);
    const idle = (this.gen << 2) | IDLE;
    this.gen = (this.gen + 1) & 0x1fffffff;
    const running = (this.gen << 2) | RUNNING;
    const word = this.current.word;
    word[2] = Math.ceil(limitMs); // published by the swap below
    if (limitMs < this.shortestLimit) this.shorterLimit(word, limitMs);
    this.interrupted = interrupted;
    const was = Atomics.compareExchange(word, 0, idle, running);
    if (was !== idle) {
      // Not reached: guarded calls do not nest.
      if ((was & 3) !== GONE) Atomics.store(word, 0, running);
      // None is up: a self-timed call runs unwatched unless it asks (`watch`); any other starts one.
      else if (selfTimed) this.unwatched = running;
      else this.startWatchdog(running, limitMs);
    }
    try {
      return fn();
    } finally {
      // Not reached when interrupted: V8 runs no finally under termination.
      if (this.unwatched !== -1)
        this.unwatched = -1; // it ran with no watchdog, and none was started
      else {
        // The watchdog watching it: the one up when it began, or the one `watch` started.
        const watched = this.current.word;
        if (Atomics.compareExchange(watched, 0, running, (this.gen << 2) | IDLE) !== running) {
          // The watchdog won the swap: its termination is on the way and must land here.
          while (Atomics.load(watched, 0) === ((this.gen << 2) | KILLING));
        }
      }
      this.interrupted = null;
    }
  }

  /**
   * A call with a shorter limit than any before: the watchdog polls more often from now on, and is
   * woken to read the new interval at once (it may be waiting out a longer one).
   */
  private shorterLimit(word: Int32Array, limitMs: number): void {
    this.shortestLimit = limitMs;
    this.pollMs = pollFor(limitMs);
    Atomics.store(word, 1, this.pollMs);
    Atomics.notify(word, 0);
  }

  /**
   * Runs the posted tasks in order, for up to BATCH_MS; the rest get a task of their own. `posted`
   * stays set while they run, so a task posted meanwhile (a guest's output delivered to the next
   * proxy) joins this batch without a message of its own, which would only wake an empty batch.
   * An interrupted batch runs no `finally`: the watchdog's reply resets it (`startWatchdog`).
   */
  private readonly runTasks = (): void => {
    const until = performance.now() + BATCH_MS;
    try {
      while (this.head < this.tasks.length) {
        const task = this.tasks[this.head++];
        if (this.head === this.tasks.length) {
          this.tasks = [];
          this.head = 0;
        }
        try {
          task();
        } catch (error) {
          if (error !== INTERRUPTED) throw error; // the vm fallback's unwinding (after the watchdog was lost)
        }
        if (this.head < this.tasks.length && performance.now() >= until) break;
      }
    } finally {
      this.posted = false;
      this.afterTasks();
    }
  };

  private afterTasks(): void {
    if (this.head < this.tasks.length) {
      if (!this.posted) {
        this.posted = true;
        this.channel.port2.postMessage(null);
      }
    } else if (!this.posted) this.channel.port1.unref();
  }

  /**
   * Starts a watchdog with the call `running` already in flight (the last one ended, or there was
   * none yet): it starts that call's clock when it first sees it, as for any call. Returns its word.
   */
  private startWatchdog(running: number, limitMs: number): Int32Array {
    const shared = new SharedArrayBuffer(20);
    const dog: Dog = { word: new Int32Array(shared) };
    const { word } = dog;
    word[0] = running;
    word[2] = Math.ceil(limitMs);
    word[1] = this.pollMs;
    const data: WatchdogData = { shared, exitAfterMs: this.exitAfterMs };
    // `__name`: the helper a TypeScript transform with keepNames (tsx, some test runners) may call in the source.
    const source = `const __name = (f) => f; (${watch.toString()})(process.getBuiltinModule("node:worker_threads").workerData)`;
    const worker = new Worker(source, { eval: true, workerData: data, resourceLimits: { maxOldGenerationSizeMb: WATCHDOG_OLD_SPACE_MB } });
    this.current = dog;
    this.live.add(dog);
    this.started++;
    worker.on("message", (gen: number | "up") => {
      if (gen === "up") {
        createLogger().debug("the backstop's watchdog is watching (a guest call ran long)");
        return;
      }
      if (Atomics.load(word, 0) !== ((gen << 2) | KILLING)) return;
      Atomics.store(word, 0, (gen << 2) | IDLE);
      const interrupted = this.interrupted;
      this.interrupted = null;
      this.posted = false; // the interrupted batch did not get to reset it
      interrupted?.();
      this.afterTasks();
    });
    worker.on("error", (error) =>
      process.stderr.write(`[cordon] error: the backstop's watchdog failed (${error.message}); using vm timeouts instead\n`),
    );
    worker.on("exit", () => {
      this.live.delete(dog);
      // Ending idle is the watchdog's to do (it swapped in GONE first); anything else is a loss.
      if ((Atomics.load(word, 0) & 3) !== GONE) this.lost = true;
    });
    worker.unref();
    return word;
  }
}
