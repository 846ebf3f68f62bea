/**
 * Runs a proxy guest in the conductor's own thread: no worker, no extra V8 isolate, no
 * `postMessage` hop per message. What makes this safe is fuel (`fuel.ts`): the guest's code is
 * rewritten at load so that it traps when it has run its budget, so a guest that never returns
 * stops itself in the same thread. Memory is capped by the same module rewrite as in a worker.
 *
 * Budgets: memory and tables are capped by rewriting the module (`module-caps.ts`), sends per
 * message and per delivery by `CanonicalHost`, guest time and output over a window by
 * `GuestBudget` (charged after each delivery with the time measured around `receive`, exact here
 * since it runs in this thread; a guest over it fails with kind `budget`).
 *
 * Fuel: `receiveTimeoutMs` and `startTimeoutMs` are turned into fuel at `FUEL_PER_MS` units
 * per millisecond — about the rate of a tight loop on a 2-core development machine, so ordinary
 * code gets at least the time the worker watchdog would give it (slower, memory-heavy code gets
 * more wall time for the same fuel). Each delivery starts with a full budget; the start function
 * has the start budget. A guest that uses it up is reported as a `timeout` failure.
 *
 * Order and re-entry: `deliver` only queues; the queue is drained from a microtask, one delivery
 * at a time, and each delivery's output is handed to the conductor after `receive` returns —
 * so the router is never re-entered synchronously and output keeps delivery order, as with the
 * worker. A drain yields to the event loop (`setImmediate`) after `SLICE_MS`, so I/O goes on while
 * a slow guest works through its queue and the queue's high/low-water marks apply as before.
 *
 * The trade: a guest's `receive` runs on the conductor's thread, so while it runs (at most its
 * fuel budget) nothing else is routed. The worker sandbox does not have that cost and stays
 * selectable per proxy (`"isolation": "worker"`).
 */

import { GuestBudget } from "./budget.js";
import { CanonicalHost, describe, GuestFault, RECEIVE_EXPORT } from "./canonical-host.js";
import type { LoadedComponent } from "./component-loader.js";
import { FuelUnsupported, instrumentFuel, isFuelTrap } from "./fuel.js";
import { capModule } from "./module-caps.js";
import { type ProxySandbox, QueueCongestion, type SandboxFailure, type SandboxHandlers, type SandboxLimits } from "./sandbox.js";

/** Fuel units per millisecond of a limit (a tight wasm loop runs ~3–6 M/ms on the reference machine). */
const FUEL_PER_MS = 5_000_000;
/** Longest a drain runs before yielding to the event loop. */
const SLICE_MS = 4;

export interface ThreadSandboxOptions {
  /** Fuel per delivery; default `receiveTimeoutMs × FUEL_PER_MS`. */
  maxFuelPerDelivery?: bigint;
  /** Fuel for the start function; default `startTimeoutMs × FUEL_PER_MS`. */
  maxFuelAtStart?: bigint;
}

interface Prepared {
  /** Compiled off the main thread (`WebAssembly.compile`), so several proxies and the agent start in parallel. */
  module: Promise<WebAssembly.Module>;
  outOfFuel: number;
}

/** Metered, capped, compiled modules by component hash and budgets: a restart reuses its module. */
const prepared = new Map<string, Prepared>();

export class ThreadSandbox implements ProxySandbox {
  private readonly prepared: Prepared;
  private startError: Error | null = null;
  private readonly budget: GuestBudget;
  private readonly deliveryFuel: bigint;
  private readonly startFuel: bigint;
  private host: CanonicalHost | null = null;
  private handlers: SandboxHandlers | null = null;
  /** Deliveries (texts for the guest) and pass-through messages (objects), in order. */
  private readonly queue: (string | object)[] = [];
  /** Backpressure from the conductor: no delivery starts while set. */
  private paused = false;
  private head = 0;
  private scheduled = false;
  private readonly congestion = new QueueCongestion((congested) => this.handlers?.congested?.(congested));
  private dead = false;
  /** Milliseconds the guest has run in this thread (start and deliveries). */
  cpuMs = 0;

  /**
   * Meters and compiles the module now, so an unsupported one is known before anything starts:
   * throws `FuelUnsupported` (the factory then uses a worker), or `MemoryCapError` as the worker would.
   */
  constructor(
    private readonly component: LoadedComponent,
    private readonly limits: SandboxLimits,
    private readonly grants: readonly string[] = [],
    options: ThreadSandboxOptions = {},
  ) {
    this.deliveryFuel = options.maxFuelPerDelivery ?? BigInt(limits.receiveTimeoutMs) * BigInt(FUEL_PER_MS);
    this.startFuel = options.maxFuelAtStart ?? BigInt(limits.startTimeoutMs) * BigInt(FUEL_PER_MS);
    this.budget = new GuestBudget(limits);
    const key = `${component.sha256}:${limits.maxMemoryPages}:${limits.maxTableElements}:${this.startFuel}:${this.deliveryFuel}`;
    let entry = prepared.get(key);
    if (!entry) {
      let capped: Uint8Array;
      try {
        capped = capModule(component.coreBytes, { maxMemoryPages: limits.maxMemoryPages, maxTableElements: limits.maxTableElements });
      } catch (error) {
        // Reported by start(), as the worker sandbox does.
        this.startError = error as Error;
        this.prepared = { module: Promise.resolve(null as never), outOfFuel: -1 };
        return;
      }
      const fuel = instrumentFuel(capped, {
        startFuel: this.startFuel,
        deliveryFuel: this.deliveryFuel,
        refillOn: [RECEIVE_EXPORT, "cabi_realloc"],
      });
      const bytes = fuel.bytes as Uint8Array<ArrayBuffer>;
      if (!WebAssembly.validate(bytes)) throw new FuelUnsupported("the metered module does not validate");
      const module = WebAssembly.compile(bytes);
      module.catch(() => prepared.delete(key));
      entry = { module, outOfFuel: fuel.outOfFuelFunction };
      prepared.set(key, entry);
    }
    this.prepared = entry;
  }

  async start(handlers: SandboxHandlers): Promise<void> {
    this.handlers = handlers;
    if (this.dead) throw new Error("the sandbox was stopped");
    if (this.startError) {
      this.dead = true;
      throw this.startError;
    }
    const module = await this.prepared.module;
    if (this.dead) throw new Error("the sandbox was stopped");
    const t = performance.now();
    try {
      this.host = new CanonicalHost(module, {
        encodings: this.component.encodings,
        maxMessageUnits: this.limits.maxMessageUnits,
        maxOutputUnitsPerDelivery: this.limits.maxOutputUnitsPerDelivery,
        maxSendsPerReceive: this.limits.maxSendsPerReceive,
        grants: this.grants,
      });
    } catch (error) {
      this.dead = true;
      const failure = this.failureOf(error, "instantiation", this.startFuel, this.limits.startTimeoutMs, performance.now() - t);
      throw new Error(failure.message);
    } finally {
      this.cpuMs += performance.now() - t;
    }
  }

  deliver(message: string): void {
    this.enqueue(message);
  }

  passThrough(message: object): void {
    this.enqueue(message);
  }

  private enqueue(message: string | object): void {
    if (this.dead || !this.host) return;
    this.queue.push(message);
    this.congestion.update(this.queue.length - this.head);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.drain);
    }
  }

  /** Deliveries run in this thread and their output is handed over as each returns: idle once the queue is empty. */
  idle(): boolean {
    return this.head === this.queue.length;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    if (!this.scheduled && this.head < this.queue.length) {
      this.scheduled = true;
      queueMicrotask(this.drain);
    }
  }

  async stop(): Promise<void> {
    this.dead = true;
    this.host = null;
    this.queue.length = 0;
    this.head = 0;
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    const until = performance.now() + SLICE_MS;
    while (!this.dead && !this.paused && this.head < this.queue.length) {
      const message = this.queue[this.head++];
      if (this.head === this.queue.length) {
        this.queue.length = 0;
        this.head = 0;
      }
      if (typeof message !== "string") {
        // Passes the guest by, in its turn.
        this.congestion.update(this.queue.length - this.head);
        this.handlers?.passed?.(message);
        continue;
      }
      const host = this.host!;
      const t = performance.now();
      let output: string[];
      try {
        output = host.receive(message);
      } catch (error) {
        const now = performance.now();
        this.cpuMs += now - t;
        return this.fail(this.failureOf(error, "receive", this.deliveryFuel, this.limits.receiveTimeoutMs, now - t));
      }
      const now = performance.now();
      this.cpuMs += now - t;
      const over = this.budget.charge({ guestMs: now - t, messages: output.length, units: host.lastOutputUnits });
      if (over) return this.fail({ kind: "budget", message: over.message });
      this.congestion.update(this.queue.length - this.head);
      if (output.length > 0) this.handlers?.output(output);
      if (now >= until && this.head < this.queue.length && !this.dead) {
        this.scheduled = true;
        setImmediate(this.drain);
        return;
      }
    }
  };

  private failureOf(error: unknown, what: string, fuel: bigint, limitMs: number, ranMs: number): SandboxFailure {
    if (isFuelTrap(error, this.prepared.outOfFuel)) {
      return {
        kind: "timeout",
        message: `${what} used its fuel budget of ${fuel} units${what === "receive" ? " on one message" : ""} (≈ ${limitMs} ms of work; it ran ${Math.round(ranMs)} ms)`,
      };
    }
    return { kind: error instanceof GuestFault ? "fault" : "trap", message: describe(error) };
  }

  private fail(failure: SandboxFailure): void {
    if (this.dead) return;
    this.dead = true;
    this.host = null;
    this.queue.length = 0;
    this.head = 0;
    this.handlers?.failed(failure);
  }
}
