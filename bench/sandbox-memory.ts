/**
 * P5 taken apart, in one process: what a thread sandbox adds to the conductor's memory, split into
 * what the process pays once (the component's load, the first sandbox: its compiled module and the
 * backstop's watchdog worker) and what each further proxy of the same component pays (its
 * instance, its guest's linear memory, its queue). Cross-process RSS differences move by a few MiB
 * between runs (each process sizes its heap its own way), which hides a marginal cost of a fraction
 * of a MiB; here every figure is a difference within one process, read after forced collections.
 *
 * Run by `bench.ts` as `node --expose-gc dist/bench/sandbox-memory.js <component.wasm>` with
 * `CORDON_CACHE_DIR` set to its warm cache, once as the conductor runs and once with
 * `CORDON_BACKSTOP=vm-timeout` (no watchdog worker); prints one JSON line of `SandboxMemory`.
 */
import { readFileSync } from "node:fs";
import { loadComponent } from "../runtime/sandbox/component-loader.js";
import { DEFAULT_LIMITS, type ProxySandbox } from "../runtime/sandbox/sandbox.js";
import { ThreadSandbox } from "../runtime/sandbox/thread-sandbox.js";

export interface SandboxMemory {
  /** Loading the component (read, hash, cache, the loader's own code). */
  loadMiB: number;
  /** The first sandbox started and configured, its watchdog running. */
  firstMiB: number;
  /** The same after the watchdog's idle exit (what stays of it: its thread's allocator arena and the Node code pages it touched). */
  firstIdleMiB: number;
  /** Each further sandbox of the same component, started and configured (mean of `FURTHER`). */
  furtherMiB: number;
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

async function main(wasm: string): Promise<SandboxMemory> {
  if (!gc) throw new Error("run with --expose-gc");
  const sandboxes: ProxySandbox[] = [];
  const before = await rss();
  const component = await loadComponent(wasm);
  const loaded = await rss();
  sandboxes.push(await started(component, "p0"));
  const first = await rss();
  await sleep(WATCHDOG_GONE_MS);
  const firstIdle = await rss();
  for (let i = 1; i <= FURTHER; i++) sandboxes.push(await started(component, `p${i}`));
  await sleep(WATCHDOG_GONE_MS); // their starts started a watchdog again
  const further = await rss();
  await Promise.all(sandboxes.map((s) => s.stop()));
  return {
    loadMiB: loaded - before,
    firstMiB: first - loaded,
    firstIdleMiB: firstIdle - loaded,
    furtherMiB: (further - firstIdle) / FURTHER,
  };
}

console.log(JSON.stringify(await main(process.argv[2])));
