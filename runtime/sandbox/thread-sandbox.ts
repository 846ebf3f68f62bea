/**
 * Runs a proxy guest in the conductor's own thread: no worker, no extra V8 isolate, no
 * `postMessage` hop per message. Two things stop a guest that would hold the thread: fuel
 * (`fuel.ts`: the code is rewritten at load to charge its work to a counter and trap when it is
 * spent), and a wall-clock backstop (`wall-clock.ts`) for whatever fuel misprices. Memory is
 * capped by the same module rewrite as in a worker.
 *
 * Budgets: memory and tables are capped by rewriting the module (`module-caps.ts`), sends per
 * message and per delivery by `CanonicalHost`, guest time and output over a window by
 * `GuestBudget` (charged after each delivery with the time measured around `receive`, exact here
 * since it runs in this thread; a guest over it fails with kind `budget`).
 *
 * Fuel: `receiveTimeoutMs` and `startTimeoutMs` are turned into fuel at `FUEL_PER_MS` units per
 * millisecond — about a seventh of a tight loop's rate on a 2-core development machine. This
 * sandbox gives a call its budget a slice at a time (`FUEL_SLICE`): the first before each delivery
 * and before the (deferred) start function, the rest at the refuel door (`refuel`), where it also
 * reads the clock and stops a call past its limit; nothing else sets the counter. A guest that
 * spends its fuel, or runs past its limit, is reported as a `timeout` failure naming which.
 *
 * Backstop (`backstop.ts`), for a step between two fuel checks that runs long: each drain runs a
 * slice of deliveries (at most `SLICE_MS` of them, then one more) under `receiveTimeoutMs` and
 * instantiation under `startTimeoutMs` of wall time, each with `backstopMargin` added: a guest still
 * running then is interrupted (V8 TerminateExecution, sent by the inspector watchdog) and reported
 * as a `timeout`; the interrupted instance is thrown away. The calls are self-timed (the door reads
 * the clock), so no watchdog is started for them until one runs `WATCH_AFTER_MS` or is about to run
 * a step charged past a slice. Its cost is a few atomic operations per slice, and each slice runs
 * as a `MessagePort` task of its own (the only kind of task an interruption unwinds cleanly);
 * slices of several proxies posted meanwhile share one.
 *
 * Order and re-entry: `deliver` only queues; the queue is drained from a posted task, and a slice's
 * outputs and pass-throughs are handed to the conductor in order after the slice — so the router is
 * never re-entered synchronously, never runs under the backstop, and output keeps delivery order,
 * as with the worker. A drain yields to the event loop (`setImmediate`) after `SLICE_MS`, so I/O
 * goes on while a slow guest works through its queue and the queue's high/low-water marks apply.
 * A `pause` from an output handler takes effect at the next slice (a slice is at most `SLICE_MS`).
 *
 * The trade: a guest's `receive` runs on the conductor's thread, so while it runs (at most its
 * budget) nothing else is routed. The worker sandbox does not have that cost and stays
 * selectable per proxy (`"isolation": "worker"`).
 */

import { backstop } from "./backstop.js";
import { GuestBudget } from "./budget.js";
import { CanonicalHost, describe, GuestFault } from "./canonical-host.js";
import type { LoadedComponent } from "./component-loader.js";
import { FUEL_EXPORT, FuelUnsupported, isOutOfFuel, openRefuelDoor, START_EXPORT } from "./fuel.js";
import { withMemoryAtTrap } from "./memory-at-trap.js";
import { meterCached } from "./metered-cache.js";
import { capModule } from "./module-caps.js";
import { Delivery, type ProxySandbox, QueueCongestion, type SandboxFailure, type SandboxHandlers, type SandboxLimits } from "./sandbox.js";

/**
 * Fuel units per millisecond of a limit. Measured as `bench/guest-fuel` does (a metered countdown
 * loop run until its fuel is spent, CPU time, best of 12 runs; the previous pass's build run
 * alternately with it, on the 2-core development machine): 34 M/ms before functions with a loop
 * counted their fuel in a local, 41–42 M/ms since; a pass-through `receive` burns units at about
 * the same rate (29 → 36 M/ms).
 * Set at about 1/7 of that, the ratio it had before (5 M then), so fuel stops a guest well
 * before the wall-clock backstop does.
 */
export const FUEL_PER_MS = 6_000_000;
/** Longest a drain runs before yielding to the event loop. */
const SLICE_MS = 4;
/**
 * What the backstop's limit adds to a call's: an eighth of it, at least `SLICE_MS` (a delivery
 * starts at most a slice into its drain). The door stops the guest's own code at the limit itself;
 * the watchdog, for a step the door cannot see, comes after it by this much, so the two do not race
 * for what the door can stop (at 4 ms past, a watchdog already up won that race on a loaded 2-core
 * machine). A call the door cannot stop overshoots its limit by at most this plus the watchdog's poll.
 */
const backstopMargin = (limitMs: number): number => Math.max(SLICE_MS, limitMs / 8);
/**
 * Fuel is put in the guest's counter a slice at a time: the refuel door (`refuel`) refills it from
 * the call's budget and reads the clock, once per slice. 4 ms of work by the calibration, ~0.6 ms
 * of a tight loop here: a message's work never reaches it (a streamed chunk through a pass-through
 * proxy burns ~90 K units, a 100 KB prompt through `context` ~10 M), a guest running away passes it
 * ~1,700 times a second.
 */
const FUEL_SLICE = BigInt(FUEL_PER_MS * 4);
/**
 * A call still running this long (ms) at the door, or about to run a step charged more than a
 * slice, is watched by the backstop's watchdog from then on (`Backstop.watch`); one that ends
 * sooner starts none.
 */
const WATCH_AFTER_MS = 10;

/** A budget as the meter gives it out: the first slice, and the rest. */
function slices(budget: bigint): [bigint, bigint] {
  const first = budget < FUEL_SLICE ? budget : FUEL_SLICE;
  return [first, budget - first];
}

export interface ThreadSandboxOptions {
  /** Fuel per delivery; default `receiveTimeoutMs × FUEL_PER_MS`. */
  maxFuelPerDelivery?: bigint;
  /** Fuel for the start function; default `startTimeoutMs × FUEL_PER_MS`. */
  maxFuelAtStart?: bigint;
}

/** What one slice of the queue produced, handed to the conductor in order after it. */
interface Slice {
  events: { output?: string[]; delivery?: Delivery; passed?: object }[];
  failure: SandboxFailure | null;
  /** The slice ran out of time with deliveries left. */
  more: boolean;
}

interface Prepared {
  /** Compiled off the main thread (`WebAssembly.compile`), so several proxies and the agent start in parallel. */
  module: Promise<WebAssembly.Module>;
}

/** Metered, capped, compiled modules by component hash and budgets: a restart reuses its module. */
const prepared = new Map<string, Prepared>();

/** Forgets the modules metered in this process (the disk cache stays): the next sandbox reads it. */
export function forgetPreparedModules(): void {
  prepared.clear();
}

export class ThreadSandbox implements ProxySandbox {
  private readonly prepared: Prepared;
  private startError: Error | null = null;
  private readonly budget: GuestBudget;
  private readonly deliveryFuel: bigint;
  /** A delivery's budget as the meter gives it: the first slice, and the rest for the door (no BigInt arithmetic per delivery). */
  private readonly deliverySlices: readonly [bigint, bigint];
  private readonly startFuel: bigint;
  private host: CanonicalHost | null = null;
  /** The guest's fuel counter (`fuel.ts`): set here before each metered call, read after a trap. */
  private fuel: WebAssembly.Global | null = null;
  private handlers: SandboxHandlers | null = null;
  /**
   * Deliveries (texts, or `Delivery`s) and pass-through messages (other objects), in order. Emptied
   * by a new array, not `length = 0`: a length set is a call into V8's runtime (~30 ns more, measured
   * alone), and a conversation empties the queue at every delivery.
   */
  private queue: (string | object)[] = [];
  /** Backpressure from the conductor: no delivery starts while set. */
  private paused = false;
  private head = 0;
  private scheduled = false;
  private readonly congestion = QueueCongestion.inThread((congested) => this.handlers?.congested?.(congested));
  private dead = false;
  /** Milliseconds the guest has run in this thread (start and deliveries). */
  cpuMs = 0;
  /** Fuel of the metered call in flight not yet in the counter (the door gives it out a slice at a time). */
  private fuelLeft = 0n;
  /** When the metered call in flight (a delivery, or the start) began, and its limit (ms): the door stops it past that. */
  private callStart = 0;
  private callLimitMs = 0;
  /** When the backstop's guard of the drain (or the start) began, and its limit: what `watch` is given. */
  private guardStart = 0;
  private guardLimitMs = 0;
  /** How long the call had run when the door stopped it at its limit; null if it did not. */
  private stoppedAfterMs: number | null = null;
  /** Where the metered module came from: this process, the disk cache (`metered-cache.ts`), or the rewrite. */
  meteredFrom: "memory" | "disk" | "rewrite" = "rewrite";

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
    this.deliverySlices = slices(this.deliveryFuel);
    this.startFuel = options.maxFuelAtStart ?? BigInt(limits.startTimeoutMs) * BigInt(FUEL_PER_MS);
    this.budget = new GuestBudget(limits);
    const key = `${component.sha256}:${limits.maxMemoryPages}:${limits.maxTableElements}:${this.startFuel}:${this.deliveryFuel}`;
    let entry = prepared.get(key);
    if (entry) this.meteredFrom = "memory";
    else {
      let capped: Uint8Array;
      try {
        capped = capModule(component.coreBytes, { maxMemoryPages: limits.maxMemoryPages, maxTableElements: limits.maxTableElements });
      } catch (error) {
        // Reported by start(), as the worker sandbox does.
        this.startError = error as Error;
        this.prepared = { module: Promise.resolve(null as never) };
        return;
      }
      // Metered once per process, and kept on disk for the next start (metered-cache.ts).
      const metered = meterCached(capped, this.startFuel, component.cacheDir ?? null);
      if (metered.cached) this.meteredFrom = "disk";
      const bytes = metered.bytes as Uint8Array<ArrayBuffer>;
      if (!WebAssembly.validate(bytes)) throw new FuelUnsupported("the metered module does not validate");
      const module = WebAssembly.compile(bytes);
      module.catch(() => prepared.delete(key));
      entry = { module };
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
    const options = {
      encodings: this.component.encodings,
      maxMessageUnits: this.limits.maxMessageUnits,
      maxOutputUnitsPerDelivery: this.limits.maxOutputUnitsPerDelivery,
      maxSendsPerReceive: this.limits.maxSendsPerReceive,
      grants: this.grants,
      instantiated: (exports: WebAssembly.Exports) => {
        this.fuel = exports[FUEL_EXPORT] as WebAssembly.Global;
        openRefuelDoor(exports, this.refuel);
        const [first, rest] = slices(this.startFuel);
        this.meter(first, rest, this.guardStart, this.limits.startTimeoutMs);
        (exports[START_EXPORT] as (() => void) | undefined)?.();
      },
      chargeFuel: (units: number) => {
        const fuel = this.fuel!;
        fuel.value = (fuel.value as bigint) - BigInt(units);
        if ((fuel.value as bigint) < 0n) this.refuel();
      },
    };
    const guard = backstop();
    const stopped = `instantiation did not finish within ${this.limits.startTimeoutMs} ms (stopped by the wall-clock backstop)`;
    // The backstop's limit is `backstopMargin` past the door's, so a call the door can stop is stopped there.
    this.guardLimitMs = this.limits.startTimeoutMs + backstopMargin(this.limits.startTimeoutMs);
    try {
      this.host = await new Promise<CanonicalHost>((resolve, reject) =>
        guard.post(() => {
          this.guardStart = performance.now(); // the start's time runs from here, not from its wait in the queue
          // Guest errors are caught inside the guarded call: only an interruption unwinds past it.
          const made = guard.guardSelfTimed(
            () => {
              try {
                return { host: new CanonicalHost(module, options), error: null };
              } catch (error) {
                return { host: null, error };
              }
            },
            this.guardLimitMs,
            () => reject(new Error(stopped)),
          );
          if (made.host) resolve(made.host);
          else reject(new Error(this.failureOf(made.error, "instantiation", this.startFuel, performance.now() - t).message));
        }),
      );
    } catch (error) {
      this.dead = true;
      throw error;
    } finally {
      this.cpuMs += performance.now() - t;
    }
  }

  deliver(message: string | Delivery): void {
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
      backstop().post(this.drain);
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
      backstop().post(this.drain);
    }
  }

  async stop(): Promise<void> {
    this.dead = true;
    this.host = null;
    this.queue.length = 0;
    this.head = 0;
  }

  /**
   * Runs a slice of the queue under the wall-clock backstop, then hands its results over in order.
   * Only guest calls and this sandbox's bookkeeping run under the backstop (an interruption
   * unwinds without `finally`): outputs and pass-throughs are collected and given to the
   * conductor after it, so the router never runs where it could be cut off halfway.
   */
  private readonly drain = (): void => {
    this.scheduled = false;
    if (this.dead || this.paused || this.head === this.queue.length) return;
    const slice: Slice = { events: [], failure: null, more: false };
    this.guardLimitMs = this.limits.receiveTimeoutMs + backstopMargin(this.limits.receiveTimeoutMs);
    backstop().guardSelfTimed(
      () => this.runSlice(slice),
      this.guardLimitMs,
      () => {
        this.cpuMs += performance.now() - this.callStart;
        slice.failure = {
          kind: "timeout",
          message: `receive did not return within ${this.limits.receiveTimeoutMs} ms (stopped by the wall-clock backstop)`,
        };
        this.handOver(slice);
      },
    );
    this.handOver(slice);
  };

  /** Gives the conductor a slice's outputs and pass-throughs in order, then its failure or the next slice. */
  private handOver(slice: Slice): void {
    for (const event of slice.events) {
      if (this.dead) return;
      if (event.passed) this.handlers?.passed?.(event.passed);
      else if (event.output) this.handlers?.output(event.output, event.delivery);
    }
    if (slice.failure) return this.fail(slice.failure);
    this.congestion.update(this.queue.length - this.head);
    if (slice.more && !this.scheduled && !this.dead && this.head < this.queue.length) {
      this.scheduled = true;
      setImmediate(() => backstop().post(this.drain));
    }
  }

  /** Delivers queued messages until the queue is empty, the guest fails, or SLICE_MS is up. */
  private runSlice(slice: Slice): void {
    // One clock read per delivery: each starts when the one before it ended (a clock read costs
    // ~50 ns, as much as the rest of a delivery's bookkeeping; what little runs between two
    // deliveries is counted as the second's guest time).
    let t = performance.now();
    const until = t + SLICE_MS;
    this.guardStart = t;
    while (!this.dead && !this.paused && this.head < this.queue.length) {
      const message = this.queue[this.head++];
      if (this.head === this.queue.length) {
        this.queue = [];
        this.head = 0;
      }
      const delivery = message instanceof Delivery ? message : undefined;
      if (typeof message !== "string" && delivery === undefined) {
        slice.events.push({ passed: message }); // passes the guest by, in its turn
        continue;
      }
      const host = this.host!;
      let output: string[];
      try {
        this.meter(this.deliverySlices[0], this.deliverySlices[1], t, this.limits.receiveTimeoutMs);
        output = host.receive(delivery?.text ?? (message as string), delivery?.pieces);
      } catch (error) {
        const now = performance.now();
        this.cpuMs += now - t;
        slice.failure = this.failureOf(error, "receive", this.deliveryFuel, now - t, host.memoryBytes);
        return;
      }
      const now = performance.now();
      this.cpuMs += now - t;
      const over = this.budget.charge({ guestMs: now - t, messages: output.length, units: host.lastOutputUnits }, now);
      if (over) {
        slice.failure = { kind: "budget", message: over.message };
        return;
      }
      if (output.length > 0) slice.events.push({ output, delivery });
      t = now;
      if (now >= until) {
        slice.more = true;
        return;
      }
    }
  }

  /** Gives the metered call about to begin its budget: the first slice in the counter, the rest to the door. */
  private meter(first: bigint, rest: bigint, start: number, limitMs: number): void {
    this.fuel!.value = first;
    this.fuelLeft = rest;
    this.callStart = start;
    this.callLimitMs = limitMs;
  }

  /**
   * The refuel door (`fuel.ts` `openRefuelDoor`): a check found the counter below zero, by what the
   * guest owes. Past the call's limit the guest is stopped (it traps, the counter below zero); past
   * its budget too; else the counter gets what is owed and another slice. A call that has run
   * `WATCH_AFTER_MS`, or owes more than a slice (one large bulk step about to run), is handed to the
   * backstop's watchdog for the rest of its guard, for what the door cannot see (a step mispriced).
   */
  private readonly refuel = (): void => {
    const fuel = this.fuel!;
    const now = performance.now();
    const ran = now - this.callStart;
    if (ran >= this.callLimitMs) {
      this.stoppedAfterMs = ran;
      throw new Error("past its time limit");
    }
    const owed = -(fuel.value as bigint);
    if (owed > this.fuelLeft) {
      this.fuelLeft = 0n;
      throw new Error("out of fuel");
    }
    if (ran >= WATCH_AFTER_MS || owed > FUEL_SLICE) backstop().watch(this.guardStart + this.guardLimitMs - now);
    let grant = owed + FUEL_SLICE;
    if (grant > this.fuelLeft) grant = this.fuelLeft;
    this.fuelLeft -= grant;
    fuel.value = (fuel.value as bigint) + grant;
  };

  private failureOf(error: unknown, what: string, fuel: bigint, ranMs: number, memoryBytes?: number): SandboxFailure {
    if (this.stoppedAfterMs !== null) {
      const limit = what === "receive" ? this.limits.receiveTimeoutMs : this.limits.startTimeoutMs;
      const ran = Math.round(this.stoppedAfterMs);
      this.stoppedAfterMs = null;
      const verb = what === "receive" ? "did not return" : "did not finish";
      return { kind: "timeout", message: `${what} ${verb} within ${limit} ms (stopped at a fuel check after ${ran} ms)` };
    }
    if (isOutOfFuel(this.fuel)) {
      return {
        kind: "timeout",
        message: `${what} used its fuel budget of ${fuel} units${what === "receive" ? " on one message" : ""} (≈ ${Math.round(Number(fuel) / FUEL_PER_MS)} ms of work; it ran ${Math.round(ranMs)} ms)`,
      };
    }
    if (error instanceof GuestFault) return { kind: "fault", message: describe(error) };
    return { kind: "trap", message: withMemoryAtTrap(describe(error), memoryBytes, this.limits.maxMemoryPages) };
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
