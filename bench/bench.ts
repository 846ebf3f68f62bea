/**
 * `make bench`: what a chain costs, measured in one run, each figure against its baseline from the
 * same run (absolute numbers vary with the machine; the ratios and CPU per message are the point).
 * Progress goes to stderr, the tables to stdout, and last the goals of issue 20 (goals.ts), each
 * with its target and whether this run met it.
 *
 * Peers are minimal raw NDJSON programs (`raw-agent.ts`, `raw-proxy.ts`) and the client is a raw
 * NDJSON writer (chain.ts), so what shows is the conductor's own cost.
 *
 *   P1  prompt round trip (request → one update → response) over BENCH_PROMPTS sequential prompts after BENCH_WARMUP ones:
 *       direct; Cordon with 0, 1 and 3 pass-through WASM proxies under each isolation mode;
 *       `@thinkwell/conductor` 0.5.7 with 0 and 3 pass-through process proxies. Conductor RSS is
 *       the process tree without the agent (thinkwell's proxy processes included).
 *   P2  `agent_message_chunk`s streamed through 3 pass-through proxies, two turns of BENCH_CHUNKS on
 *       each chain (the first with V8's optimizing in it, the second steady): rate, % of direct,
 *       and conductor CPU per chunk (the steady figure on a loaded machine); then, in one
 *       process with in-memory peers (in-process-chain.ts), the conductor's CPU per chunk and per
 *       P1 round trip alone.
 *   P3  BENCH_P3 100 KB prompts through `context.wasm`, end to end through the conductor (its CPU per
 *       prompt over Cordon+0's) vs the same edit in plain JS, each chain after BENCH_WARMUP prompts (as
 *       P1; `first 200` shows the warm-up), then all measured in turns of 50 prompts so the
 *       machine's drift falls on each alike (the ratio printed with its standard error over the
 *       turns: ~±0.12 at 1000 prompts, ~±0.08 at 3000); and the sandbox alone, in this process.
 *       The goal's text (an escaped quote every 6 characters), then prose (a newline escape per line).
 *   P4  cold start to the first `initialize` answer with 3 proxies (warm compile cache) vs direct;
 *       where NODE_EXTRA_CA_CERTS is set, direct and the default isolation again without it.
 *   P5  RSS per added proxy: just up (one session), idle (2 s with nothing asked) and after the P1 prompts;
 *       then, in one process (sandbox-memory.ts), what is paid once per process and what per proxy.
 *
 * Env: BENCH_PROMPTS (2000), BENCH_WARMUP (3000), BENCH_CHUNKS (100000), BENCH_STARTS (5), BENCH_P3 (1000), BENCH_ABI=1
 * adds the canonical-host vs jco-glue table, BENCH_ONLY=P2,P4 runs only those parts (the goals of
 * the others then read "not measured").
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadComponent } from "../runtime/sandbox/component-loader.js";
import { DEFAULT_LIMITS, type ProxySandbox } from "../runtime/sandbox/sandbox.js";
import { DEFAULT_ISOLATION, ISOLATIONS, sandboxFactory } from "../runtime/sandbox/sandbox-factory.js";
import { Chain, cacheDir, cordonArgs, isAgent, open, rawAgent, root, streamingArgs, thinkwellArgs, WATCH_ALL } from "./chain.js";
import { goals, judge, type Results, type RoundTrip, type Stream } from "./goals.js";
import type { InProcessChains } from "./in-process-chain.js";
import { treeCpuMs, treeRssMiB } from "./process-tree.js";
import type { SandboxMemory } from "./sandbox-memory.js";
import { median, quantile, standardError } from "./stats.js";
import { fixed, goalsTable, table, times } from "./table.js";

const PROMPTS = Number(process.env.BENCH_PROMPTS ?? 2000);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100_000);
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const P3_ROUNDS = Number(process.env.BENCH_P3 ?? 1000);
/**
 * Prompts through `context.wasm` in the sandbox alone: at most 1000, which this in-process figure
 * needs no more of, and which stays within a guest's output budget (the harness writes each
 * prompt out whole: 3000 in a second or so would exceed 256 Mi code units in 10 s).
 */
const P3_ALONE = Math.min(P3_ROUNDS, 1000);
/**
 * Prompts before the measured ones. Every process on the path (client, conductor, proxies' code,
 * agent) runs its JIT and grows its heap over the first few thousand messages — the first 200
 * take 2–3× the steady state here — so P1 compares steady states; `first 200` shows the warm-up.
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3000);
const FIRST = Math.min(200, WARMUP);
/** How long after the session opened P5's idle figure is read (nothing asked meanwhile). */
const IDLE_MS = 2_000;
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(",").map((s) => s.trim().toUpperCase())) : null;
const runs = (part: string) => ONLY === null || ONLY.has(part);

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The P3 edit: context.wasm's rules, and the user's 100 KB block (175 KB of UTF-8, 25,000 escaped quotes). */
const RULES = "Project rules (AGENTS.md): answer briefly.";
const BIG_TEXT = 'x"ü\n'.repeat(25_000);
/**
 * The same edit on ~100 KB of prose, a line's newline escape every 62 characters and no quote:
 * what a pasted file or document is like (BIG_TEXT, an escaped quote every 6, is the goal's case).
 */
const PROSE_TEXT = "The quick brown fox jumps over the lazy dog, again and again.\n".repeat(1_640);

/** A measured path: a stable key (goals.ts reads results by it), the row's name, how to start it. */
interface Config {
  key: string;
  name: string;
  argv: string[];
  kind: "direct" | "cordon" | "thinkwell";
  env?: Record<string, string>;
}

const configs: Config[] = [
  { key: "direct", name: "direct: client → raw agent", argv: rawAgent, kind: "direct" },
  { key: "cordon0", name: "cordon, 0 proxies", argv: cordonArgs(0, DEFAULT_ISOLATION), kind: "cordon" },
  ...ISOLATIONS.flatMap((isolation) =>
    [1, 3].map(
      (n): Config => ({
        key: `${isolation}${n}`,
        name: `cordon, ${n} WASM proxies (${isolation})`,
        argv: cordonArgs(n, isolation),
        kind: "cordon",
        env: WATCH_ALL,
      }),
    ),
  ),
  {
    key: `${DEFAULT_ISOLATION}3-declared`,
    name: `cordon, 3 WASM proxies (${DEFAULT_ISOLATION}, declared: watch nothing)`,
    argv: cordonArgs(3, DEFAULT_ISOLATION),
    kind: "cordon",
  },
  { key: "thinkwell0", name: "thinkwell 0.5.7, 0 proxies", argv: thinkwellArgs(0), kind: "thinkwell" },
  { key: "thinkwell3", name: "thinkwell 0.5.7, 3 process proxies", argv: thinkwellArgs(3), kind: "thinkwell" },
];

async function roundTrips(config: Config): Promise<RoundTrip> {
  const { chain, startMs, session } = await open(config.argv, config.env);
  const rss = () => (config.kind === "direct" ? treeRssMiB(chain.child.pid!) : treeRssMiB(chain.child.pid!, isAgent));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await sleep(300); // start-up work (compiles on other threads) settles
  const upRssMiB = rss();
  // Idle as an editor's session mostly is: nothing asked for a while (the backstop's watchdog ends after 1 s of it).
  await sleep(IDLE_MS - 300);
  const idleRssMiB = rss();
  let firstMs = 0;
  for (let i = 0; i < WARMUP; i++) {
    const t = performance.now();
    await chain.prompt(session, `warm ${i}`);
    if (i < FIRST) firstMs += performance.now() - t;
  }
  const before = chain.updates;
  const samples: number[] = [];
  const pid = chain.child.pid!;
  const cpu = () => (config.kind === "direct" ? treeCpuMs(pid) : treeCpuMs(pid, isAgent));
  const cpu0 = cpu();
  for (let i = 0; i < PROMPTS; i++) {
    const t = performance.now();
    await chain.prompt(session, `hello ${i}`);
    samples.push(performance.now() - t);
  }
  const cpuUs = ((cpu() - cpu0) * 1000) / PROMPTS;
  if (chain.updates - before !== PROMPTS) throw new Error(`${config.name}: ${chain.updates - before} updates for ${PROMPTS} prompts`);
  const rssMiB = rss();
  await chain.close();
  samples.sort((a, b) => a - b);
  return {
    startMs,
    first: firstMs / FIRST,
    mean: mean(samples),
    p50: quantile(samples, 0.5),
    p95: quantile(samples, 0.95),
    cpuUs,
    rssMiB,
    upRssMiB,
    idleRssMiB,
  };
}

/**
 * Streaming on one chain: chunks per second, and the CPU time the path between client and agent
 * spent per chunk (the conductor's process tree without the agent; for direct, the agent's own) —
 * a figure a loaded machine disturbs much less than the rate. Two `stream N` prompts after 1,000
 * chunks: the first N carry V8's optimizing of the path, on its helper threads (1–2 µs per chunk
 * over the first 50,000 through 3 watching proxies, ~0.1 after; per thread from `schedstat`) and
 * the heap's growth to its working size; the next N are the steady figure, what a long session
 * pays, which the goals read (as P1 and P3 compare steady states after their warm-up).
 */
async function stream(argv: string[], extraEnv?: Record<string, string>): Promise<Stream> {
  const { chain, session } = await open(argv, extraEnv);
  await chain.prompt(session, "stream 1000"); // the first messages of each kind
  const pid = chain.child.pid!;
  const direct = argv === rawAgent;
  const cpu = () => (direct ? treeCpuMs(pid) : treeCpuMs(pid, isAgent));
  const once = async (): Promise<{ rate: number; cpuUs: number }> => {
    const before = chain.updates;
    const cpu0 = cpu();
    const t = performance.now();
    await chain.prompt(session, `stream ${CHUNKS}`);
    const seconds = (performance.now() - t) / 1000;
    const cpuUs = ((cpu() - cpu0) * 1000) / CHUNKS;
    if (chain.updates - before !== CHUNKS) throw new Error(`stream: ${chain.updates - before} of ${CHUNKS} chunks`);
    return { rate: CHUNKS / seconds, cpuUs };
  };
  const first = await once();
  const steady = await once();
  await chain.close();
  return { ...steady, first };
}

/**
 * Median time to the first `initialize` answer over STARTS cold starts, and the median CPU the
 * path between client and agent had spent by then (the conductor's process tree without the agent;
 * for direct, the agent's own): on a loaded machine the wall figure swings with the other jobs,
 * the CPU figure much less.
 */
async function coldStart(argv: string[], extraEnv?: Record<string, string>): Promise<{ ms: number; cpuMs: number }> {
  const startTimes: number[] = [];
  const cpuTimes: number[] = [];
  const direct = argv === rawAgent;
  for (let i = 0; i < STARTS; i++) {
    const t = performance.now();
    const chain = new Chain(argv, extraEnv);
    await chain.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    startTimes.push(performance.now() - t);
    const pid = chain.child.pid!;
    cpuTimes.push(direct ? treeCpuMs(pid) : treeCpuMs(pid, isAgent));
    await chain.close();
  }
  return { ms: median(startTimes), cpuMs: median(cpuTimes) };
}

/** A client's `session/prompt` whose one text block is `block` (P3's 100 KB prompt). */
const p3Prompt = (id: number, block: string, sessionId = "s1") =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: block }] } });

/** The P3 edit in plain JS, what the target compares with: parse the prompt, prepend the rules, write it. */
function plainJsEdit(text: string): string {
  const m = JSON.parse(text);
  m.params.prompt.unshift({ type: "text", text: RULES });
  return JSON.stringify({ jsonrpc: "2.0", id: 1, method: "proxy/successor", params: m });
}

/** Times plain-JS edits of fresh prompts carrying `block` (built untimed): `(n) => ms` for `n` of them, after 50 untimed. */
function plainJsEdits(block: string): (n: number) => number {
  let id = 0;
  const edits = (n: number) => {
    let ms = 0;
    for (let i = 0; i < n; i++) {
      const text = p3Prompt(++id, block);
      const t = performance.now();
      plainJsEdit(text);
      ms += performance.now() - t;
    }
    return ms;
  };
  edits(50);
  return edits;
}

/** One chain of P3, warmed up: `run(n)` sends `n` 100 KB prompts and says what they cost. */
interface LargePromptChain {
  /** Conductor CPU per prompt over the first `FIRST` prompts of the warm-up, µs (NaN without a warm-up). */
  firstCpuUs: number;
  run(n: number): Promise<{ cpuMs: number; ms: number }>;
  close(): Promise<void>;
}

/**
 * P3 end to end: `argv` between the client and the raw agent, sent 100 KB prompts. `run` measures
 * conductor CPU (process tree without the agent) and wall time. The agent answers each prompt with
 * `ok (<length of its first block> chars)`, which proves the edit reached it (`expectChunk`).
 *
 * Warmed up as P1 is (`WARMUP` prompts, the first `FIRST` measured): V8 goes on optimizing the
 * conductor's functions through the first few thousand 100 KB prompts (`--trace-opt`: ~40
 * functions a second at first, ~2 after 3,000 prompts), on its helper threads, which count in the
 * conductor's CPU. The edit's path has more functions of its own to optimize than Cordon 0's, so
 * after 50 prompts of warm-up their one-time compiling was still part of the CPU added per prompt.
 */
async function openLargePrompts(argv: string[], expectChunk: string, block: string): Promise<LargePromptChain> {
  const { chain, session } = await open(argv);
  const once = () => chain.request("session/prompt", null, (id: number) => p3Prompt(id, block, session));
  const pid = chain.child.pid!;
  const cpu0 = treeCpuMs(pid, isAgent);
  for (let i = 0; i < FIRST; i++) await once();
  const firstCpuUs = ((treeCpuMs(pid, isAgent) - cpu0) * 1000) / FIRST;
  for (let i = FIRST; i < Math.max(WARMUP, 1); i++) await once();
  if (chain.lastChunk !== expectChunk) throw new Error(`P3 ${argv.join(" ")}: the agent said "${chain.lastChunk}", not "${expectChunk}"`);
  return {
    firstCpuUs,
    async run(n) {
      const cpu0 = treeCpuMs(pid, isAgent);
      const t = performance.now();
      for (let i = 0; i < n; i++) await once();
      return { cpuMs: treeCpuMs(pid, isAgent) - cpu0, ms: performance.now() - t };
    },
    close: () => chain.close(),
  };
}

/** Prompts per turn of P3's interleaving. */
const P3_BLOCK = 50;

/**
 * P3's chains and the plain-JS edit measured in turns of `P3_BLOCK` prompts each, round after
 * round, so that the machine's drift (its speed here moves by ±30 % within a minute) falls on all of
 * them alike: what P3 reports is a difference (CPU added over Cordon 0) and a ratio of it.
 * Returns µs per prompt: each chain's conductor CPU and round trip, and the edit's.
 */
async function interleavedLargePrompts(
  chains: LargePromptChain[],
  jsEdit: (n: number) => number,
): Promise<{ runs: { cpuUs: number; ms: number; ratioError: number }[]; jsEditUs: number }> {
  const totals = chains.map(() => ({ cpuMs: 0, ms: 0 }));
  // Each turn's CPU added over the first chain (Cordon 0) in that turn, ms.
  const added: number[][] = chains.map(() => []);
  let jsMs = 0;
  for (let done = 0; done < P3_ROUNDS; done += P3_BLOCK) {
    const n = Math.min(P3_BLOCK, P3_ROUNDS - done);
    const cpu: number[] = [];
    for (const [i, chain] of chains.entries()) {
      const { cpuMs, ms } = await chain.run(n);
      totals[i].cpuMs += cpuMs;
      totals[i].ms += ms;
      cpu.push(cpuMs);
    }
    jsMs += jsEdit(n);
    for (const [i, ms] of cpu.entries()) added[i].push(ms - cpu[0]);
  }
  const turns = added[0].length;
  const jsPerTurn = jsMs / turns;
  return {
    runs: totals.map((t, i) => ({
      cpuUs: (t.cpuMs * 1000) / P3_ROUNDS,
      ms: t.ms / P3_ROUNDS,
      ratioError: standardError(added[i]) / jsPerTurn,
    })),
    jsEditUs: (jsMs * 1000) / P3_ROUNDS,
  };
}

/** A chain config with `context.wasm` configured with the P3 rules. */
function contextChain(): string {
  const file = join(cacheDir, "p3-chain.json");
  writeFileSync(
    file,
    JSON.stringify({ proxies: [{ name: "context", wasm: `${root}proxies/dist/context.wasm`, config: { text: RULES } }] }),
  );
  return file;
}

/**
 * P3 in this process: µs per 100 KB prompt through context.wasm in each sandbox alone (text in, text
 * out: the guest and the ABI, without the host's routing around it), and the same edit in plain JS.
 */
async function contextInSandbox(block = BIG_TEXT): Promise<{ name: string; us: number }[]> {
  const prompt = (id: number) => p3Prompt(id, block);
  const component = await loadComponent(`${root}proxies/dist/context.wasm`, { cacheDir });
  const rows: { name: string; us: number }[] = [];
  const sample = prompt(1);
  /** Mean µs of `run` on a fresh 100 KB prompt; `after` (untimed) settles what the prompt left behind. */
  const time = async (
    run: (text: string) => Promise<unknown> | unknown,
    after: (result: unknown) => Promise<unknown> | unknown = () => {},
  ) => {
    for (let i = 0; i < Math.min(50, P3_ALONE); i++) await after(await run(prompt(i + 1_000_000)));
    let total = 0;
    for (let i = 0; i < P3_ALONE; i++) {
      const text = prompt(i + 1);
      const t = performance.now();
      const result = await run(text);
      total += performance.now() - t;
      await after(result);
    }
    return (total * 1000) / P3_ALONE;
  };
  rows.push({ name: "plain JS in the conductor (parse, prepend, stringify)", us: await time(plainJsEdit) });
  for (const isolation of ISOLATIONS) {
    const sandbox: ProxySandbox = sandboxFactory(isolation)(component, DEFAULT_LIMITS, []);
    let settle: { resolve: (m: string[]) => void; reject: (e: Error) => void } | null = null;
    await sandbox.start({
      output: (m) => settle?.resolve(m),
      failed: (failure) => settle?.reject(new Error(`context.wasm (${isolation}) failed: ${failure.message}`)),
    });
    const through = (text: string) =>
      new Promise<string[]>((resolve, reject) => {
        settle = { resolve, reject };
        sandbox.deliver(text);
      });
    sandbox.deliver(JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "context", config: { text: RULES } } }));
    // The proxy forwards each prompt as its own request and waits for the answer: answer it, untimed.
    const answer = async (out: unknown) => {
      const forwarded = (out as string[]).map((m) => JSON.parse(m)).find((m) => m.method === "proxy/successor" && m.id !== undefined);
      if (!forwarded)
        throw new Error(`context.wasm did not forward the prompt: ${(out as string[]).map((m) => m.slice(0, 120)).join(" | ")}`);
      await through(JSON.stringify({ jsonrpc: "2.0", id: forwarded.id, result: { stopReason: "end_turn" } }));
    };
    const check = await through(sample);
    if (!check.some((m) => m.includes(RULES)))
      throw new Error(`context.wasm did not prepend the rules: ${check.map((m) => m.slice(0, 120)).join(" | ")}`);
    await answer(check);
    rows.push({ name: `context.wasm, ${isolation} sandbox (text in, text out)`, us: await time(through, answer) });
    await sandbox.stop();
  }
  return rows;
}

async function main() {
  progress(
    `Node ${process.version}; ${PROMPTS} prompts per configuration (+${WARMUP} warm-up), ${CHUNKS} streamed chunks, ${STARTS} cold starts`,
  );
  // Warm the compile cache (P4 measures starts with a warm cache).
  await (await open(cordonArgs(1, "worker"))).chain.close();
  const results: Results = { p1: new Map(), p2: new Map(), p4: new Map() };
  const out: string[] = [];

  if (runs("P1") || runs("P5")) {
    for (const config of configs) {
      progress(`P1 ${config.name}`);
      results.p1.set(config.key, await roundTrips(config));
    }
    const base = (key: string) => results.p1.get(key)!.mean;
    out.push(
      table(
        `P1 — prompt round trip (ms) with one update, ${PROMPTS} sequential prompts after ${WARMUP} warm-up ones; conductor RSS = process tree without the agent`,
        [
          '("WASM proxies": pass-through proxies that see every message — interest filters off; "declared": the same proxies with their manifest\'s filter: they watch nothing;',
          " CPU per round trip: the conductor's process tree without the agent, all its threads, over the timed prompts — direct: the agent's own)",
        ],
        [
          "configuration",
          "start (ms)",
          `first ${FIRST} mean`,
          "mean",
          "p50",
          "p95",
          "mean vs direct",
          "mean vs cordon 0",
          "mean vs thinkwell 3",
          "CPU µs per round trip",
          "RSS (MiB)",
        ],
        configs.map((c) => {
          const r = results.p1.get(c.key)!;
          return [
            c.name,
            fixed(r.startMs, 0),
            fixed(r.first),
            fixed(r.mean),
            fixed(r.p50),
            fixed(r.p95),
            times(r.mean, base("direct")),
            times(r.mean, base("cordon0")),
            times(r.mean, base("thinkwell3")),
            fixed(r.cpuUs, 0),
            c.kind === "direct" ? `${fixed(r.rssMiB, 0)} (agent)` : fixed(r.rssMiB, 0),
          ];
        }),
      ),
    );
  }

  if (runs("P2")) {
    const paths: { key: string; name: string; argv: string[]; env?: Record<string, string> }[] = [
      { key: "direct", name: "direct (CPU: the agent's)", argv: rawAgent },
      { key: "cordon0", name: "cordon, 0 proxies (the conductor's own floor)", argv: streamingArgs(0, DEFAULT_ISOLATION) },
      ...ISOLATIONS.map((isolation) => ({
        key: `${isolation}3-watching`,
        name: `cordon, 3 WASM proxies (${isolation}) watching every update`,
        argv: streamingArgs(3, isolation),
        env: WATCH_ALL,
      })),
      ...ISOLATIONS.map((isolation) => ({
        key: `${isolation}3-declared`,
        name: `cordon, 3 WASM proxies (${isolation}) declared not watching updates`,
        argv: streamingArgs(3, isolation),
      })),
      { key: "thinkwell3", name: "thinkwell 0.5.7, 3 process proxies", argv: thinkwellArgs(3) },
    ];
    for (const path of paths) {
      progress(`P2 ${path.name}`);
      results.p2.set(path.key, await stream(path.argv, path.env));
    }
    const direct = results.p2.get("direct")!.rate;
    const directFirst = results.p2.get("direct")!.first.rate;
    out.push(
      table(
        `P2 — agent_message_chunk updates streamed through 3 pass-through proxies: two turns of ${CHUNKS} after 1,000, the second steady`,
        [
          "(CPU µs per chunk: the conductor's process tree without the agent — all its threads, and thinkwell's proxy processes;",
          " the first turn's figures carry V8's optimizing of the path and the heap's growth, the goals read the second's)",
        ],
        ["path", "chunks/s", "% of direct", "conductor CPU µs per chunk", `first ${CHUNKS}: chunks/s`, "CPU µs per chunk"],
        paths.map((p) => {
          const s = results.p2.get(p.key)!;
          return [
            p.name,
            fixed(s.rate, 0),
            `${fixed((100 * s.rate) / direct, 0)} %`,
            fixed(s.cpuUs, 1),
            `${fixed(s.first.rate, 0)} (${fixed((100 * s.first.rate) / directFirst, 0)} %)`,
            fixed(s.first.cpuUs, 1),
          ];
        }),
      ),
    );
    progress("P2 and P1 in one process");
    const inProcess: InProcessChains = JSON.parse(
      execFileSync(process.execPath, [join(root, "dist/bench/in-process-chain.js"), `${root}proxies/dist/passthrough.wasm`], {
        env: { ...process.env, CORDON_CACHE_DIR: cacheDir },
        encoding: "utf8",
      }),
    );
    const row = (name: string, key: "watching3" | "declared3") => [
      name,
      fixed(inProcess.stream.cpuUs[key], 2),
      fixed(inProcess.stream.overCordon0[key], 2),
      fixed(inProcess.roundTrip.cpuUs[key], 1),
      fixed(inProcess.roundTrip.overCordon0[key], 2),
    ];
    out.push(
      table(
        `P2 and P1 in one process — the conductor's CPU with in-memory peers: no pipes, no other processes (${inProcess.rounds} alternated rounds of ${inProcess.chunksPerRound} chunks, and of ${inProcess.promptsPerRound} prompts with one update each)`,
        [
          "(routing, the thread sandboxes and the guests alone; medians of each chain's rounds and of its ratio to Cordon 0 in the same round)",
        ],
        ["path", "CPU µs per chunk", "× cordon 0", "CPU µs per round trip", "× cordon 0"],
        [
          ["cordon, 0 proxies", fixed(inProcess.stream.cpuUs.cordon0, 2), "1", fixed(inProcess.roundTrip.cpuUs.cordon0, 1), "1"],
          row("cordon, 3 WASM proxies (thread) watching every update", "watching3"),
          row("cordon, 3 WASM proxies (thread) declared not watching updates", "declared3"),
        ],
      ),
    );
  }

  if (runs("P3")) {
    const texts = [
      { name: 'x"ü\\n text', block: BIG_TEXT },
      { name: "prose", block: PROSE_TEXT },
    ];
    const ends: {
      name: string;
      cpuUs: number;
      ms: number;
      ratioError: number;
      firstCpuUs: number;
      zero?: { cpuUs: number; firstCpuUs: number };
      jsEditUs: number;
    }[] = [];
    const alone: { name: string; us: number; jsEditUs: number }[] = [];
    const jsEdits: string[] = [];
    for (const { name: textName, block } of texts) {
      progress(`P3 100 KB prompts (${textName}) through context.wasm, in the sandbox alone`);
      const inSandbox = await contextInSandbox(block);
      alone.push(...inSandbox.map((r) => ({ name: `${r.name}, ${textName}`, us: r.us, jsEditUs: inSandbox[0].us })));
      // The goal's text in both isolations; prose in the default one. All of them, and the plain-JS
      // edit the target compares with, measured in turns (interleavedLargePrompts).
      const isolations = block === BIG_TEXT ? ISOLATIONS : [DEFAULT_ISOLATION];
      progress(
        `P3 100 KB prompts (${textName}) end to end, each chain after ${WARMUP} of warm-up, then in turns: cordon 0, cordon + context.wasm (${isolations.join(", ")}), plain JS`,
      );
      const chains = [await openLargePrompts(cordonArgs(0, DEFAULT_ISOLATION), `ok (${block.length} chars)`, block)];
      for (const isolation of isolations) {
        chains.push(await openLargePrompts(cordonArgs(0, isolation, ["--config", contextChain()]), `ok (${RULES.length} chars)`, block));
      }
      const { runs, jsEditUs } = await interleavedLargePrompts(chains, plainJsEdits(block));
      for (const chain of chains) await chain.close();
      jsEdits.push(`${fixed(jsEditUs, 0)} µs per prompt, ${textName}`);
      const [zeroRun, ...withContext] = runs;
      const zero = { ...zeroRun, firstCpuUs: chains[0].firstCpuUs };
      ends.push({ name: `cordon, 0 proxies, ${textName}`, ...zero, jsEditUs });
      for (const [k, isolation] of isolations.entries()) {
        const run = { ...withContext[k], firstCpuUs: chains[k + 1].firstCpuUs };
        ends.push({ name: `cordon + context.wasm (${isolation}), ${textName}`, ...run, zero, jsEditUs });
        if (isolation === DEFAULT_ISOLATION && block === BIG_TEXT) {
          results.p3 = { jsEditUs, cordon0CpuUs: zero.cpuUs, contextCpuUs: run.cpuUs };
        }
      }
    }
    out.push(
      table(
        `P3 — one 100 KB prompt, context.wasm prepends a text block; end to end through the conductor (${P3_ROUNDS} prompts each after ${WARMUP} of warm-up, in turns of ${P3_BLOCK})`,
        [
          `(plain JS edit in this process, in the same turns: parse, prepend, stringify: ${jsEdits.join("; ")})`,
          "(the goal's text is x\"ü\\n: an escaped quote every 6 characters; prose: a newline escape every 62, as a pasted document)",
          `(± the standard error of the added CPU over the ${Math.ceil(P3_ROUNDS / P3_BLOCK)} turns: a turn of ${P3_BLOCK} prompts moves by ~±20 % with the collector's and the machine's timing)`,
          `(first ${FIRST}: the warm-up's first prompts, each chain alone, while V8 still compiles the path)`,
        ],
        [
          "path",
          "round trip (ms)",
          "conductor CPU µs per prompt",
          "CPU added over cordon 0",
          "added vs plain JS edit",
          `first ${FIRST}: CPU µs per prompt`,
          `first ${FIRST}: added vs plain JS`,
        ],
        ends.map((e) => [
          e.name,
          fixed(e.ms, 2),
          fixed(e.cpuUs, 0),
          e.zero === undefined ? "—" : fixed(e.cpuUs - e.zero.cpuUs, 0),
          e.zero === undefined ? "—" : `${times(e.cpuUs - e.zero.cpuUs, e.jsEditUs)} ± ${fixed(e.ratioError, 2)}`,
          FIRST === 0 ? "—" : fixed(e.firstCpuUs, 0),
          FIRST === 0 || e.zero === undefined ? "—" : times(e.firstCpuUs - e.zero.firstCpuUs, e.jsEditUs),
        ]),
      ),
      table(
        "P3, the sandbox alone — text in, text out, in this process (µs per message; the host's routing around the guest not included)",
        [],
        ["path", "µs", "vs plain JS"],
        alone.map((r) => [r.name, fixed(r.us, 0), times(r.us, r.jsEditUs)]),
      ),
    );
  }

  if (runs("P4")) {
    progress("P4 cold starts");
    const starts: { key: string; name: string; argv: string[]; env?: Record<string, string> }[] = [
      { key: "direct", name: "direct", argv: rawAgent },
      ...ISOLATIONS.map((isolation) => ({
        key: `${isolation}3`,
        name: `cordon, 3 WASM proxies (${isolation})`,
        argv: cordonArgs(3, isolation),
      })),
      { key: "thinkwell3", name: "thinkwell 0.5.7, 3 process proxies", argv: thinkwellArgs(3) },
    ];
    // Node reads and parses NODE_EXTRA_CA_CERTS at every process's boot, before any of its code
    // runs (~35 ms for a system bundle): where it is set, the same starts again without it show
    // what is Node's boot and what is Cordon's (the agent Cordon starts inherits Cordon's env).
    const caFile = process.env.NODE_EXTRA_CA_CERTS;
    if (caFile) {
      const unset = { NODE_EXTRA_CA_CERTS: "" };
      starts.push(
        { key: "direct-noca", name: "direct, NODE_EXTRA_CA_CERTS unset", argv: rawAgent, env: unset },
        {
          key: `${DEFAULT_ISOLATION}3-noca`,
          name: `cordon, 3 WASM proxies (${DEFAULT_ISOLATION}), NODE_EXTRA_CA_CERTS unset`,
          argv: cordonArgs(3, DEFAULT_ISOLATION),
          env: unset,
        },
      );
    }
    const cpu = new Map<string, number>();
    for (const s of starts) {
      const { ms, cpuMs } = await coldStart(s.argv, s.env);
      results.p4.set(s.key, ms);
      cpu.set(s.key, cpuMs);
    }
    const direct = results.p4.get("direct")!;
    out.push(
      table(
        `P4 — cold start to the first initialize answer (median of ${STARTS}, warm compile cache)`,
        [
          "(CPU: what the path had spent by the answer — the conductor's process tree without the agent, Node's own boot included; direct: the agent's)",
        ],
        ["path", "ms", "vs direct", "CPU (ms)"],
        starts.map((s) => {
          const ms = results.p4.get(s.key)!;
          const base = s.key.endsWith("-noca") ? results.p4.get("direct-noca")! : direct;
          return [s.name, fixed(ms, 0), s.key.startsWith("direct") ? "—" : `+${fixed(ms - base, 0)} ms`, fixed(cpu.get(s.key)!, 0)];
        }),
      ),
    );
  }

  if (results.p1.size > 0) {
    const at = ["upRssMiB", "idleRssMiB", "rssMiB"] as const;
    const per = (three: string, zero: string) => {
      const a = results.p1.get(three)!;
      const b = results.p1.get(zero)!;
      return at.map((k) => fixed((a[k] - b[k]) / 3, 1));
    };
    out.push(
      table(
        "P5 — conductor RSS per added proxy (3 proxies vs 0, from P1)",
        [
          `just up: 0.3 s after the session opened; idle: ${IDLE_MS / 1000} s after, nothing asked meanwhile; after load: right after the P1 prompts`,
          "(after load the figure includes garbage not yet collected: V8 grows its young generation with the allocation rate)",
        ],
        ["path", "MiB per proxy, just up", "idle", "after load"],
        [
          ...ISOLATIONS.map((isolation) => [`cordon (${isolation})`, ...per(`${isolation}3`, "cordon0")]),
          ["thinkwell 0.5.7 (process proxies)", ...per("thinkwell3", "thinkwell0")],
        ],
      ),
    );
  }

  if (results.p1.size > 0) {
    progress("P5 in one process");
    const m: SandboxMemory = JSON.parse(
      execFileSync(process.execPath, ["--expose-gc", join(root, "dist/bench/sandbox-memory.js"), `${root}proxies/dist/passthrough.wasm`], {
        env: { ...process.env, CORDON_CACHE_DIR: cacheDir },
        encoding: "utf8",
      }),
    );
    out.push(
      table(
        "P5 in one process — RSS added (MiB) by thread sandboxes of passthrough.wasm, each read after forced collections",
        [
          "(once per process: the component's load and the first sandbox; each further proxy; the backstop's watchdog, started only by a guest call that runs long, while up and what stays after its idle exit)",
        ],
        ["load", "first sandbox", "each further sandbox", "watchdog up", "watchdog ended"],
        [[fixed(m.loadMiB, 2), fixed(m.firstMiB, 2), fixed(m.furtherMiB, 2), fixed(m.watchdogMiB, 2), fixed(m.watchdogGoneMiB, 2)]],
      ),
    );
  }

  out.push(goalsTable(`Goals (issue 20), default isolation "${DEFAULT_ISOLATION}"`, judge(goals(DEFAULT_ISOLATION), results)));
  console.log(out.join("\n"));

  if (process.env.BENCH_ABI === "1") {
    const { abiHostBench } = await import("./abi-host.js");
    await abiHostBench(`${root}proxies/dist/passthrough.wasm`);
  }
}

await main();
