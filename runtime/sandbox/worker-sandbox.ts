/**
 * Runs a proxy guest in its own worker thread, so a guest that never returns can be stopped:
 * a synchronous wasm call cannot be interrupted in-thread, but `worker.terminate()` can end it.
 *
 * Cost: one `postMessage` hop each way per delivered message (tens of µs ping-pong on two
 * cores, a few µs when pipelined; `make bench` measures it) and one V8 isolate (~10 MB) per proxy.
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
import type { WorkerReply, WorkerRequest } from "./worker-protocol.js";

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

/** Deliveries handed to the worker at once (the rest wait in this thread, where a pause can hold them). */
const POSTED_WINDOW = 16;

/** How long a terminated worker may take to stop before the process-level fallback. */
const UNKILLABLE_AFTER_MS = 5_000;

export class WorkerSandbox implements ProxySandbox {
  private worker: Worker | null = null;
  private handlers: SandboxHandlers | null = null;
  /** Deliveries accepted and not yet completed: posted to the worker, or waiting to be. */
  private inFlight = 0;
  private posted = 0;
  /** Deliveries (texts) and pass-through messages (objects) not yet handed on, in order. */
  private readonly waiting: (string | object)[] = [];
  private pumpScheduled = false;
  private waitingHead = 0;
  /** The deliveries posted to the worker, in order (its `done` replies come in that order); undefined for a plain text. */
  private readonly postedDeliveries: (Delivery | undefined)[] = [];
  private paused = false;
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
          case "done": {
            const delivery = this.postedDeliveries.shift();
            this.completed();
            const over = this.budget.charge({ guestMs: reply.guestMs, messages: reply.output.length, units: reply.units });
            if (over) {
              this.fail({ kind: "budget", message: over.message });
              break;
            }
            if (reply.output.length > 0) handlers.output(reply.output, delivery);
            // Only now: a pass-through message waiting behind this delivery follows its output.
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
      };
      worker.postMessage(request);
    });
  }

  private onEarlyFailure: ((failure: SandboxFailure) => void) | null = null;

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
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  /**
   * Hands waiting deliveries to the worker, at most `POSTED_WINDOW` at a time: enough to keep the
   * worker busy, few enough that a pause takes effect within a few deliveries instead of after
   * everything already queued (a worker's queue cannot be taken back). A pass-through message
   * waits until every delivery before it has come back (its output first), and is handed back
   * from an event or a microtask, never from inside the router's call (`fromRouter`).
   */
  private pump(fromRouter = true): void {
    while (!this.paused && !this.dead && this.waitingHead < this.waiting.length) {
      const item = this.waiting[this.waitingHead];
      const delivery = item instanceof Delivery ? item : undefined;
      if (typeof item !== "string" && delivery === undefined) {
        if (this.posted > 0) return; // `done` of the last one pumps again
        if (fromRouter) return this.pumpSoon();
        this.take();
        this.congestion.update(--this.inFlight);
        this.handlers?.passed?.(item);
        continue;
      }
      if (this.posted >= POSTED_WINDOW) return;
      this.take();
      this.posted++;
      if (this.posted === 1) this.arm();
      this.postedDeliveries.push(delivery);
      const request: WorkerRequest = { type: "deliver", message: delivery?.text ?? (item as string) };
      this.worker!.postMessage(request);
    }
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
    await this.terminate();
  }

  private completed(): void {
    this.posted--;
    this.congestion.update(--this.inFlight);
    if (this.posted > 0) this.watchdog?.refresh();
    else this.disarm();
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
    this.terminate();
    if (this.onEarlyFailure) this.onEarlyFailure(failure);
    else this.handlers?.failed(failure);
  }
}
