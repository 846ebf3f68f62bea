/**
 * The targets of `make bench` (issue 20), as data: each goal names the figure it reads from the
 * results of one run and the limit it must meet. Results are keyed by what was measured, never by
 * a row's display name, so renaming a row cannot break a goal. A goal whose figure was not measured
 * (`BENCH_ONLY`) says so instead of failing.
 */

/** One P1 configuration: prompt round trips after warm-up, and the conductor's memory. */
export interface RoundTrip {
  startMs: number;
  /** Mean of the first prompts after start (cold). */
  first: number;
  mean: number;
  p50: number;
  p95: number;
  /**
   * CPU µs per round trip over the timed prompts: the conductor's process tree without the agent
   * (direct: the agent's own). Steadier than the wall figures, and the conductor's own cost.
   */
  cpuUs: number;
  /** After the prompts. */
  rssMiB: number;
  /** Up and with a session, 0.3 s after it opened. */
  upRssMiB: number;
  /** Up and with a session, after `IDLE_MS` with nothing asked. */
  idleRssMiB: number;
}

/** One P2 path: chunks per second, and the conductor's CPU per chunk. */
export interface Stream {
  /** Chunks per second and CPU µs per chunk, steady: the second `BENCH_CHUNKS` of the chain. */
  rate: number;
  cpuUs: number;
  /** The same over the first `BENCH_CHUNKS`, with V8's optimizing of the path in them. */
  first: { rate: number; cpuUs: number };
}

/** P3, end to end: one 100 KB prompt through the conductor, with and without `context.wasm`. */
export interface LargePrompt {
  /** The same edit in plain JS in this process (parse, prepend a block, stringify), µs. */
  jsEditUs: number;
  /** Conductor CPU per prompt, µs: Cordon with no proxy, and with `context.wasm` (default isolation). */
  cordon0CpuUs: number;
  contextCpuUs: number;
}

/** What one run measured; each part may be absent (`BENCH_ONLY`). Keys: see `bench.ts`. */
export interface Results {
  p1: Map<string, RoundTrip>;
  p2: Map<string, Stream>;
  p3?: LargePrompt;
  /** Median ms to the first `initialize` answer. */
  p4: Map<string, number>;
}

export interface Goal {
  name: string;
  /** The figure, or undefined when this run did not measure it. */
  measure: (r: Results) => number | undefined;
  limit: number;
  /** `max`: the figure must be at most `limit`; `min`: at least. */
  kind: "max" | "min";
  unit: "×" | "µs" | "%" | "ms" | "MiB";
}

/** `a ÷ b` when both were measured. */
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a / b);
const pct = (a: number | undefined, b: number | undefined) => {
  const q = ratio(a, b);
  return q === undefined ? undefined : 100 * q;
};
/** MiB per added proxy (3 vs 0), idle or after the P1 load. */
const perProxy = (r: Results, key: string, at: "idleRssMiB" | "rssMiB") => {
  const three = r.p1.get(key)?.[at];
  const zero = r.p1.get("cordon0")?.[at];
  return three === undefined || zero === undefined ? undefined : (three - zero) / 3;
};

/** Goals for the default isolation, whose P1/P2 keys are `${isolation}3` / `${isolation}3-watching`. */
export function goals(isolation: string): Goal[] {
  const watching3 = `${isolation}3`;
  return [
    {
      name: "P1 round trip, 3 watching proxies vs Cordon+0",
      measure: (r) => ratio(r.p1.get(watching3)?.mean, r.p1.get("cordon0")?.mean),
      limit: 1.15,
      kind: "max",
      unit: "×",
    },
    {
      name: "P1 round trip, 3 watching proxies vs thinkwell+3",
      measure: (r) => ratio(r.p1.get(watching3)?.mean, r.p1.get("thinkwell3")?.mean),
      limit: 0.3,
      kind: "max",
      unit: "×",
    },
    {
      name: "P2 streaming, 3 watching proxies: conductor CPU per chunk",
      measure: (r) => r.p2.get(`${watching3}-watching`)?.cpuUs,
      limit: 7,
      kind: "max",
      unit: "µs",
    },
    {
      name: "P2 streaming, 3 watching proxies: rate vs direct",
      measure: (r) => pct(r.p2.get(`${watching3}-watching`)?.rate, r.p2.get("direct")?.rate),
      limit: 40,
      kind: "min",
      unit: "%",
    },
    ...(["cordon0", `${watching3}-declared`] as const).flatMap((key): Goal[] => {
      const label = key === "cordon0" ? "Cordon+0" : "3 declared non-watching proxies";
      return [
        {
          name: `P2 streaming, ${label}: conductor CPU per chunk`,
          measure: (r) => r.p2.get(key)?.cpuUs,
          limit: 2,
          kind: "max",
          unit: "µs",
        },
        {
          name: `P2 streaming, ${label}: rate vs direct`,
          measure: (r) => pct(r.p2.get(key)?.rate, r.p2.get("direct")?.rate),
          limit: 65,
          kind: "min",
          unit: "%",
        },
      ];
    }),
    {
      name: "P3 100 KB prompt through context.wasm, end to end, warmed up: conductor CPU added vs the plain-JS edit",
      measure: (r) => (r.p3 ? (r.p3.contextCpuUs - r.p3.cordon0CpuUs) / r.p3.jsEditUs : undefined),
      limit: 0.5,
      kind: "max",
      unit: "×",
    },
    {
      name: "P4 cold start, 3 proxies, warm cache: over direct",
      measure: (r) => {
        const three = r.p4.get(watching3);
        const direct = r.p4.get("direct");
        return three === undefined || direct === undefined ? undefined : three - direct;
      },
      limit: 60,
      kind: "max",
      unit: "ms",
    },
    { name: "P5 memory per added proxy, idle", measure: (r) => perProxy(r, watching3, "idleRssMiB"), limit: 1, kind: "max", unit: "MiB" },
    {
      name: "P5 memory per added proxy, after the P1 load",
      measure: (r) => perProxy(r, watching3, "rssMiB"),
      limit: 2,
      kind: "max",
      unit: "MiB",
    },
  ];
}

export interface Verdict {
  goal: Goal;
  value: number | undefined;
  /** undefined: not measured in this run. */
  met: boolean | undefined;
}

export function judge(all: Goal[], results: Results): Verdict[] {
  return all.map((goal) => {
    const value = goal.measure(results);
    const met = value === undefined || Number.isNaN(value) ? undefined : goal.kind === "max" ? value <= goal.limit : value >= goal.limit;
    return { goal, value, met };
  });
}
