/**
 * `make bench`: what a chain costs, measured in one run, each figure against its baseline from the
 * same run (absolute numbers vary with the machine; the ratios are the point). Progress goes to
 * stderr, the tables to stdout.
 *
 * Peers are minimal raw NDJSON programs (`raw-agent.ts`, `raw-proxy.ts`) and the client is a raw
 * NDJSON writer, so what shows is the conductor's own cost.
 *
 *   P1  prompt round trip (request → one update → response) over BENCH_PROMPTS sequential prompts after BENCH_WARMUP ones:
 *       direct; Cordon with 0, 1 and 3 pass-through WASM proxies under each isolation mode;
 *       `@thinkwell/conductor` 0.5.7 with 0 and 3 pass-through process proxies. Conductor RSS is
 *       the process tree without the agent (thinkwell's proxy processes included).
 *   P2  BENCH_CHUNKS streamed `agent_message_chunk`s through 3 pass-through proxies, % of direct.
 *   P3  a 100 KB prompt through `context.wasm` vs the same edit in plain JS, in this process.
 *   P4  cold start to the first `initialize` answer with 3 proxies (warm compile cache) vs direct.
 *   P5  RSS per added proxy: idle (up, one session) and after the P1 prompts.
 *
 * Env: BENCH_PROMPTS (2000), BENCH_WARMUP (3000), BENCH_CHUNKS (100000), BENCH_STARTS (5), BENCH_P3 (300), BENCH_ABI=1
 * adds the canonical-host vs jco-glue table, BENCH_ONLY=P2,P4 runs only those parts (no goals table).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadComponent } from "../runtime/sandbox/component-loader.js";
import { DEFAULT_LIMITS, type ProxySandbox } from "../runtime/sandbox/sandbox.js";
import { DEFAULT_ISOLATION, ISOLATIONS, type Isolation, sandboxFactory } from "../runtime/sandbox/sandbox-factory.js";
import { readLines } from "./ndjson.js";
import { treeCpuMs, treeRssMiB } from "./process-tree.js";

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const root = fileURLToPath(new URL("../..", import.meta.url));
const node = process.execPath;
const cordon = `${root}bin/cordon.js`;
const here = `${root}dist/bench`;
const rawAgent = [node, `${here}/raw-agent.js`];
const passthrough = `${root}proxies/dist/passthrough.wasm`;
const PROMPTS = Number(process.env.BENCH_PROMPTS ?? 2000);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100_000);
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const P3_ROUNDS = Number(process.env.BENCH_P3 ?? 300);
/**
 * Prompts before the measured ones. Every process on the path (client, conductor, proxies' code,
 * agent) runs its JIT and grows its heap over the first few thousand messages — the first 200
 * take 2–3× the steady state here — so P1 compares steady states; `first 200` shows the warm-up.
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3000);
const FIRST = Math.min(200, WARMUP);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(",").map((s) => s.trim().toUpperCase())) : null;
const runs = (part: string) => ONLY === null || ONLY.has(part);
// Each run gets its own compile cache (warmed by the first start), not the user's.
const cacheDir = mkdtempSync(join(tmpdir(), "cordon-bench-cache-"));
const env = { CORDON_LOG: "warn", CORDON_CACHE_DIR: cacheDir };

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

/** A raw NDJSON client on a spawned chain. */
class Chain {
  readonly child: ChildProcess;
  private next = 1;
  private readonly waiting = new Map<number, (m: Json) => void>();
  updates = 0;
  private readonly exited: Promise<void>;

  constructor(argv: string[], extraEnv: Record<string, string> = {}) {
    this.child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, ...env, ...extraEnv } });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    readLines(this.child.stdout!, (line) => {
      const m = JSON.parse(line);
      if (m.method === "session/update") this.updates++;
      else if (m.method === undefined) this.waiting.get(m.id)?.(m);
      else if (m.id !== undefined)
        this.child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } }) + "\n");
    });
  }

  request(method: string, params: Json): Promise<Json> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (m) => {
        this.waiting.delete(id);
        if (m.error) reject(new Error(`${method}: ${m.error.message}`));
        else resolve(m.result);
      });
      this.child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }

  prompt(sessionId: string, text: string): Promise<Json> {
    return this.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 3000);
    await this.exited;
    clearTimeout(timer);
  }
}

interface Config {
  name: string;
  argv: string[];
  kind: "direct" | "cordon" | "thinkwell";
  proxies: number;
  isolation?: Isolation;
  /** The proxies' interest filters: `watching` forces them off (every message crosses every sandbox). */
  filters?: "watching" | "declared";
  env?: Record<string, string>;
}

/** Interest filters off: every proxy sees every message, as one that watches everything would. */
const WATCH_ALL = { CORDON_INTEREST_FILTERS: "off" };

const cordonArgs = (n: number, isolation: Isolation, extra: string[] = []) => [
  node,
  cordon,
  "run",
  "--isolation",
  isolation,
  ...extra,
  ...Array.from({ length: n }, () => ["--proxy", passthrough]).flat(),
  "--",
  ...rawAgent,
];
const thinkwellArgs = (n: number) => [
  node,
  `${here}/thinkwell.js`,
  ...Array.from({ length: n }, () => `${node} ${here}/raw-proxy.js`),
  "--",
  rawAgent.join(" "),
];

const configs: Config[] = [
  { name: "direct: client → raw agent", argv: rawAgent, kind: "direct", proxies: 0 },
  { name: "cordon, 0 proxies", argv: cordonArgs(0, DEFAULT_ISOLATION), kind: "cordon", proxies: 0 },
  ...ISOLATIONS.flatMap((isolation) =>
    [1, 3].map(
      (n): Config => ({
        name: `cordon, ${n} WASM proxies (${isolation})`,
        argv: cordonArgs(n, isolation),
        kind: "cordon",
        proxies: n,
        isolation,
        filters: "watching",
        env: WATCH_ALL,
      }),
    ),
  ),
  {
    name: `cordon, 3 WASM proxies (${DEFAULT_ISOLATION}, declared: watch nothing)`,
    argv: cordonArgs(3, DEFAULT_ISOLATION),
    kind: "cordon",
    proxies: 3,
    isolation: DEFAULT_ISOLATION,
    filters: "declared",
  },
  { name: "thinkwell 0.5.7, 0 proxies", argv: thinkwellArgs(0), kind: "thinkwell", proxies: 0 },
  { name: "thinkwell 0.5.7, 3 process proxies", argv: thinkwellArgs(3), kind: "thinkwell", proxies: 3 },
];

interface RttResult {
  config: Config;
  startMs: number;
  /** Mean of the first prompts after start (cold). */
  first: number;
  mean: number;
  p50: number;
  p95: number;
  /** After the prompts. */
  rssMiB: number;
  /** Up and with a session, before any prompt. */
  idleRssMiB: number;
}

const notAgent = (cmd: string) => cmd.includes("raw-agent.js") && !cmd.includes("thinkwell.js") && !cmd.includes("cordon.js");

async function open(argv: string[], extraEnv?: Record<string, string>): Promise<{ chain: Chain; startMs: number; session: string }> {
  const t = performance.now();
  const chain = new Chain(argv, extraEnv);
  await chain.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const startMs = performance.now() - t;
  const { sessionId } = await chain.request("session/new", { cwd: "/tmp", mcpServers: [] });
  return { chain, startMs, session: sessionId };
}

async function rtt(config: Config): Promise<RttResult> {
  const { chain, startMs, session } = await open(config.argv, config.env);
  const rss = () => (config.kind === "direct" ? treeRssMiB(chain.child.pid!) : treeRssMiB(chain.child.pid!, notAgent));
  await new Promise((r) => setTimeout(r, 300)); // start-up work (compiles on other threads) settles
  const idleRssMiB = rss();
  let firstMs = 0;
  for (let i = 0; i < WARMUP; i++) {
    const t = performance.now();
    await chain.prompt(session, `warm ${i}`);
    if (i < FIRST) firstMs += performance.now() - t;
  }
  const before = chain.updates;
  const times: number[] = [];
  for (let i = 0; i < PROMPTS; i++) {
    const t = performance.now();
    await chain.prompt(session, `hello ${i}`);
    times.push(performance.now() - t);
  }
  if (chain.updates - before !== PROMPTS) throw new Error(`${config.name}: ${chain.updates - before} updates for ${PROMPTS} prompts`);
  const rssMiB = rss();
  await chain.close();
  times.sort((a, b) => a - b);
  return {
    config,
    startMs,
    first: firstMs / FIRST,
    mean: mean(times),
    p50: quantile(times, 0.5),
    p95: quantile(times, 0.95),
    rssMiB,
    idleRssMiB,
  };
}

/**
 * One `stream N` prompt: chunks per second, and the CPU time the path between client and agent
 * spent per chunk (the conductor's process tree without the agent; for direct, the agent's own) —
 * a figure a loaded machine disturbs much less than the rate.
 */
async function stream(argv: string[], extraEnv?: Record<string, string>): Promise<{ rate: number; cpuUs: number }> {
  const { chain, session } = await open(argv, extraEnv);
  await chain.prompt(session, "stream 1000"); // warm-up
  const before = chain.updates;
  const pid = chain.child.pid!;
  const direct = argv === rawAgent;
  const cpu = () => (direct ? treeCpuMs(pid) : treeCpuMs(pid, notAgent));
  const cpu0 = cpu();
  const t = performance.now();
  await chain.prompt(session, `stream ${CHUNKS}`);
  const seconds = (performance.now() - t) / 1000;
  const cpuUs = ((cpu() - cpu0) * 1000) / CHUNKS;
  if (chain.updates - before !== CHUNKS) throw new Error(`stream: ${chain.updates - before} of ${CHUNKS} chunks`);
  await chain.close();
  return { rate: CHUNKS / seconds, cpuUs };
}

/** Median time to the first `initialize` answer over STARTS cold starts. */
async function coldStart(argv: string[]): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const { chain, startMs } = await open(argv);
    times.push(startMs);
    await chain.close();
  }
  return median(times);
}

/** P3: µs per 100 KB prompt through context.wasm in each sandbox, and the same edit in plain JS. */
async function contextEdit(): Promise<{ name: string; us: number }[]> {
  const RULES = "Project rules (AGENTS.md): answer briefly.";
  const prompt = (id: number) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "session/prompt",
      params: { sessionId: "s1", prompt: [{ type: "text", text: 'x"ü\n'.repeat(25_000) }] },
    });
  const component = await loadComponent(`${root}proxies/dist/context.wasm`, { cacheDir });
  const rows: { name: string; us: number }[] = [];
  const sample = prompt(1);
  const jsEdit = (text: string) => {
    const m = JSON.parse(text);
    m.params.prompt.unshift({ type: "text", text: RULES });
    return JSON.stringify({ jsonrpc: "2.0", id: 1, method: "proxy/successor", params: m });
  };
  /** Mean µs of `run` on a fresh 100 KB prompt; `after` (untimed) settles what the prompt left behind. */
  const time = async (
    run: (text: string) => Promise<unknown> | unknown,
    after: (result: unknown) => Promise<unknown> | unknown = () => {},
  ) => {
    for (let i = 0; i < Math.min(50, P3_ROUNDS); i++) await after(await run(prompt(i + 1_000_000)));
    let total = 0;
    for (let i = 0; i < P3_ROUNDS; i++) {
      const text = prompt(i + 1);
      const t = performance.now();
      const result = await run(text);
      total += performance.now() - t;
      await after(result);
    }
    return (total * 1000) / P3_ROUNDS;
  };
  rows.push({ name: "plain JS in the conductor (parse, prepend, stringify)", us: await time(jsEdit) });
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

const f = (n: number, d = 3) => n.toFixed(d);
const x = (v: number, b: number) => `${(v / b).toFixed(2)}×`;
const verdict = (ok: boolean) => (ok ? "met" : "NOT met");

async function main() {
  progress(
    `Node ${process.version}; ${PROMPTS} prompts per configuration (+${WARMUP} warm-up), ${CHUNKS} streamed chunks, ${STARTS} cold starts`,
  );
  // Warm the compile cache (P4 measures starts with a warm cache).
  await (await open(cordonArgs(1, "worker"))).chain.close();

  const results: RttResult[] = [];
  if (runs("P1") || runs("P5")) {
    for (const config of configs) {
      progress(`P1 ${config.name}`);
      results.push(await rtt(config));
    }
  }
  const by = (pred: (c: Config) => boolean) => results.find((r) => pred(r.config))!;
  const cordon0 = by((c) => c.kind === "cordon" && c.proxies === 0);
  const think0 = by((c) => c.kind === "thinkwell" && c.proxies === 0);
  const think3 = by((c) => c.kind === "thinkwell" && c.proxies === 3);

  if (results.length > 0) {
    console.log(
      `\nP1 — prompt round trip (ms) with one update, ${PROMPTS} sequential prompts after ${WARMUP} warm-up ones; conductor RSS = process tree without the agent`,
    );
    console.log(
      '("WASM proxies": pass-through proxies that see every message — interest filters off; "declared": the same proxies with their manifest\'s filter: they watch nothing)',
    );
    console.log(
      `| configuration | start (ms) | first ${FIRST} mean | mean | p50 | p95 | mean vs direct | mean vs cordon 0 | mean vs thinkwell 3 | RSS (MiB) |`,
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|");
    for (const r of results) {
      const rss = r.config.kind === "direct" ? `${f(r.rssMiB, 0)} (agent)` : f(r.rssMiB, 0);
      console.log(
        `| ${r.config.name} | ${f(r.startMs, 0)} | ${f(r.first)} | ${f(r.mean)} | ${f(r.p50)} | ${f(r.p95)} | ${x(r.mean, results[0].mean)} | ${x(r.mean, cordon0.mean)} | ${x(r.mean, think3.mean)} | ${rss} |`,
      );
    }
  }

  const streams: { name: string; rate: number; cpuUs: number; isolation?: Isolation; filters?: "watching" | "declared" }[] = [];
  if (runs("P2")) {
    progress("P2 streaming");
    streams.push({ name: "direct (CPU: the agent's)", ...(await stream(rawAgent)) });
    progress("P2 cordon, 0 proxies");
    streams.push({ name: "cordon, 0 proxies (the conductor's own floor)", ...(await stream(cordonArgs(0, DEFAULT_ISOLATION))) });
    for (const isolation of ISOLATIONS) {
      progress(`P2 cordon, 3 proxies (${isolation}), watching everything`);
      streams.push({
        name: `cordon, 3 WASM proxies (${isolation}) watching every update`,
        ...(await stream(cordonArgs(3, isolation), WATCH_ALL)),
        isolation,
        filters: "watching",
      });
    }
    for (const isolation of ISOLATIONS) {
      progress(`P2 cordon, 3 proxies (${isolation}), declared: not watching updates`);
      streams.push({
        name: `cordon, 3 WASM proxies (${isolation}) declared not watching updates`,
        ...(await stream(cordonArgs(3, isolation))),
        isolation,
        filters: "declared",
      });
    }
    progress("P2 thinkwell, 3 proxies");
    streams.push({ name: "thinkwell 0.5.7, 3 process proxies", ...(await stream(thinkwellArgs(3))) });
  }

  let p3: { name: string; us: number }[] = [];
  if (runs("P3")) {
    progress("P3 100 KB prompt through context.wasm");
    p3 = await contextEdit();
  }

  const starts: { name: string; ms: number }[] = [];
  if (runs("P4")) {
    progress("P4 cold starts");
    starts.push({ name: "direct", ms: await coldStart(rawAgent) });
    for (const isolation of ISOLATIONS)
      starts.push({ name: `cordon, 3 WASM proxies (${isolation})`, ms: await coldStart(cordonArgs(3, isolation)) });
    starts.push({ name: "thinkwell 0.5.7, 3 process proxies", ms: await coldStart(thinkwellArgs(3)) });
  }

  if (streams.length > 0) {
    console.log(`\nP2 — ${CHUNKS} agent_message_chunk updates streamed in one turn through 3 pass-through proxies`);
    console.log("(CPU µs per chunk: the conductor's process tree without the agent — all its threads, and thinkwell's proxy processes)");
    console.log("| path | chunks/s | % of direct | conductor CPU µs per chunk |");
    console.log("|---|---|---|---|");
    for (const s of streams)
      console.log(`| ${s.name} | ${f(s.rate, 0)} | ${f((100 * s.rate) / streams[0].rate, 0)} % | ${f(s.cpuUs, 1)} |`);
  }

  if (p3.length > 0) {
    console.log("\nP3 — one 100 KB prompt, prepend a text block (µs per message)");
    console.log("| path | µs | vs plain JS |");
    console.log("|---|---|---|");
    for (const r of p3) console.log(`| ${r.name} | ${f(r.us, 0)} | ${x(r.us, p3[0].us)} |`);
  }

  if (starts.length > 0) {
    console.log(`\nP4 — cold start to the first initialize answer (median of ${STARTS}, warm compile cache)`);
    console.log("| path | ms | vs direct |");
    console.log("|---|---|---|");
    for (const s of starts) console.log(`| ${s.name} | ${f(s.ms, 0)} | ${s === starts[0] ? "—" : `+${f(s.ms - starts[0].ms, 0)} ms`} |`);
  }

  const perProxy: Record<string, { idle: number; loaded: number }> = {};
  if (results.length > 0) {
    console.log("\nP5 — conductor RSS per added proxy (3 proxies vs 0, from P1): idle (up, one session) and after the P1 prompts");
    console.log("(after load the figure includes garbage not yet collected: V8 grows its young generation with the allocation rate)");
    console.log("| path | MiB per proxy, idle | MiB per proxy, after load |");
    console.log("|---|---|---|");
    const per = (three: RttResult, zero: RttResult) => ({
      idle: (three.idleRssMiB - zero.idleRssMiB) / 3,
      loaded: (three.rssMiB - zero.rssMiB) / 3,
    });
    for (const isolation of ISOLATIONS) {
      const three = by((c) => c.kind === "cordon" && c.proxies === 3 && c.isolation === isolation && c.filters === "watching");
      perProxy[isolation] = per(three, cordon0);
      console.log(`| cordon (${isolation}) | ${f(perProxy[isolation].idle, 1)} | ${f(perProxy[isolation].loaded, 1)} |`);
    }
    const think = per(think3, think0);
    console.log(`| thinkwell 0.5.7 (process proxies) | ${f(think.idle, 1)} | ${f(think.loaded, 1)} |`);
  }

  if (ONLY === null) {
    console.log(`\nGoals, default isolation "${DEFAULT_ISOLATION}"`);
    const d3 = by((c) => c.kind === "cordon" && c.proxies === 3 && c.isolation === DEFAULT_ISOLATION && c.filters === "watching");
    const dStream = streams.find((s) => s.isolation === DEFAULT_ISOLATION && s.filters === "watching")!;
    const dFiltered = streams.find((s) => s.isolation === DEFAULT_ISOLATION && s.filters === "declared")!;
    const dP3 = p3.find((r) => r.name.includes(`${DEFAULT_ISOLATION} sandbox`))!;
    const dStart = starts.find((s) => s.name.includes(`(${DEFAULT_ISOLATION})`))!;
    console.log(`| goal | measured | |`);
    console.log("|---|---|---|");
    console.log(`| P1 3 proxies ≤ 1.3× cordon 0 | ${x(d3.mean, cordon0.mean)} | ${verdict(d3.mean <= 1.3 * cordon0.mean)} |`);
    console.log(`| P1 3 proxies ≤ 0.5× thinkwell 3 | ${x(d3.mean, think3.mean)} | ${verdict(d3.mean <= 0.5 * think3.mean)} |`);
    console.log(`| P1 cordon 0 ≤ thinkwell 0 | ${x(cordon0.mean, think0.mean)} | ${verdict(cordon0.mean <= think0.mean)} |`);
    console.log(
      `| P2 streaming ≥ 50 % of direct | ${f((100 * dStream.rate) / streams[0].rate, 0)} % | ${verdict(dStream.rate >= 0.5 * streams[0].rate)} |`,
    );
    console.log(
      `| P2 ≥ 85 % with interest filters | ${f((100 * dFiltered.rate) / streams[0].rate, 0)} % | ${verdict(dFiltered.rate >= 0.85 * streams[0].rate)} |`,
    );
    console.log(`| P3 ≤ 1.3× plain JS | ${x(dP3.us, p3[0].us)} | ${verdict(dP3.us <= 1.3 * p3[0].us)} |`);
    console.log(`| P4 ≤ direct + 60 ms | +${f(dStart.ms - starts[0].ms, 0)} ms | ${verdict(dStart.ms <= starts[0].ms + 60)} |`);
    const p5 = perProxy[DEFAULT_ISOLATION];
    console.log(`| P5 ≤ 8 MiB per proxy, idle | ${f(p5.idle, 1)} MiB | ${verdict(p5.idle <= 8)} |`);
    console.log(`| P5 ≤ 8 MiB per proxy, after load | ${f(p5.loaded, 1)} MiB | ${verdict(p5.loaded <= 8)} |`);
  }

  if (process.env.BENCH_ABI === "1") {
    const { abiHostBench } = await import("./abi-host.js");
    await abiHostBench(passthrough);
  }
}

await main();
