/**
 * P5 taken apart, in one process: what a thread sandbox adds to the conductor's memory, split into
 * what the process pays once (the component's load, the first sandbox: its compiled module), what
 * each further proxy of the same component pays (its instance, its guest's linear memory, its
 * queue), and what the backstop's watchdog worker costs once a guest call that runs long starts it
 * (while it is up, and what stays after its idle exit; a chain whose calls end sooner starts none). Cross-process RSS differences move by a few MiB
 * between runs (each process sizes its heap its own way), which hides a marginal cost of a fraction
 * of a MiB; here every figure is a difference within one process, read after forced collections.
 *
 * Run by `bench.ts` as `node --expose-gc dist/bench/sandbox-memory.js <component.wasm>` with
 * `CORDON_CACHE_DIR` set to its warm cache; prints one JSON line of `SandboxMemory`.
 */
import { readFileSync } from "node:fs";
import { backstop } from "../runtime/sandbox/backstop.js";
import { loadComponent } from "../runtime/sandbox/component-loader.js";
import { DEFAULT_LIMITS, type ProxySandbox } from "../runtime/sandbox/sandbox.js";
import { ThreadSandbox } from "../runtime/sandbox/thread-sandbox.js";

export interface SandboxMemory {
  /** Loading the component (read, hash, cache, the loader's own code). */
  loadMiB: number;
  /** The first sandbox started and configured (no watchdog: its calls end quickly). */
  firstMiB: number;
  /** Each further sandbox of the same component, started and configured (mean of `FURTHER`). */
  furtherMiB: number;
  /** The backstop's watchdog, started as a call that runs long starts it, while it is up. */
  watchdogMiB: number;
  /** What stays of it after its idle exit: its thread's allocator arena and the Node code pages it touched. */
  watchdogGoneMiB: number;
}

const FURTHER = 10;
/** Past the watchdog's idle exit (1 s without a guarded call; inspector-watchdog.ts). */
const WATCHDOG_GONE_MS = 1_600;

const gc = (globalThis as { gc?: () => void }).gc;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** RSS in MiB after full collections (the kernel's figure, as the cross-process P5 reads it). */
async function rss(): Promise<number> {
  await sleep(50);
  gc!();
  gc!();
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024;
}

async function started(component: Awaited<ReturnType<typeof loadComponent>>, name: string): Promise<ProxySandbox> {
  const sandbox = new ThreadSandbox(component, DEFAULT_LIMITS, []);
  await sandbox.start({ output() {}, failed: (f) => console.error(`sandbox-memory: ${name} failed: ${f.message}`) });
  sandbox.deliver(JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name, config: {} } }));
  return sandbox;
}

/** Starts the backstop's watchdog as the refuel door does for a call that has run long (`watch`). */
async function startWatchdog(): Promise<void> {
  const b = backstop();
  if (b.mechanism !== "watchdog") throw new Error(`the backstop is ${b.mechanism}: no watchdog to measure`);
  await new Promise<void>((resolve) => b.post(() => resolve(b.guardSelfTimed(() => b.watch(1_000), 1_000, resolve))));
  await sleep(300); // up and watching (~30 ms)
}

async function main(wasm: string): Promise<SandboxMemory> {
  if (!gc) throw new Error("run with --expose-gc");
  const sandboxes: ProxySandbox[] = [];
  const before = await rss();
  const component = await loadComponent(wasm);
  const loaded = await rss();
  sandboxes.push(await started(component, "p0"));
  const first = await rss();
  for (let i = 1; i <= FURTHER; i++) sandboxes.push(await started(component, `p${i}`));
  const further = await rss();
  await startWatchdog();
  const watching = await rss();
  await sleep(WATCHDOG_GONE_MS);
  const gone = await rss();
  await Promise.all(sandboxes.map((s) => s.stop()));
  return {
    loadMiB: loaded - before,
    firstMiB: first - loaded,
    furtherMiB: (further - first) / FURTHER,
    watchdogMiB: watching - further,
    watchdogGoneMiB: gone - further,
  };
}

console.log(JSON.stringify(await main(process.argv[2])));
