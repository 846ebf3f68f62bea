/**
 * The boundary between the conductor and a running proxy guest.
 *
 * A sandbox is: deliver a message, collect what the proxy sent, stop it. The conductor knows
 * nothing else about how the guest runs, so another isolation strategy (e.g. in-thread with
 * fuel metering injected into the code) can sit beside the worker one and be chosen by
 * measurement.
 */
import type { BudgetLimits } from "./budget.js";
import { MAX_TABLES } from "./module-caps.js";

/** `budget`: the guest stayed within every per-message limit but exceeded a budget over a window (`budget.ts`). */
export type FailureKind = "trap" | "timeout" | "fault" | "crash" | "budget";

export interface SandboxFailure {
  kind: FailureKind;
  /** Human-readable, names what happened ("receive did not return within 2000 ms"). */
  message: string;
}

export interface SandboxHandlers {
  /**
   * Messages the guest sent, in order, as JSON texts; called once per delivery that produced
   * output, with that delivery when it was queued as a `Delivery`.
   */
  output(messages: string[], delivery?: Delivery): void;
  /**
   * A message queued with `passThrough`, handed back in its place in the queue: after the output
   * of every delivery queued before it, before the output of any queued after it.
   */
  passed?(message: object): void;
  /** The guest is dead. Called at most once; no output follows. */
  failed(failure: SandboxFailure): void;
  /**
   * The queue of deliveries waiting for the guest crossed the high-water mark (true) or drained
   * below the low-water mark (false). The conductor stops reading its inputs meanwhile, so a slow
   * guest slows the chain instead of growing an unbounded queue.
   */
  congested?(congested: boolean): void;
}

/**
 * A delivery that carries the message its text was written from: its output comes back with it
 * (`SandboxHandlers.output`), so the peer can tell an unchanged forward of that message. A plain
 * string is a delivery without one (the host's own `_cordon/configure`).
 */
export class Delivery {
  constructor(
    readonly text: string,
    readonly message: object,
    /** `text` as the pieces it was built from, when long (raw-json.ts `piecesOf`): copied into the guest one by one. */
    readonly pieces?: readonly string[],
  ) {}
}

/**
 * Deliveries queued for one guest above which its inputs are paused, and below which they resume:
 * a worker's, where depth keeps the pipeline between the threads busy.
 */
const QUEUE_HIGH_WATER = 1024;
const QUEUE_LOW_WATER = 256;

/**
 * The same for a guest that runs in the conductor's thread, where a deeper queue buys nothing:
 * its deliveries run in this thread anyway, and every queued message is a young object graph each
 * scavenge must copy. At 1024 the queues of three watching proxies streaming grew until messages
 * were promoted and major collections ran in half the runs (GC 300 ms per 100k chunks instead of
 * 100); at 256 they never were (P2 median 23.5 → 19.6 µs per chunk, measured interleaved).
 */
export const THREAD_QUEUE_HIGH_WATER = 256;
const THREAD_QUEUE_LOW_WATER = 64;

/**
 * A guest queue's congestion, with hysteresis: reported once when the queue reaches the high-water
 * mark, cleared once when it is back down to the low one. Each sandbox tells it the queue's length
 * whenever that changes.
 */
export class QueueCongestion {
  private congested = false;

  constructor(
    private readonly report: (congested: boolean) => void,
    private readonly high = QUEUE_HIGH_WATER,
    private readonly low = QUEUE_LOW_WATER,
  ) {}

  /** Marks for a guest in the conductor's thread (`THREAD_QUEUE_HIGH_WATER`). */
  static inThread(report: (congested: boolean) => void): QueueCongestion {
    return new QueueCongestion(report, THREAD_QUEUE_HIGH_WATER, THREAD_QUEUE_LOW_WATER);
  }

  /** The queue now holds `length` messages. */
  update(length: number): void {
    if (!this.congested && length >= this.high) {
      this.congested = true;
      this.report(true);
    } else if (this.congested && length <= this.low) {
      this.congested = false;
      this.report(false);
    }
  }
}

export interface ProxySandbox {
  /** Instantiates the guest (runs its start function). Rejects with the failure if that traps or times out. */
  start(handlers: SandboxHandlers): Promise<void>;
  /** Queues one message for the guest's `receive`. Deliveries run one at a time, in order. */
  deliver(message: string | Delivery): void;
  /**
   * Queues a message that does not enter the guest (an interest filter let it pass, see
   * `components/interest-filter.ts`): it waits in the same ordered queue as deliveries, counts
   * toward the same high-water mark, is held by `pause`, and comes back through `handlers.passed`
   * in its turn — never synchronously from this call.
   */
  passThrough?(message: object): void;
  /**
   * Nothing queued or running and no output owed: a message the conductor routes past the guest
   * now cannot overtake anything the guest has yet to send (see `Peer.passes`).
   */
  idle?(): boolean;
  /** Ends the guest; pending deliveries are dropped. */
  stop(): Promise<void>;
  /**
   * Starts no further delivery until `resume` (queued ones wait; one already running finishes):
   * the conductor's backpressure when a peer this guest feeds is not reading, so a guest cannot
   * keep producing output nobody takes.
   */
  pause?(): void;
  resume?(): void;
}

/**
 * What a guest may use. Everything a guest can make the host allocate is bounded before it is
 * allocated: its linear memory and tables (the module is rewritten, `module-caps.ts`), each string
 * it sends and their total per delivery (checked from the pointer and length, before decoding,
 * `canonical-host.ts`), the number of sends per delivery, and — over a window — its guest time and
 * output (`budget.ts`). A guest past a bound is stopped and reported; the host never runs out for it.
 *
 * The JavaScript heap of the thread that runs the guest must hold one delivered message and one
 * delivery's output at once; `workerHeapLimitMiB` sizes a worker's heap from these limits.
 */
export interface SandboxLimits extends BudgetLimits {
  /** Longest a single `receive` may run. */
  receiveTimeoutMs: number;
  /** Longest instantiation (the start function) may run. */
  startTimeoutMs: number;
  /**
   * Largest message the guest may send: UTF-16 code units for a UTF-16 guest, bytes for a UTF-8
   * one (a UTF-8 string of n bytes decodes to at most n code units, so either way the decoded
   * string holds at most this many code units, ≤ 2 bytes each).
   */
  maxMessageUnits: number;
  /**
   * Most the guest may send, all messages together, for one delivered message (same units). It
   * bounds what one delivery makes the host decode and hold, and the one `postMessage` that
   * carries a worker's output back. Never below `maxMessageUnits` (the larger applies).
   */
  maxOutputUnitsPerDelivery: number;
  /** Most messages the guest may send for one delivered message. */
  maxSendsPerReceive: number;
  /** Cap on the guest's linear memory, in 64 KiB pages (the host rewrites the module to enforce it). */
  maxMemoryPages: number;
  /** Cap on each of the guest's tables, in elements (the host rewrites the module to enforce it). */
  maxTableElements: number;
}

const Mi = 1024 * 1024;

export const DEFAULT_LIMITS: SandboxLimits = {
  receiveTimeoutMs: 2_000,
  startTimeoutMs: 5_000,
  // 16 Mi: a 10 MiB embedded blob is ~14 M code units of base64 inside its prompt.
  maxMessageUnits: 16 * Mi,
  maxOutputUnitsPerDelivery: 32 * Mi,
  maxSendsPerReceive: 10_000,
  maxMemoryPages: 2048, // 128 MiB
  maxTableElements: 65_536,
  // Half a core for 30 s: legit proxies use microseconds per message; one that burns 1.6 s on
  // every delivery (under the 2 s watchdog) is stopped after ~10 such deliveries in a row.
  cpuWindowMs: 30_000,
  maxCpuMsPerWindow: 15_000,
  // ~20 k messages and 25 Mi code units a second, sustained over 10 s: tens of times what a busy
  // session produces (the 50-session stress test sends ~2.5 k messages a second through each proxy).
  outputWindowMs: 10_000,
  maxOutputMessagesPerWindow: 200_000,
  maxOutputUnitsPerWindow: 256 * Mi,
};

/**
 * The largest message the conductor delivers to a guest, in code units: a line from the client
 * or the agent is at most 64 MiB (`LineBuffer`), which decodes to at most 64 Mi code units; a
 * message from another proxy is at most its `maxMessageUnits` plus an envelope.
 */
export const MAX_DELIVERED_UNITS = 64 * Mi;

/** The per-delivery output budget in force: never below the per-message cap. */
const outputUnitsPerDelivery = (limits: SandboxLimits): number => Math.max(limits.maxOutputUnitsPerDelivery, limits.maxMessageUnits);

/**
 * The old-generation heap limit of a worker running a guest, in MiB, consistent with the caps.
 * V8 aborts the whole process (not just the worker) when one allocation does not fit in a
 * worker's heap even after the last-resort GC, so the limit must hold everything the host may
 * have to keep at once for the guest, with room to spare:
 *
 *   the delivered message        2 B × max(MAX_DELIVERED_UNITS, maxMessageUnits)   128 MiB
 *   the delivery's output        2 B × outputUnitsPerDelivery                        64 MiB
 *                                (UTF-8 output decodes on-heap; UTF-16 output of ≥ 1 MiB becomes
 *                                 external strings, counted here all the same)
 *   its tables                   MAX_TABLES × maxTableElements × 16 B                 8 MiB
 *   the runtime, and garbage a
 *   GC has not collected yet                                                         64 MiB
 *                                                                           total   264 MiB
 *
 * This is a ceiling, not a reservation: a worker uses what it holds (~10 MiB idle).
 */
export function workerHeapLimitMiB(limits: SandboxLimits): number {
  const input = 2 * Math.max(MAX_DELIVERED_UNITS, limits.maxMessageUnits);
  const output = 2 * outputUnitsPerDelivery(limits);
  const tables = MAX_TABLES * limits.maxTableElements * 16;
  return Math.ceil((input + output + tables) / Mi) + 64;
}
