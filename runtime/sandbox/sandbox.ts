/**
 * The boundary between the conductor and a running proxy guest.
 *
 * A sandbox is: deliver a message, collect what the proxy sent, stop it. The conductor knows
 * nothing else about how the guest runs, so another isolation strategy (e.g. in-thread with
 * fuel metering injected into the code) can sit beside the worker one and be chosen by
 * measurement.
 */
export type FailureKind = "trap" | "timeout" | "fault" | "crash";

export interface SandboxFailure {
  kind: FailureKind;
  /** Human-readable, names what happened ("receive did not return within 2000 ms"). */
  message: string;
}

export interface SandboxHandlers {
  /** Messages the guest sent, in order, as JSON texts; called once per delivery that produced output. */
  output(messages: string[]): void;
  /** The guest is dead. Called at most once; no output follows. */
  failed(failure: SandboxFailure): void;
  /**
   * The queue of deliveries waiting for the guest crossed the high-water mark (true) or drained
   * below the low-water mark (false). The conductor stops reading its inputs meanwhile, so a slow
   * guest slows the chain instead of growing an unbounded queue.
   */
  congested?(congested: boolean): void;
}

/** Deliveries queued for one guest above which its inputs are paused, and below which they resume. */
export const QUEUE_HIGH_WATER = 1024;
export const QUEUE_LOW_WATER = 256;

export interface ProxySandbox {
  /** Instantiates the guest (runs its start function). Rejects with the failure if that traps or times out. */
  start(handlers: SandboxHandlers): Promise<void>;
  /** Queues one message for the guest's `receive`. Deliveries run one at a time, in order. */
  deliver(message: string): void;
  /** Ends the guest; pending deliveries are dropped. */
  stop(): Promise<void>;
}

export interface SandboxLimits {
  /** Longest a single `receive` may run. */
  receiveTimeoutMs: number;
  /** Longest instantiation (the start function) may run. */
  startTimeoutMs: number;
  /** Largest message the guest may send, in UTF-16 code units. */
  maxMessageUnits: number;
  /** Most messages the guest may send for one delivered message. */
  maxSendsPerReceive: number;
  /** Cap on the guest's linear memory, in 64 KiB pages (the host rewrites the module to enforce it). */
  maxMemoryPages: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  receiveTimeoutMs: 2_000,
  startTimeoutMs: 5_000,
  maxMessageUnits: 16 * 1024 * 1024,
  maxSendsPerReceive: 10_000,
  maxMemoryPages: 2048, // 128 MiB
};
