/**
 * P2 and P1 taken apart, in one process: the conductor's CPU per streamed chunk and per prompt
 * round trip with nothing around it — no pipes, no client or agent processes, no kernel wake-ups —
 * so what shows is routing, the sandboxes and the guests alone. The same `Conductor`, proxies (`buildProxies`, thread
 * isolation) and MCP bridge as `cordon run`; the agent and the client are in-memory peers that do
 * what the NDJSON channel does for a line (the agent's lines are read by its `parseLine`, the
 * client's messages are serialised), and the agent hands its chunks over in bursts, as a pipe
 * read does.
 *
 * Every chain is open at once and measured in alternated rounds (this machine's speed drifts within
 * a minute): the median of each chain's rounds, and of the per-round ratio to Cordon 0. Chains in
 * one process share a heap, so each round's CPU carries some of the others' garbage: compare the
 * figures within a run.
 *
 * Run by `bench.ts` as `node dist/bench/in-process-chain.js <passthrough.wasm>` (with
 * `CORDON_CACHE_DIR` set to its warm cache); prints one JSON line of `InProcessChains`.
 * `BENCH_INPROC_CHUNKS` (20000) chunks and `BENCH_INPROC_PROMPTS` (500) sequential prompts (one
 * update each) per round, `BENCH_INPROC_ROUNDS` (20) rounds of each per chain.
 */
import { buildProxies, proxyOptions } from "../runtime/cli/run.js";
import { INTEREST_FILTERS_ENV } from "../runtime/components/interest-filter.js";
import { createLogger } from "../runtime/log.js";
import { McpBridgePeer } from "../runtime/mcp/bridge.js";
import type { JsonRpcMessage } from "../runtime/protocol/json-rpc.js";
import { parseLine } from "../runtime/protocol/parse-line.js";
import { serialize } from "../runtime/protocol/raw-json.js";
import { Conductor } from "../runtime/routing/conductor.js";
import type { Peer, PeerSink } from "../runtime/routing/peer.js";
import { median } from "./stats.js";

/** What one kind of traffic cost each chain, in µs of CPU per unit (a chunk, a prompt's round trip). */
export interface InProcessFigures {
  /** Median over the rounds, by chain. */
  cpuUs: Record<ChainName, number>;
  /** Median over the rounds of each chain's figure over Cordon 0's in the same round. */
  overCordon0: Record<Exclude<ChainName, "cordon0">, number>;
}

export interface InProcessChains {
  rounds: number;
  chunksPerRound: number;
  promptsPerRound: number;
  stream: InProcessFigures;
  roundTrip: InProcessFigures;
}

type ChainName = "cordon0" | "watching3" | "declared3";

/** Chunks the agent hands over per event-loop turn (what one 64 KB pipe read holds). */
const BURST = 300;
const CHUNKS = Number(process.env.BENCH_INPROC_CHUNKS ?? 20_000);
const PROMPTS = Number(process.env.BENCH_INPROC_PROMPTS ?? 500);
const ROUNDS = Number(process.env.BENCH_INPROC_ROUNDS ?? 20);

const line = (i: number) =>
  `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk ${i} of the answer"}}}}`;
/** A line as the NDJSON channel hands it to the router: parsed, its text attached. */
const received = (text: string): object => parseLine(text) as object;

/** The agent: answers `initialize` and `session/new`; a prompt `stream N` streams N chunks, then ends the turn. */
class StreamingAgent implements Peer {
  readonly label = "agent";
  private sink: PeerSink | null = null;

  async open(sink: PeerSink): Promise<void> {
    this.sink = sink;
  }

  send(message: JsonRpcMessage): void {
    if (!("method" in message) || !("id" in message)) return;
    const answer = (result: unknown): void => {
      setImmediate(() => this.sink!.message(received(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }))));
    };
    if (message.method === "initialize") return answer({ protocolVersion: 1, agentCapabilities: {}, authMethods: [] });
    if (message.method === "session/new") return answer({ sessionId: "s1" });
    if (message.method !== "session/prompt") return;
    const total = Number((message.params as { prompt: { text: string }[] }).prompt[0].text.split(" ")[1]);
    let sent = 0;
    const burst = () => {
      for (const end = Math.min(total, sent + BURST); sent < end; sent++) this.sink!.message(received(line(sent)));
      if (sent < total) setImmediate(burst);
      else answer({ stopReason: "end_turn" });
    };
    setImmediate(burst);
  }

  async close(): Promise<void> {}
}

/** The client: every message serialised, as the stdio channel writes it; answers matched to what waits for them. */
class AnsweredClient implements Peer {
  readonly label = "client";
  private sink: PeerSink | null = null;
  private waiting: ((answer: JsonRpcMessage) => void) | null = null;
  private nextId = 0;
  bytes = 0;

  async open(sink: PeerSink): Promise<void> {
    this.sink = sink;
  }

  send(message: JsonRpcMessage): void {
    this.bytes += serialize(message).length;
    if ("id" in message && !("method" in message) && this.waiting) {
      const waiting = this.waiting;
      this.waiting = null;
      setImmediate(() => waiting(message));
    }
  }

  request(method: string, params: unknown): Promise<JsonRpcMessage> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.sink!.message(received(JSON.stringify({ jsonrpc: "2.0", id: ++this.nextId, method, params })));
    });
  }

  async close(): Promise<void> {}
}

/** A chain of `proxies` pass-through proxies, started, with a session open; returns how to stream through it. */
async function openChain(wasm: string, proxies: number, watching: boolean): Promise<(chunks: number) => Promise<unknown>> {
  const log = createLogger("warn", (line) => warnings.push(line));
  // A thread sandbox reads the switch when it starts: every proxy of this chain watches, or none does.
  if (watching) process.env[INTEREST_FILTERS_ENV] = "off";
  else delete process.env[INTEREST_FILTERS_ENV];
  // The chains stream faster than any session would (~20 k messages a second per proxy, over 10 s,
  // stops a proxy): the output budget is lifted, as what is measured is the cost, not the budget.
  const limits = { maxOutputMessagesPerWindow: Number.MAX_SAFE_INTEGER };
  const entries = Array.from({ length: proxies }, () => ({ wasm, grants: [], limits }));
  const client = new AnsweredClient();
  const conductor = new Conductor({
    client,
    proxies: [...buildProxies(entries, log, "thread"), new McpBridgePeer({ log })],
    agent: new StreamingAgent(),
    mode: "agent",
    log,
    ...proxyOptions(entries, true),
    onExit: () => {},
  });
  await conductor.start();
  await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  await client.request("session/new", { cwd: "/", mcpServers: [] });
  const stream = (chunks: number) =>
    client.request("session/prompt", { sessionId: "s1", prompt: [{ type: "text", text: `stream ${chunks}` }] });
  await stream(2_000); // warm-up: JIT, the guests' memories, the heap
  return stream;
}

/** What the chains logged: a proxy stopped or bypassed would make the figures wrong, so any warning fails the run. */
const warnings: string[] = [];

/** Each chain's CPU per unit of `work` (which does `units` of it), over alternated rounds. */
async function measure(
  chains: [ChainName, (chunks: number) => Promise<unknown>][],
  units: number,
  work: (stream: (chunks: number) => Promise<unknown>) => Promise<void>,
): Promise<InProcessFigures> {
  const cpu = new Map<ChainName, number[]>(chains.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Each round in another order, so no chain always runs after the same one.
    const order = round % 2 === 0 ? chains : [...chains].reverse();
    for (const [name, stream] of order) {
      const before = process.cpuUsage();
      await work(stream);
      const used = process.cpuUsage(before);
      cpu.get(name)!.push((used.user + used.system) / units);
    }
  }
  const zero = cpu.get("cordon0")!;
  const over = (name: ChainName) => median(cpu.get(name)!.map((us, round) => us / zero[round]));
  return {
    cpuUs: { cordon0: median(zero), watching3: median(cpu.get("watching3")!), declared3: median(cpu.get("declared3")!) },
    overCordon0: { watching3: over("watching3"), declared3: over("declared3") },
  };
}

async function main(): Promise<void> {
  const wasm = process.argv[2];
  if (!wasm) throw new Error("usage: in-process-chain.js <passthrough.wasm>");
  const chains: [ChainName, (chunks: number) => Promise<unknown>][] = [
    ["cordon0", await openChain(wasm, 0, true)],
    ["watching3", await openChain(wasm, 3, true)],
    ["declared3", await openChain(wasm, 3, false)],
  ];
  const result: InProcessChains = {
    rounds: ROUNDS,
    chunksPerRound: CHUNKS,
    promptsPerRound: PROMPTS,
    stream: await measure(chains, CHUNKS, async (stream) => void (await stream(CHUNKS))),
    roundTrip: await measure(chains, PROMPTS, async (stream) => {
      for (let i = 0; i < PROMPTS; i++) await stream(1);
    }),
  };
  if (warnings.length > 0) throw new Error(`the chains did not run as measured:\n${warnings.join("")}`);
  console.log(JSON.stringify(result));
  process.exit(0); // the chains stay open: nothing to wait for
}

await main();
