import { describe, expect, it, vi } from "vitest";
import { type Stalled, StallWatch } from "./stall-watch.js";

function watch(afterMs = 1000) {
  let t = 0;
  const reports: Stalled[] = [];
  const w = new StallWatch(
    afterMs,
    (s) => reports.push(s),
    () => t,
  );
  return { w, reports, advance: (ms: number) => (t += ms) };
}

describe("StallWatch", () => {
  it("reports a request neither passed on nor answered, once, naming proxy and method", () => {
    const { w, reports, advance } = watch();
    w.delivered('proxy "x"', "n1", 1, "session/prompt");
    advance(999);
    w.sweep();
    expect(reports).toEqual([]);
    advance(1);
    w.sweep();
    w.sweep();
    expect(reports).toEqual([{ proxy: 'proxy "x"', method: "session/prompt", id: "1", ms: 1000 }]);
  });

  it("shows an id as JSON: a number bare, a string quoted", () => {
    const { w, reports, advance } = watch();
    w.delivered("p", "n7", 7, "session/prompt");
    w.delivered("p", 's"7"', "7", "session/prompt");
    advance(1000);
    w.sweep();
    expect(reports.map((r) => r.id)).toEqual(["7", '"7"']);
  });

  it("a request passed on (same method) or answered is not reported", () => {
    const { w, reports, advance } = watch();
    w.delivered("p", "n1", 1, "session/prompt");
    w.delivered("p", "n2", 2, "session/new");
    w.delivered("p", "n3", 3, "session/prompt");
    w.passedOn("p", "session/prompt"); // the oldest prompt
    w.settled("p", "n2");
    advance(5000);
    w.sweep();
    expect(reports.map((r) => r.id)).toEqual(["3"]);
  });

  it("forgets a proxy that is gone, and does nothing when disabled", () => {
    const { w, reports, advance } = watch();
    w.delivered("p", "n1", 1, "x");
    w.settled("p");
    advance(5000);
    w.sweep();
    expect(reports).toEqual([]);
    const off = watch(0);
    off.w.delivered("p", "n1", 1, "x");
    off.advance(5000);
    off.w.sweep();
    expect(off.reports).toEqual([]);
  });

  it("keeps one sweep timer across a conversation's requests, and stops it at a sweep that finds none inside", () => {
    const { w } = watch();
    const started = vi.spyOn(globalThis, "setInterval");
    expect(w.sweeping).toBe(false);
    w.delivered("p", "n1", 1, "session/prompt");
    w.passedOn("p", "session/prompt");
    w.delivered("q", "n2", 2, "session/prompt");
    w.settled("q", "n2");
    w.delivered("p", "n3", 3, "session/prompt");
    expect(started).toHaveBeenCalledTimes(1);
    started.mockRestore();
    w.sweep();
    expect(w.sweeping).toBe(true); // n3 is still inside
    w.settled("p", "n3");
    w.sweep();
    expect(w.sweeping).toBe(false);
  });
});
