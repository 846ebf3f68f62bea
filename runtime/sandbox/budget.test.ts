import { describe, expect, it } from "vitest";
import { type BudgetLimits, GuestBudget, WindowBudget } from "./budget.js";
import { DEFAULT_LIMITS } from "./sandbox.js";

function clock(start = 0) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("WindowBudget", () => {
  it("allows up to the limit in a window and refuses past it", () => {
    const c = clock();
    const b = new WindowBudget(100, 1000, c.now);
    expect(b.charge(60)).toBe(true);
    expect(b.charge(40)).toBe(true);
    expect(b.used).toBe(100);
    expect(b.charge(1)).toBe(false);
    expect(b.used).toBe(101); // an overrun stays charged
  });

  it("forgets what was charged once it slides out of the window, step by step", () => {
    const c = clock(5_000);
    const b = new WindowBudget(100, 1000, c.now); // 10 steps of 100 ms
    b.charge(50);
    c.advance(500);
    b.charge(50);
    expect(b.used).toBe(100);
    c.advance(499); // the first charge is still in the window
    expect(b.charge(1)).toBe(false);
    c.advance(101); // now it is not
    expect(b.used).toBe(51);
    c.advance(1000);
    expect(b.used).toBe(0);
    expect(b.charge(100)).toBe(true);
  });

  it("a steady spend under the rate never trips, a steady spend over it does", () => {
    const c = clock();
    const under = new WindowBudget(500, 1000, c.now);
    const over = new WindowBudget(500, 1000, c.now);
    let overTripped = -1;
    for (let i = 0; i < 100; i++) {
      expect(under.charge(40)).toBe(true); // 400 per 1000 ms
      if (!over.charge(60) && overTripped < 0) overTripped = i; // 600 per 1000 ms
      c.advance(100);
    }
    expect(overTripped).toBeGreaterThan(0);
    expect(overTripped).toBeLessThan(10);
  });

  it("refuses a nonsensical budget", () => {
    expect(() => new WindowBudget(0, 1000)).toThrow(RangeError);
    expect(() => new WindowBudget(10, 0)).toThrow(RangeError);
  });
});

describe("GuestBudget", () => {
  const limits: BudgetLimits = {
    cpuWindowMs: 10_000,
    maxCpuMsPerWindow: 3_000,
    outputWindowMs: 10_000,
    maxOutputMessagesPerWindow: 1_000,
    maxOutputUnitsPerWindow: 64 * 2 ** 20,
  };

  it("names the CPU budget a slow-but-legal proxy exceeds", () => {
    const c = clock();
    const b = new GuestBudget(limits, c.now);
    expect(b.charge({ guestMs: 1_600, messages: 1, units: 100 })).toBeNull();
    c.advance(1_700);
    const over = b.charge({ guestMs: 1_600, messages: 1, units: 100 });
    expect(over).toEqual({
      budget: "cpu",
      message: "used 3.2 s of guest time in the last 10 s, over its CPU budget of 3 s per 10 s (limits.maxCpuMsPerWindow)",
    });
  });

  it("names the output budgets: volume and message count", () => {
    const c = clock();
    const volume = new GuestBudget(limits, c.now);
    expect(volume.charge({ guestMs: 1, messages: 3, units: 48 * 2 ** 20 })).toBeNull();
    expect(volume.charge({ guestMs: 1, messages: 3, units: 24 * 2 ** 20 })?.message).toBe(
      "sent 72 Mi code units in the last 10 s, over its output budget of 64 Mi code units per 10 s (limits.maxOutputUnitsPerWindow)",
    );
    const count = new GuestBudget(limits, c.now);
    expect(count.charge({ guestMs: 1, messages: 1_000, units: 10 })).toBeNull();
    expect(count.charge({ guestMs: 1, messages: 1, units: 10 })).toEqual({
      budget: "output-messages",
      message: "sent 1001 messages in the last 10 s, over its output budget of 1000 messages per 10 s (limits.maxOutputMessagesPerWindow)",
    });
  });

  it("charges at the time the sandbox passes, reading no clock (one clock read per delivery)", () => {
    const c = clock();
    let reads = 0;
    const b = new GuestBudget(limits, () => {
      reads++;
      return c.now();
    });
    expect(b.charge({ guestMs: 1_000, messages: 1, units: 100 }, 0)).toBeNull();
    expect(b.charge({ guestMs: 1_000, messages: 1, units: 100 }, 1_700)).toBeNull();
    // 20 s later by the caller's reading (the clock never moved): both have slid out of the window,
    // so this fits; charged at the clock's time it would be 4.5 s in 10 s.
    expect(b.charge({ guestMs: 2_500, messages: 1, units: 100 }, 21_700)).toBeNull();
    expect(reads).toBe(0);
  });

  it("lets a busy but reasonable proxy run for ever", () => {
    const c = clock();
    const b = new GuestBudget(limits, c.now);
    for (let i = 0; i < 10_000; i++) {
      expect(b.charge({ guestMs: 2, messages: 1, units: 10_000 })).toBeNull(); // 20% CPU, 100 msg/s, 1 M units/s
      c.advance(10);
    }
  });
});

describe("the default budgets", () => {
  it("stop the issue's slow proxy (1.6 s on every delivery, under the 2 s watchdog) within ~10 deliveries in a row, naming the budget", () => {
    const c = clock();
    const b = new GuestBudget(DEFAULT_LIMITS, c.now);
    let stopped = -1;
    for (let i = 0; i < 30 && stopped < 0; i++) {
      if (b.charge({ guestMs: 1_600, messages: 1, units: 200 })) stopped = i + 1;
      c.advance(1_600);
    }
    expect(stopped).toBeGreaterThan(1);
    expect(stopped).toBeLessThanOrEqual(10);
    expect(new GuestBudget(DEFAULT_LIMITS).charge({ guestMs: 15_001, messages: 0, units: 0 })?.message).toMatch(
      /over its CPU budget of 15 s per 30 s/,
    );
  });

  it("never trip for the heaviest legit patterns in the suites: 3000 deliveries of 2 ms back to back, 50 sessions × 200 prompts, a 10 MiB blob a second", () => {
    const c = clock();
    const b = new GuestBudget(DEFAULT_LIMITS, c.now);
    for (let i = 0; i < 3_000; i++) {
      expect(b.charge({ guestMs: 2, messages: 1, units: 100 })).toBeNull();
      c.advance(2);
    }
    for (let i = 0; i < 50_000; i++) {
      expect(b.charge({ guestMs: 0.02, messages: 1, units: 300 })).toBeNull(); // ~2.5 k messages a second
      c.advance(0.4);
    }
    for (let i = 0; i < 20; i++) {
      expect(b.charge({ guestMs: 100, messages: 1, units: 14 * 2 ** 20 })).toBeNull();
      c.advance(1_000);
    }
  });
});
