/**
 * Runs a proxy guest in its own worker thread, so a guest that never returns can be stopped:
 * a synchronous wasm call cannot be interrupted in-thread, but `worker.terminate()` can end it.
 *
 * Cost: one `postMessage` hop each way per batch of deliveries (tens of µs ping-pong on two
 * cores; deliveries that queue while the worker is busy go together, up to `BATCH_UNITS`, so a
 * stream pays the hop once per batch; `make bench` measures it) and one V8 isolate (~10 MB) per proxy.
 *
 * The watchdog: while deliveries are in flight, a timer measures the time since the guest last
 * finished one; every completed delivery re-arms it (`refresh`). A guest that runs past
 * `receiveTimeoutMs` on one message is terminated and reported as a `timeout` failure.
 *
 * Budgets: the worker measures the guest's time in each `receive` and reports it, with what the
 * guest sent, in the delivery's `done`; `GuestBudget` sums them over a window, and a guest over
 * its CPU or output budget is terminated and reported as a `budget` failure naming the budget.
 *
 * Memory: the module is rewritten so its memory and tables cannot grow past their caps
 * (`module-caps.ts`), the guest's sends are bounded per message and per delivery before they are
 * decoded (`CanonicalHost`), and the worker's heap limit is sized from those caps
 * (`workerHeapLimitMiB`) — so nothing a guest does can push the worker's heap past its limit,
 * which V8 answers by aborting the whole process.
 */
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { packagePath } from "../package-root.js";
import { GuestBudget } from "./budget.js";
import type { LoadedComponent } from "./component-loader.js";
import { capModule } from "./module-caps.js";
import {
  Delivery,
  MAX_DELIVERED_UNITS,
  type ProxySandbox,
  QueueCongestion,
  type SandboxFailure,
  type SandboxHandlers,
  type SandboxLimits,
  workerHeapLimitMiB,
} from "./sandbox.js";
import type { DeliveryResult, WorkerReply, WorkerRequest } from "./worker-protocol.js";

/**
 * The compiled worker script: beside this module, or (from TypeScript sources under the tests, or
 * from the start bundle) the built copy in the package's dist/.
 */
function workerScript(): URL {
  const beside = new URL("./sandbox-worker.js", import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  const built = packagePath("dist", "runtime", "sandbox", "sandbox-worker.js");
  if (existsSync(built)) return pathToFileURL(built);
  throw new Error("sandbox worker script not found; run `make build` first");
}

/**
 * Deliveries handed to the worker and not yet back, at most (the rest wait in this thread): by
 * count, and by code units (one longer delivery goes alone). Enough that a stream's deliveries go
 * in large batches — each batch costs a wake-up of the worker's thread, ~30 µs here (P2 with 3
 * watching proxies, CPU per chunk: a window of 16 deliveries 38–41 µs, 64: 31–33, 256: 24–27).
 * A pause takes effect in the worker between two deliveries (the hold word), so what it cannot
 * take back is the delivery running, not the window.
 */
const POSTED_WINDOW = 256;
const POSTED_UNITS = 256 * 1024;
/**
 * Most code units of deliveries posted together (a longer one goes alone): the worker's heap is
 * sized for one delivered message (`workerHeapLimitMiB`), and a batch of small ones stays far below.
 */
const BATCH_UNITS = 64 * 1024;

/**
 * Worker sandboxes with deliveries posted and not yet back. While any is busy, the router's
 * deliveries are many (a stream crossing the chain): each waits for the rest of its routing step
 * and they go together. With every worker idle (a prompt's round trip, one hop at a time), a
 * delivery is posted at once: deferred, such a round trip through three workers took ~10 % longer
 * (what else its routing step did came first; ~7 µs per hop).
 */
let busyWorkers = 0;

/** How long a terminated worker may take to stop before the process-level fallback. */
const UNKILLABLE_AFTER_MS = 5_000;

/** The text a posted item carries: a plain text, or a delivery's. */
const textOf = (item: string | Delivery): string => (typeof item === "string" ? item : item.text);

export class WorkerSandbox implements ProxySandbox {
  private worker: Worker | null = null;
  private handlers: SandboxHandlers | null = null;
  /** Deliveries accepted and not yet completed: posted to the worker, or waiting to be. */
  private inFlight = 0;
  private posted = 0;
  /** Code units of the posted deliveries. */
  private postedUnits = 0;
  /** Deliveries (texts) and pass-through messages (objects) not yet handed on, in order. */
  private readonly waiting: (string | object)[] = [];
  private pumpScheduled = false;
  private waitingHead = 0;
  /** The deliveries posted to the worker, in order (its `done` replies come in that order). */
  private readonly postedItems: (string | Delivery)[] = [];
  private paused = false;
  /** Shared with the worker: [0] 1 while paused, so it stops between two deliveries, [1] the pause's number (`sandbox-worker.ts`). */
  private readonly hold = new Int32Array(new SharedArrayBuffer(8));
  private readonly congestion = new QueueCongestion((congested) => this.handlers?.congested?.(congested));
  private watchdog: NodeJS.Timeout | null = null;
  private dead = false;
  private readonly budget: GuestBudget;

  constructor(
    private readonly component: LoadedComponent,
    private readonly limits: SandboxLimits,
    /** WASI granted to the guest (`wasi:clocks`, `wasi:random`). */
    private readonly grants: readonly string[] = [],
    private readonly onUnkillable: () => void = () => {
      process.stderr.write(`[cordon] error: a proxy worker did not stop within ${UNKILLABLE_AFTER_MS} ms of being terminated; exiting\n`);
      process.exit(70);
    },
  ) {
    this.budget = new GuestBudget(limits);
  }

  start(handlers: SandboxHandlers): Promise<void> {
    this.handlers = handlers;
    // Compiled here, from the capped bytes, so the cap holds whatever the module declared.
    let module: WebAssembly.Module;
    try {
      const capped = capModule(this.component.coreBytes, {
        maxMemoryPages: this.limits.maxMemoryPages,
        maxTableElements: this.limits.maxTableElements,
      });
      module = new WebAssembly.Module(capped as Uint8Array<ArrayBuffer>);
    } catch (error) {
      this.dead = true;
      return Promise.reject(error);
    }
    const worker = new Worker(workerScript(), {
      // The JS side: sized to hold what the caps let a delivery make the host allocate (see
      // workerHeapLimitMiB). Wasm linear memory is not covered by it; the module rewrite caps that.
      resourceLimits: { maxOldGenerationSizeMb: workerHeapLimitMiB(this.limits), maxYoungGenerationSizeMb: 16 },
      stdout: true,
      stderr: true,
    });
    // Copied, not piped: a pipe adds listeners to process.stderr per worker (a warning at 5 proxies).
    const toStderr = (chunk: Buffer) => process.stderr.write(chunk);
    worker.stdout.on("data", toStderr);
    worker.stderr.on("data", toStderr);
    this.worker = worker;
    worker.unref();
    return new Promise<void>((resolve, reject) => {
      let started = false;
      const startTimer = setTimeout(() => {
        this.fail({ kind: "timeout", message: `instantiation did not finish within ${this.limits.startTimeoutMs} ms` });
      }, this.limits.startTimeoutMs);
      const onStartFailure = (failure: SandboxFailure) => {
        clearTimeout(startTimer);
        reject(new Error(failure.message));
      };
      this.onEarlyFailure = onStartFailure;
      worker.on("message", (reply: WorkerReply) => {
        switch (reply.type) {
          case "started":
            started = true;
            clearTimeout(startTimer);
            this.onEarlyFailure = null;
            resolve();
            break;
          case "held":
            // Waiting for this pause's end, not running the guest: its watchdog waits too (re-armed by `resume`).
            if (this.paused && reply.hold === Atomics.load(this.hold, 1)) this.disarm();
            break;
          case "done": {
            this.handOn(reply.results, handlers);
            // Only now: a pass-through message waiting behind these deliveries follows their output.
            this.pump(false);
            break;
          }
          case "failed":
            if (!started) clearTimeout(startTimer);
            this.fail({ kind: reply.kind, message: reply.message });
            break;
        }
      });
      worker.on("error", (error) => this.fail({ kind: "crash", message: `worker crashed: ${error.message}` }));
      worker.on("exit", (code) => this.fail({ kind: "crash", message: `worker exited with code ${code}` }));
      const request: WorkerRequest = {
        type: "start",
        module,
        encodings: this.component.encodings,
        limits: this.limits,
        grants: [...this.grants],
        hold: this.hold.buffer as SharedArrayBuffer,
      };
      worker.postMessage(request);
    });
  }

  private onEarlyFailure: ((failure: SandboxFailure) => void) | null = null;

  /** Completes posted deliveries with the worker's results, in order: charged to the budget, outputs handed on. */
  private handOn(results: readonly DeliveryResult[], handlers: SandboxHandlers): void {
    for (const result of results) {
      if (this.dead) return;
      const item = this.postedItems.shift()!;
      const delivery = item instanceof Delivery ? item : undefined;
      this.postedUnits -= textOf(item).length;
      this.completed();
      const over = this.budget.charge({ guestMs: result.guestMs, messages: result.output.length, units: result.units });
      if (over) return this.fail({ kind: "budget", message: over.message });
      if (result.output.length > 0) handlers.output(result.output, delivery);
    }
  }

  /**
   * Ends the worker. V8 interrupts running wasm for `terminate()`, but should a worker ever refuse
   * to die, the process-level fallback ends the whole conductor rather than leave a runaway thread
   * eating a core: `onUnkillable` (default: log and exit 70, which the editor reports).
   */
  private terminate(): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    const fallback = setTimeout(() => this.onUnkillable(), UNKILLABLE_AFTER_MS);
    fallback.unref();
    return worker.terminate().then(
      () => clearTimeout(fallback),
      () => clearTimeout(fallback),
    );
  }

  deliver(message: string | Delivery): void {
    if (this.dead || !this.worker) return;
    // Only a neighbour configured with a larger maxMessageUnits can send more than the heap is sized for.
    const most = Math.max(MAX_DELIVERED_UNITS, this.limits.maxMessageUnits);
    const units = typeof message === "string" ? message.length : message.text.length;
    if (units > most) {
      const failure = {
        kind: "fault" as const,
        message: `was given a message of ${units} code units, more than its sandbox holds (${most}); raise its limits.maxMessageUnits`,
      };
      queueMicrotask(() => this.fail(failure)); // not from inside the router's send
      return;
    }
    this.congestion.update(++this.inFlight);
    this.waiting.push(message);
    this.pump();
  }

  passThrough(message: object): void {
    if (this.dead || !this.worker) return;
    this.congestion.update(++this.inFlight);
    this.waiting.push(message);
    this.pumpSoon();
  }

  /** Every delivery has come back from the worker with its output. */
  idle(): boolean {
    return this.inFlight === 0;
  }

  pause(): void {
    this.paused = true;
    Atomics.add(this.hold, 1, 1);
    Atomics.store(this.hold, 0, 1);
    Atomics.notify(this.hold, 0); // a worker held by an earlier pause says it is held by this one
  }

  resume(): void {
    this.paused = false;
    Atomics.store(this.hold, 0, 0);
    Atomics.notify(this.hold, 0);
    // A delivery still running kept its clock; one held gets a fresh one.
    if (this.posted > 0 && !this.dead && !this.watchdog) this.arm();
    this.pump();
  }

  /**
   * Hands waiting deliveries to the worker, within the window (`POSTED_WINDOW`, `POSTED_UNITS`):
   * enough to keep the worker busy, little enough that a pause takes effect soon instead of after
   * everything already queued (a worker's queue cannot be taken back). The deliveries waiting
   * together go in one message (up to `BATCH_UNITS`): a stream then pays the thread hop per batch,
   * not per delivery. A pass-through message waits until every delivery before it has come back
   * (its output first), and is handed back from an event or a microtask, never from inside the
   * router's call (`fromRouter`). A delivery from the router while any worker is busy
   * (`busyWorkers`) is posted from a microtask too, so the deliveries of one routing step go
   * together; otherwise it goes at once.
   */
  private pump(fromRouter = true): void {
    const batch: string[] = [];
    let units = 0;
    while (!this.paused && !this.dead && this.waitingHead < this.waiting.length) {
      const item = this.waiting[this.waitingHead];
      if (typeof item !== "string" && !(item instanceof Delivery)) {
        if (batch.length > 0 || this.posted > 0) break; // the `done` of what is posted pumps again
        if (fromRouter) return this.pumpSoon();
        this.take();
        this.congestion.update(--this.inFlight);
        this.handlers?.passed?.(item);
        continue;
      }
      if (fromRouter && busyWorkers > 0) {
        // Busy now (perhaps by this very batch): the rest go from the microtask, after what is batched.
        this.pumpSoon();
        break;
      }
      const text = textOf(item);
      if (this.posted >= POSTED_WINDOW || (this.posted > 0 && this.postedUnits + text.length > POSTED_UNITS)) break;
      if (batch.length > 0 && units + text.length > BATCH_UNITS) {
        this.post(batch);
        batch.length = 0;
        units = 0;
      }
      this.take();
      this.posted++;
      if (this.posted === 1) {
        this.arm();
        this.counted(true);
      }
      this.postedItems.push(item);
      this.postedUnits += text.length;
      batch.push(text);
      units += text.length;
    }
    if (batch.length > 0) this.post(batch);
  }

  private post(messages: string[]): void {
    // Cloned by postMessage now: the caller may reuse the array.
    const request: WorkerRequest = { type: "deliver", messages };
    this.worker!.postMessage(request);
  }

  private take(): void {
    this.waitingHead++;
    if (this.waitingHead === this.waiting.length) {
      this.waiting.length = 0;
      this.waitingHead = 0;
    }
  }

  private pumpSoon(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump(false);
    });
  }

  async stop(): Promise<void> {
    if (this.dead) return;
    this.dead = true;
    this.disarm();
    this.counted(false);
    await this.terminate();
  }

  private completed(): void {
    this.posted--;
    this.congestion.update(--this.inFlight);
    if (this.posted > 0) this.watchdog?.refresh();
    else {
      this.disarm();
      this.counted(false);
    }
  }

  /** Whether this sandbox counts in `busyWorkers`. */
  private busy = false;
  private counted(busy: boolean): void {
    if (this.busy === busy) return;
    this.busy = busy;
    busyWorkers += busy ? 1 : -1;
  }

  private arm(): void {
    if (this.watchdog) this.watchdog.refresh();
    else {
      this.watchdog = setTimeout(
        () => this.fail({ kind: "timeout", message: `receive did not return within ${this.limits.receiveTimeoutMs} ms` }),
        this.limits.receiveTimeoutMs,
      );
      this.watchdog.unref();
    }
  }

  private disarm(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
  }

  private fail(failure: SandboxFailure): void {
    if (this.dead) return;
    this.dead = true;
    this.disarm();
    this.counted(false);
    this.terminate();
    if (this.onEarlyFailure) this.onEarlyFailure(failure);
    else this.handlers?.failed(failure);
  }
}
