/**
 * Why Cordon runs guests with its own canonical-ABI host instead of jco's generated glue:
 * the same component, the same messages, both hosts in one thread, per-call cost side by side.
 * Also the cost of the worker-thread boundary around a guest (ping-pong and pipelined).
 */
import { readFile } from "node:fs/promises";
import { CanonicalHost } from "../runtime/sandbox/canonical-host.js";
import { loadComponentBytes } from "../runtime/sandbox/component-loader.js";
import { capMemory } from "../runtime/sandbox/memory-cap.js";
import { DEFAULT_LIMITS } from "../runtime/sandbox/sandbox.js";
import { WorkerSandbox } from "../runtime/sandbox/worker-sandbox.js";

const small = JSON.stringify({
  jsonrpc: "2.0",
  method: "proxy/successor",
  params: {
    method: "session/update",
    params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hello" } } },
  },
});
const big = JSON.stringify({
  jsonrpc: "2.0",
  id: 7,
  method: "session/prompt",
  params: { sessionId: "s1", prompt: [{ type: "text", text: 'x"ü\n'.repeat(25_000) }] },
});

function perCall(fn: (msg: string) => unknown, msg: string, n: number): number {
  for (let i = 0; i < Math.min(n, 2000); i++) fn(msg);
  const t = performance.now();
  for (let i = 0; i < n; i++) fn(msg);
  return ((performance.now() - t) * 1000) / n;
}

async function jcoGlue(bytes: Uint8Array, onSend: (m: string) => void): Promise<(m: string) => void> {
  const { transpileBytes } = await import("@bytecodealliance/jco-transpile");
  const { files } = await transpileBytes(bytes, {
    name: "g",
    instantiation: "sync",
    wasiShim: false,
    noTypescript: true,
    base64Cutoff: 0,
  } as never);
  const mod = await import(`data:text/javascript;base64,${Buffer.from(files["g.js"]).toString("base64")}`);
  const channel = { send: onSend };
  const root = mod.instantiate((name: string) => new WebAssembly.Module(files[name] as Uint8Array<ArrayBuffer>), {
    "cordon:proxy/channel": channel,
    "cordon:proxy/channel@0.1.0": channel,
  });
  const handler = root.handler ?? root["cordon:proxy/handler@0.1.0"];
  return (m: string) => handler.receive(m);
}

export async function abiHostBench(componentPath: string): Promise<void> {
  const bytes = new Uint8Array(await readFile(componentPath));
  const component = await loadComponentBytes(componentPath, bytes);
  const raw = new CanonicalHost(component.module, { encodings: component.encodings });
  raw.receive(JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "bench", config: {} } }));
  let sent = 0;
  const glue = await jcoGlue(bytes, () => sent++);
  glue(JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "bench", config: {} } }));

  const rows: [string, number, number][] = [];
  rows.push(["Cordon canonical host (in-thread)", perCall((m) => raw.receive(m), small, 50_000), perCall((m) => raw.receive(m), big, 300)]);
  rows.push(["jco 0.15 generated glue (in-thread)", perCall(glue, small, 50_000), perCall(glue, big, 300)]);
  if (sent === 0) throw new Error("jco glue path produced no output");

  // The worker boundary: one message in flight at a time, then many in flight.
  const sandbox = new WorkerSandbox(component, DEFAULT_LIMITS);
  let waiting: (() => void) | null = null;
  let outputs = 0;
  await sandbox.start({
    output: (messages) => {
      outputs += messages.length;
      waiting?.();
    },
    failed: (f) => {
      throw new Error(f.message);
    },
  });
  sandbox.deliver(JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "bench", config: {} } }));
  const pingPong = async (n: number) => {
    const t = performance.now();
    for (let i = 0; i < n; i++) {
      await new Promise<void>((resolve) => {
        waiting = resolve;
        sandbox.deliver(small);
      });
    }
    return ((performance.now() - t) * 1000) / n;
  };
  await pingPong(500);
  const ping = await pingPong(5000);
  const n = 20_000;
  const target = outputs + n;
  const t = performance.now();
  await new Promise<void>((resolve) => {
    waiting = () => {
      if (outputs >= target) resolve();
    };
    for (let i = 0; i < n; i++) sandbox.deliver(small);
  });
  const pipelined = ((performance.now() - t) * 1000) / n;
  await sandbox.stop();

  console.log(`\nguest call cost, pass-through proxy (${componentPath.split("/").pop()}): µs per message`);
  console.log(`| host | small (${small.length} B) | big (${big.length} B) |`);
  console.log("|---|---|---|");
  for (const [name, s, b] of rows) console.log(`| ${name} | ${s.toFixed(2)} | ${b.toFixed(1)} |`);
  console.log(`| ratio jco / Cordon | ${(rows[1][1] / rows[0][1]).toFixed(2)}× | ${(rows[1][2] / rows[0][2]).toFixed(2)}× |`);
  console.log(
    `\nworker boundary (small messages): ping-pong ${ping.toFixed(1)} µs per round trip, pipelined ${pipelined.toFixed(1)} µs per message`,
  );
  limitsCost(component.coreBytes);
}

/**
 * What the sandbox limits cost. Per delivered message the watchdog does one `timer.refresh()`;
 * the size and count caps are O(1) comparisons inside the host's existing bounds checks. The
 * memory cap is a module rewrite done once per start.
 */
function limitsCost(coreBytes: Uint8Array): void {
  const timer = setTimeout(() => {}, 60_000);
  const N = 1_000_000;
  let t = performance.now();
  for (let i = 0; i < N; i++) timer.refresh();
  const refreshNs = ((performance.now() - t) * 1e6) / N;
  clearTimeout(timer);
  t = performance.now();
  for (let i = 0; i < 100; i++) capMemory(coreBytes, 2048);
  const capUs = ((performance.now() - t) * 1000) / 100;
  console.log(
    `limits: watchdog ${refreshNs.toFixed(0)} ns per delivered message (one timer refresh); memory cap ${capUs.toFixed(0)} µs once per start (${(coreBytes.length / 1024).toFixed(0)} KiB module); size and count caps: no measurable cost`,
  );
}
