/**
 * An in-memory peer for in-process conductor tests: no processes, no sandbox. What the conductor
 * sends it is recorded in `received`; `emit` plays a message from it. A `script` answers what it
 * receives, asynchronously (a real peer answers on a later tick, and the router must not be
 * re-entered from its own `send`).
 */
import type { JsonRpcMessage } from "../../runtime/protocol/json-rpc.js";
import { attachRaw, serialize } from "../../runtime/protocol/raw-json.js";
import type { Peer, PeerSink } from "../../runtime/routing/peer.js";

export type Json = Record<string, any>;
export type Script = (message: Json, peer: MemoryPeer) => void;

export class MemoryPeer implements Peer {
  readonly received: Json[] = [];
  private sink: PeerSink | null = null;
  paused = false;
  opens = 0;
  /** Set to let the conductor route messages past this peer (`Peer.passes`). */
  passes?: Peer["passes"];
  /** Throws from `send` for messages that pass this test (a peer whose transport breaks). */
  failSend: ((message: Json) => boolean) | null = null;

  constructor(
    readonly label: string,
    public script: Script = () => {},
  ) {}

  async open(sink: PeerSink): Promise<void> {
    this.sink = sink;
    this.opens++;
  }

  /** Milliseconds the script waits before handling each message (a slow proxy). */
  delayMs = 0;
  /** Messages sent to it that its script has not handled yet: the output it still owes. */
  owed = 0;
  private readonly idleWaiters: (() => void)[] = [];

  /** Set to `[]` to keep, from then on, the text a transport would write for each message sent to it. */
  texts: string[] | null = null;

  send(message: JsonRpcMessage): void {
    this.texts?.push(serialize(message));
    const copy = JSON.parse(JSON.stringify(message)) as Json;
    if (this.failSend?.(copy)) throw new Error(`${this.label} transport broke`);
    this.received.push(copy);
    this.owed++;
    const run = () => {
      try {
        this.script(copy, this);
      } finally {
        if (--this.owed === 0) for (const then of this.idleWaiters.splice(0)) then();
      }
    };
    if (this.delayMs > 0) setTimeout(run, this.delayMs);
    else queueMicrotask(run);
  }

  whenIdle(then: () => void): void {
    if (this.owed === 0) then();
    else this.idleWaiters.push(then);
  }

  async close(): Promise<void> {}

  pauseInput(): void {
    this.paused = true;
  }

  resumeInput(): void {
    this.paused = false;
  }

  /** The peer sends `message` to the conductor. */
  emit(message: Json | unknown): void {
    this.sink!.message(message);
  }

  /** The peer writes `text`: parsed, with the text kept as a framing layer keeps it (raw-json.ts). */
  emitText(text: string): void {
    this.sink!.message(attachRaw(JSON.parse(text) as object, text));
  }

  /** The peer dies (what waited for its output goes on, as `Peer.whenIdle` promises). */
  die(reason = "exited with code 1", detail?: { kind?: string; [more: string]: unknown }): void {
    this.sink!.closed(reason, detail);
    for (const then of this.idleWaiters.splice(0)) then();
  }

  congested(congested: boolean): void {
    this.sink!.congested?.(congested);
  }

  /** Resolves with the first received message that passes `test` (already received or future). */
  async waitFor(test: (m: Json) => boolean, timeoutMs = 2_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(test);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`${this.label}: timed out; received ${JSON.stringify(this.received).slice(-1500)}`);
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}

/**
 * A proxy that forwards everything, as the SDK's default hooks do: calls from its predecessor go
 * to its successor in an envelope, calls from its successor go back unwrapped, answers go back
 * by id. It reuses the conductor's ids, which are unique per hop.
 */
export const passThrough: Script = (m, peer) => {
  if ("method" in m) {
    if (m.method === "proxy/successor" || m.method === "_proxy/successor") {
      const inner: Json = { jsonrpc: "2.0", method: m.params.method, params: m.params.params };
      if ("id" in m) inner.id = m.id;
      return peer.emit(inner);
    }
    const method = m.method === "proxy/initialize" ? "initialize" : m.method;
    const envelope: Json = { jsonrpc: "2.0", method: "proxy/successor", params: { method, params: m.params } };
    if ("id" in m) envelope.id = m.id;
    return peer.emit(envelope);
  }
  peer.emit(m);
};

/** A minimal agent: initialize, session/new, and a prompt answered with one update then end_turn. */
export const agentScript: Script = (m, peer) => {
  if (!("id" in m) || !("method" in m)) return;
  const answer = (result: unknown) => peer.emit({ jsonrpc: "2.0", id: m.id, result });
  switch (m.method) {
    case "initialize":
      return answer({ protocolVersion: 1, agentCapabilities: { promptCapabilities: {} }, agentInfo: { name: "memory-agent" } });
    case "session/new":
      return answer({ sessionId: `s${peer.received.length}` });
    case "session/prompt":
      peer.emit({
        jsonrpc: "2.0",
        method: "session/update",
        params: { sessionId: m.params?.sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } } },
      });
      return answer({ stopReason: "end_turn" });
    default:
      peer.emit({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `agent has no ${m.method}` } });
  }
};
