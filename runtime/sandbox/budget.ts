/**
 * Budgets over a time window: what a proxy may spend in guest time and output over any window,
 * not only per message. The per-delivery watchdog stops one `receive` that runs too long; these
 * stop a proxy that stays under it on every message but, summed, stalls the chain (1.6 s on every
 * delivery) or floods it (a steady stream of messages that each pass every per-message check).
 *
 * Usable by any sandbox implementation: after each delivery, report what it cost with
 * `GuestBudget.charge({ guestMs, messages, units })`; a non-null answer names the budget that was
 * exceeded, and the sandbox stops the guest with that message as its failure (kind `budget`).
 *
 * The window slides in `slots` steps (10 by default): what counts is everything charged in the
 * current step and the `slots - 1` before it, so "the last 10 s" means 9–10 s. Cost: a few
 * arithmetic operations per charge, no allocation.
 */

/** At most `limit` of something in any `windowMs` (sliding, in `slots` steps). */
export class WindowBudget {
  private readonly buckets: Float64Array;
  private readonly step: number;
  /** Index (time / step) of the newest bucket. */
  private head = -1;
  private total = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly now: () => number = () => performance.now(),
    slots = 10,
  ) {
    if (!(limit > 0) || !(windowMs > 0) || !(slots >= 1)) throw new RangeError("a budget needs a positive limit, window and slot count");
    this.buckets = new Float64Array(slots);
    this.step = windowMs / slots;
  }

  /**
   * Adds `amount` at `at` (default: now). Returns false when the window's total is over the limit
   * (it stays charged). A caller that has just read the clock passes its reading: a clock read
   * costs about as much as the rest of a charge.
   */
  charge(amount: number, at: number = this.now()): boolean {
    this.advance(at);
    this.buckets[this.head % this.buckets.length] += amount;
    this.total += amount;
    return this.total <= this.limit;
  }

  /** What the current window holds. */
  get used(): number {
    this.advance();
    return this.total;
  }

  private advance(at: number = this.now()): void {
    const index = Math.floor(at / this.step);
    if (index <= this.head) return;
    const slots = this.buckets.length;
    if (this.head < 0 || index - this.head >= slots) {
      this.buckets.fill(0);
      this.total = 0;
    } else {
      for (let i = this.head + 1; i <= index; i++) {
        const slot = i % slots;
        this.total -= this.buckets[slot];
        this.buckets[slot] = 0;
      }
      if (this.total < 1e-9) this.total = 0; // float drift
    }
    this.head = index;
  }
}

export interface BudgetLimits {
  /** Window of the guest-time budget. */
  cpuWindowMs: number;
  /** Guest time (inside `receive`) a proxy may use in any `cpuWindowMs`. */
  maxCpuMsPerWindow: number;
  /** Window of the output budgets. */
  outputWindowMs: number;
  /** Messages a proxy may send in any `outputWindowMs`. */
  maxOutputMessagesPerWindow: number;
  /** UTF-16 code units (UTF-8 bytes for a UTF-8 guest) a proxy may send in any `outputWindowMs`. */
  maxOutputUnitsPerWindow: number;
}

/** What one delivery cost. */
export interface DeliveryUsage {
  /** Time the guest spent in `receive`, measured in the thread that ran it. */
  guestMs: number;
  /** Messages it sent. */
  messages: number;
  /** Their total size in UTF-16 code units. */
  units: number;
}

export type BudgetName = "cpu" | "output-messages" | "output-units";

export interface BudgetExceeded {
  budget: BudgetName;
  /** Names what was spent and the budget: "used 3.2 s of guest time in the last 10 s, over its CPU budget of 3 s per 10 s". */
  message: string;
}

const seconds = (ms: number) => `${+(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
const units = (n: number) => (n >= 2 ** 20 ? `${+(n / 2 ** 20).toFixed(1)} Mi code units` : `${Math.round(n)} code units`);

/** A proxy's CPU and output budgets, charged once per delivery. */
export class GuestBudget {
  readonly cpu: WindowBudget;
  readonly messages: WindowBudget;
  readonly units: WindowBudget;

  private readonly now: () => number;

  constructor(
    private readonly limits: BudgetLimits,
    now: () => number = () => performance.now(),
  ) {
    this.now = now;
    this.cpu = new WindowBudget(limits.maxCpuMsPerWindow, limits.cpuWindowMs, now);
    this.messages = new WindowBudget(limits.maxOutputMessagesPerWindow, limits.outputWindowMs, now);
    this.units = new WindowBudget(limits.maxOutputUnitsPerWindow, limits.outputWindowMs, now);
  }

  /**
   * Charges one finished delivery, at `at` (default: the clock now; a sandbox that has just read it
   * passes its reading, so a charge reads no clock); null while every budget holds, else the first
   * one exceeded.
   */
  charge(usage: DeliveryUsage, at: number = this.now()): BudgetExceeded | null {
    const l = this.limits;
    const cpuOk = this.cpu.charge(usage.guestMs, at);
    const messagesOk = this.messages.charge(usage.messages, at);
    const unitsOk = this.units.charge(usage.units, at);
    if (!cpuOk) {
      return {
        budget: "cpu",
        message: `used ${seconds(this.cpu.used)} of guest time in the last ${seconds(l.cpuWindowMs)}, over its CPU budget of ${seconds(l.maxCpuMsPerWindow)} per ${seconds(l.cpuWindowMs)} (limits.maxCpuMsPerWindow)`,
      };
    }
    if (!unitsOk) {
      return {
        budget: "output-units",
        message: `sent ${units(this.units.used)} in the last ${seconds(l.outputWindowMs)}, over its output budget of ${units(l.maxOutputUnitsPerWindow)} per ${seconds(l.outputWindowMs)} (limits.maxOutputUnitsPerWindow)`,
      };
    }
    if (!messagesOk) {
      return {
        budget: "output-messages",
        message: `sent ${this.messages.used} messages in the last ${seconds(l.outputWindowMs)}, over its output budget of ${l.maxOutputMessagesPerWindow} messages per ${seconds(l.outputWindowMs)} (limits.maxOutputMessagesPerWindow)`,
      };
    }
    return null;
  }
}
