import { describe, expect, it } from "vitest";
import { goals, judge, type Results, type RoundTrip } from "./goals.js";
import { goalsTable } from "./table.js";

const trip = (mean: number, idleRssMiB = 50, rssMiB = 60): RoundTrip => ({
  startMs: 1,
  first: mean,
  mean,
  p50: mean,
  p95: mean,
  cpuUs: mean * 1000,
  rssMiB,
  upRssMiB: idleRssMiB,
  idleRssMiB,
});

describe("bench goals", () => {
  it("judges each target from the results by key, and says what this run did not measure", () => {
    const results: Results = {
      p1: new Map([
        ["cordon0", trip(0.1, 50, 60)],
        ["thread3", trip(0.11, 52, 69)],
        ["thinkwell3", trip(0.5)],
      ]),
      p2: new Map([
        ["direct", { rate: 100_000, cpuUs: 2, first: { rate: 90_000, cpuUs: 2.5 } }],
        // The goals read the steady turn, not the first (V8 still optimizing the path in it).
        ["thread3-watching", { rate: 30_000, cpuUs: 8, first: { rate: 20_000, cpuUs: 6 } }],
      ]),
      p3: { jsEditUs: 700, cordon0CpuUs: 2000, contextCpuUs: 2300 },
      p4: new Map(),
    };
    const byName = new Map(judge(goals("thread"), results).map((v) => [v.goal.name, v]));
    const verdict = (prefix: string) => [...byName.entries()].find(([name]) => name.startsWith(prefix))![1];
    expect(verdict("P1 round trip, 3 watching proxies vs Cordon+0").value).toBeCloseTo(1.1);
    expect(verdict("P1 round trip, 3 watching proxies vs Cordon+0").met).toBe(true);
    expect(verdict("P1 round trip, 3 watching proxies vs thinkwell+3").value).toBeCloseTo(0.22);
    expect(verdict("P2 streaming, 3 watching proxies: conductor CPU")).toMatchObject({ value: 8, met: false });
    expect(verdict("P2 streaming, 3 watching proxies: rate vs direct").value).toBeCloseTo(30);
    expect(verdict("P2 streaming, 3 watching proxies: rate")).toMatchObject({ value: 30, met: false }); // at least 40 %
    expect(verdict("P3")).toMatchObject({ met: true });
    expect(verdict("P3").value).toBeCloseTo(300 / 700);
    expect(verdict("P5 memory per added proxy, idle").value).toBeCloseTo(2 / 3);
    expect(verdict("P5 memory per added proxy, after")).toMatchObject({ value: 3, met: false });
    // Not measured: no figure and no verdict, rather than a failure far from its cause.
    expect(verdict("P2 streaming, Cordon+0: conductor CPU")).toMatchObject({ value: undefined, met: undefined });
    expect(verdict("P4")).toMatchObject({ value: undefined, met: undefined });
  });
});

describe("goals table", () => {
  it("shows a figure that rounds to its limit with the digits that tell them apart", () => {
    const goal = goals("thread").find((g) => g.name === "P2 streaming, Cordon+0: conductor CPU per chunk")!;
    const row = (value: number) =>
      goalsTable("", [{ goal, value, met: value <= goal.limit }])
        .split("\n")
        .at(-1);
    expect(row(2.03)).toContain("| 2.03 µs | NOT met |");
    expect(row(1.98)).toContain("| 1.98 µs | met |");
    expect(row(2.4)).toContain("| 2.4 µs | NOT met |");
    expect(row(2)).toContain("| 2.0 µs | met |");
  });
});
