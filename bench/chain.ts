/**
 * The benchmark's client side: a raw NDJSON client on a spawned chain (no SDK, so what shows is the
 * conductor's cost), and the command lines of the paths measured (direct, Cordon, thinkwell).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Isolation } from "../runtime/sandbox/sandbox-factory.js";
import { readLines } from "./ndjson.js";

type Json = any;

export const root = fileURLToPath(new URL("../..", import.meta.url));
const node = process.execPath;
const cordon = `${root}bin/cordon.js`;
const here = `${root}dist/bench`;
export const rawAgent = [node, `${here}/raw-agent.js`];
const passthrough = `${root}proxies/dist/passthrough.wasm`;
/** Each run gets its own compile cache (warmed by the first start), not the user's. */
export const cacheDir = mkdtempSync(join(tmpdir(), "cordon-bench-cache-"));
const env = { CORDON_LOG: "warn", CORDON_CACHE_DIR: cacheDir };

/** Interest filters off: every proxy sees every message, as one that watches everything would. */
export const WATCH_ALL = { CORDON_INTEREST_FILTERS: "off" };

/** `cordon run` with `n` pass-through proxies in front of the raw agent. */
export const cordonArgs = (n: number, isolation: Isolation, extra: string[] = []) => [
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

/**
 * `cordon run` as `cordonArgs`, its `n` pass-through proxies named in a chain config that raises
 * their output budget: P2 streams 200,000 chunks through each proxy within seconds, past the
 * 200,000 messages per 10 s a proxy may send by default (`sandbox.ts`). A budget is charged the
 * same way whatever its size, so the work measured is that of the default chain.
 */
export function streamingArgs(n: number, isolation: Isolation): string[] {
  if (n === 0) return cordonArgs(0, isolation);
  const file = join(cacheDir, `streaming-${n}.json`);
  const limits = { maxOutputMessagesPerWindow: 100_000_000 };
  writeFileSync(
    file,
    JSON.stringify({ proxies: Array.from({ length: n }, (_, i) => ({ name: `passthrough-${i + 1}`, wasm: passthrough, limits })) }),
  );
  return cordonArgs(0, isolation, ["--config", file]);
}

/** `@thinkwell/conductor` with `n` pass-through process proxies. */
export const thinkwellArgs = (n: number) => [
  node,
  `${here}/thinkwell.js`,
  ...Array.from({ length: n }, () => `${node} ${here}/raw-proxy.js`),
  "--",
  rawAgent.join(" "),
];

/** The agent's process (left out of the conductor's CPU and RSS): the raw agent, not a conductor whose argv names it. */
export const isAgent = (cmd: string) => cmd.includes("raw-agent.js") && !cmd.includes("thinkwell.js") && !cmd.includes("cordon.js");

/** A raw NDJSON client on a spawned chain. */
export class Chain {
  readonly child: ChildProcess;
  private next = 1;
  private readonly waiting = new Map<number, (m: Json) => void>();
  updates = 0;
  /** The text of the last `agent_message_chunk` received. */
  lastChunk = "";
  private readonly exited: Promise<void>;

  constructor(argv: string[], extraEnv: Record<string, string> = {}) {
    this.child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, ...env, ...extraEnv } });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    readLines(this.child.stdout!, (line) => {
      const m = JSON.parse(line);
      if (m.method === "session/update") {
        this.updates++;
        const text = m.params?.update?.content?.text;
        if (typeof text === "string") this.lastChunk = text;
      } else if (m.method === undefined) this.waiting.get(m.id)?.(m);
      else if (m.id !== undefined)
        this.child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } }) + "\n");
    });
  }

  /** Sends a request; `text` is its JSON already written (the P3 prompts are built ahead, untimed). */
  request(method: string, params: Json, text?: (id: number) => string): Promise<Json> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (m) => {
        this.waiting.delete(id);
        if (m.error) reject(new Error(`${method}: ${m.error.message}`));
        else resolve(m.result);
      });
      this.child.stdin!.write((text ? text(id) : JSON.stringify({ jsonrpc: "2.0", id, method, params })) + "\n");
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

/** Starts a chain and opens a session; `startMs` is the time to the first `initialize` answer. */
export async function open(argv: string[], extraEnv?: Record<string, string>): Promise<{ chain: Chain; startMs: number; session: string }> {
  const t = performance.now();
  const chain = new Chain(argv, extraEnv);
  await chain.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const startMs = performance.now() - t;
  const { sessionId } = await chain.request("session/new", { cwd: "/tmp", mcpServers: [] });
  return { chain, startMs, session: sessionId };
}
