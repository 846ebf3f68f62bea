/**
 * `make bench`: what a chain costs, measured in one run against a baseline from the same run.
 *
 * Each configuration is a real client (the official SDK) talking over stdio to a real process
 * tree: the reference agent directly (the baseline), then Cordon with 0, 1 and 3 pass-through
 * WASM proxies in front of it. For each: time to the `initialize` answer, the prompt round trip
 * (request → its updates → response) over many sequential prompts, and resident memory of the
 * whole tree afterwards. Ratios are against the baseline; absolute numbers vary with the machine.
 */
import { fileURLToPath } from "node:url";
import { SpawnedAgent } from "../runtime/client/spawned-agent.js";
import { treeRssMiB } from "./process-tree.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const cordon = `${root}bin/cordon.js`;
const passthrough = `${root}proxies/dist/passthrough.wasm`;
const PROMPTS = Number(process.env.BENCH_PROMPTS ?? 1000);
const WARMUP = Math.min(100, Math.ceil(PROMPTS / 10));

interface Result {
  name: string;
  startMs: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  rssMiB: number;
}

const agentArgs = [cordon, "reference-agent"];
const configs: { name: string; args: string[] }[] = [
  { name: "direct: client → reference agent", args: agentArgs },
  { name: "cordon, 0 proxies", args: [cordon, "run", "--", process.execPath, ...agentArgs] },
  { name: "cordon, 1 pass-through proxy", args: [cordon, "run", "--proxy", passthrough, "--", process.execPath, ...agentArgs] },
  {
    name: "cordon, 3 pass-through proxies",
    args: [cordon, "run", ...Array(3).fill(["--proxy", passthrough]).flat(), "--", process.execPath, ...agentArgs],
  },
];

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

async function measure(name: string, args: string[]): Promise<Result> {
  const started = performance.now();
  const agent = new SpawnedAgent({ command: process.execPath, args, env: { CORDON_LOG: "warn" } });
  await agent.initialize();
  const startMs = performance.now() - started;
  const session = await agent.newSession();
  for (let i = 0; i < WARMUP; i++) await agent.prompt(session, `warm ${i}`);
  const times: number[] = [];
  const before = agent.events.length;
  for (let i = 0; i < PROMPTS; i++) {
    const t = performance.now();
    await agent.prompt(session, `hello ${i}`);
    times.push(performance.now() - t);
  }
  const updates = agent.events.length - before;
  if (updates < PROMPTS) throw new Error(`${name}: expected at least ${PROMPTS} updates, got ${updates}`);
  const rssMiB = treeRssMiB(agent.child.pid!);
  await agent.close();
  times.sort((a, b) => a - b);
  return {
    name,
    startMs,
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    p50: quantile(times, 0.5),
    p95: quantile(times, 0.95),
    p99: quantile(times, 0.99),
    rssMiB,
  };
}

async function main() {
  process.stderr.write(`bench: ${PROMPTS} sequential prompts per configuration (+${WARMUP} warm-up), Node ${process.version}\n`);
  const results: Result[] = [];
  for (const { name, args } of configs) {
    process.stderr.write(`  measuring ${name}…\n`);
    results.push(await measure(name, args));
  }
  const base = results[0];
  const ratio = (v: number, b: number) => `${(v / b).toFixed(2)}×`;
  console.log("\nprompt round trip (ms) and memory of the whole process tree");
  console.log("| configuration | start (ms) | mean | p50 | p95 | p99 | mean vs direct | RSS (MiB) | RSS vs direct |");
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const r of results) {
    console.log(
      `| ${r.name} | ${r.startMs.toFixed(0)} | ${r.mean.toFixed(3)} | ${r.p50.toFixed(3)} | ${r.p95.toFixed(3)} | ${r.p99.toFixed(3)} | ${ratio(r.mean, base.mean)} | ${r.rssMiB.toFixed(0)} | ${ratio(r.rssMiB, base.rssMiB)} |`,
    );
  }
  const { abiHostBench } = await import("./abi-host.js");
  await abiHostBench(passthrough);
}

await main();
