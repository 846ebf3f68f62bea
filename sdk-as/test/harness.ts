/**
 * Test harness for AssemblyScript proxies: builds a real component with the build tool, loads it
 * with the runtime's own loader and canonical-ABI host, and plays the conductor's side of the
 * protocol. Every assertion in the proxy and SDK tests goes through the real .wasm.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CanonicalHost } from "../../runtime/sandbox/canonical-host.js";
import { loadComponent, type LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { readManifest, type Manifest } from "../../runtime/sandbox/manifest.js";
// @ts-expect-error: plain ESM tool without type declarations
import { buildProxy } from "../tools/build-proxy.mjs";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const cacheDir = join(tmpdir(), `cordon-sdk-as-tests-${process.getuid?.() ?? 0}`);
mkdirSync(cacheDir, { recursive: true });

export type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Builds (when stale) and loads `proxies/dist/<name>.wasm` from `proxies/<name>/<name>.ts`. */
export async function loadExampleProxy(name: string, options: { grants?: string[] } = {}): Promise<LoadedComponent> {
  const out = join(ROOT, "proxies", "dist", `${name}.wasm`);
  await buildProxy({ entry: join(ROOT, "proxies", name, `${name}.ts`), out });
  return loadComponent(out, { cacheDir, grants: options.grants });
}

/** The `cordon:manifest` embedded in a built example proxy (after `loadExampleProxy`). */
export function exampleManifest(name: string): Manifest | null {
  return readManifest(readFileSync(join(ROOT, "proxies", "dist", `${name}.wasm`)));
}

/**
 * Builds (when stale) and loads an SDK test fixture `sdk-as/test/fixtures/<name>.ts`. `grants` are
 * the WASI grants the load is checked against (a proxy-wasi fixture needs them).
 */
export async function loadFixture(name: string, options: { grants?: string[] } = {}): Promise<LoadedComponent> {
  const out = join(ROOT, "sdk-as", "test", "fixtures", "dist", `${name}.wasm`);
  await buildProxy({ entry: join(ROOT, "sdk-as", "test", "fixtures", `${name}.ts`), out });
  return loadComponent(out, { cacheDir, grants: options.grants });
}

export const INIT_PARAMS = {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
  clientInfo: { name: "test-client", version: "1.0" },
};

export const INIT_RESULT = {
  protocolVersion: 1,
  agentCapabilities: { loadSession: false, promptCapabilities: { image: false }, _meta: { "agent.example": { x: 1 } } },
  authMethods: [],
};

/**
 * One proxy instance with the test in the conductor's seat. `deliver` hands it a message (an object
 * is JSON.stringify'd; a string goes as is) and returns what it sent, parsed; `_cordon/log`
 * notifications are collected in `logs` instead.
 */
export class ProxyUnderTest {
  readonly host: CanonicalHost;
  readonly logs: { level: string; message: string }[] = [];
  /** Raw text of everything the proxy sent, in order (logs included). */
  readonly wire: string[] = [];
  private conductorId = 1000;

  /** `grants`: WASI the chain config would grant (`wasi:clocks`, `wasi:random`), as `CanonicalHost` takes them. */
  constructor(component: LoadedComponent, options: { grants?: string[] } = {}) {
    // Instantiation runs the proxy's top-level code (its `register(...)`); it may not send.
    this.host = new CanonicalHost(component.module, { encodings: component.encodings, grants: options.grants });
  }

  /** Delivers one message; returns the proxy's output texts exactly (logs excluded). */
  deliverRaw(message: string | Json): string[] {
    const text = typeof message === "string" ? message : JSON.stringify(message);
    return this.take(this.host.receive(text));
  }

  /** Delivers one message; returns the proxy's output parsed (logs excluded). */
  deliver(message: string | Json): Json[] {
    return this.deliverRaw(message).map((m) => JSON.parse(m));
  }

  private take(out: string[]): string[] {
    const rest: string[] = [];
    for (const text of out) {
      this.wire.push(text);
      const msg = JSON.parse(text);
      if (msg.method === "_cordon/log") this.logs.push(msg.params);
      else rest.push(text);
    }
    return rest;
  }

  /** A fresh conductor-side request id (alternating numbers and strings is up to the caller). */
  nextId(): number {
    return this.conductorId++;
  }

  configure(config: Json = {}, name = "under-test"): Json[] {
    return this.deliver({ jsonrpc: "2.0", method: "_cordon/configure", params: { name, config } });
  }

  /**
   * Runs the initialize handshake: `proxy/initialize` → expects the proxy to forward `initialize`
   * to its successor → answers it with `agentResult` → returns the proxy's answer to the conductor.
   */
  initialize(params: Json = INIT_PARAMS, agentResult: Json = INIT_RESULT): Json {
    const id = "init-1";
    const forwarded = this.deliver({ jsonrpc: "2.0", id, method: "proxy/initialize", params });
    if (forwarded.length !== 1) throw new Error(`expected one message after proxy/initialize, got ${JSON.stringify(forwarded)}`);
    const [fwd] = forwarded;
    if (fwd.method !== "proxy/successor" || fwd.params?.method !== "initialize") {
      throw new Error(`expected proxy/successor initialize, got ${JSON.stringify(fwd)}`);
    }
    const answer = this.deliver({ jsonrpc: "2.0", id: fwd.id, result: agentResult });
    if (answer.length !== 1 || answer[0].id !== id) throw new Error(`expected the initialize answer, got ${JSON.stringify(answer)}`);
    return answer[0];
  }

  /** Wraps a message as coming from the successor (`proxy/successor` envelope). */
  static fromAgent(inner: { method: string; params?: Json }, id?: number | string, meta?: Json): Json {
    const params: Json = { method: inner.method };
    if (inner.params !== undefined) params.params = inner.params;
    if (meta !== undefined) params._meta = meta;
    return id === undefined ? { jsonrpc: "2.0", method: "proxy/successor", params } : { jsonrpc: "2.0", id, method: "proxy/successor", params };
  }
}

export async function proxyUnderTest(component: LoadedComponent, config: Json = {}, options: { grants?: string[]; agentResult?: Json; initParams?: Json } = {}): Promise<ProxyUnderTest> {
  const p = new ProxyUnderTest(component, { grants: options.grants });
  p.configure(config);
  p.initialize(options.initParams ?? INIT_PARAMS, options.agentResult ?? INIT_RESULT);
  return p;
}

// ---- MCP-over-ACP: the test plays the agent (or the conductor's bridge) calling the proxy's servers

/** An `initialize` answer from an agent side that speaks MCP-over-ACP (as Cordon's conductor advertises it). */
export const INIT_RESULT_MCP = {
  ...INIT_RESULT,
  agentCapabilities: { ...INIT_RESULT.agentCapabilities, mcpCapabilities: { http: false, sse: false, acp: true } },
};

/** A proxy configured and initialized with an agent side that advertises `mcpCapabilities.acp`. */
export function mcpProxyUnderTest(component: LoadedComponent, config: Json = {}, options: { grants?: string[]; initParams?: Json } = {}): Promise<ProxyUnderTest> {
  return proxyUnderTest(component, config, { ...options, agentResult: INIT_RESULT_MCP });
}

/**
 * Runs one session setup request from the client side through the proxy: returns the params the
 * successor got, the `{"type":"acp"}` declarations the proxy added, and the answer the client got.
 */
export function setupSession(p: ProxyUnderTest, method: string, params: Json, result: Json): { forwarded: Json; declared: Json[]; answer: Json } {
  const id = p.nextId();
  const out = p.deliver({ jsonrpc: "2.0", id, method, params });
  if (out.length !== 1 || out[0].method !== "proxy/successor" || out[0].params.method !== method) {
    throw new Error(`expected ${method} forwarded to the successor, got ${JSON.stringify(out)}`);
  }
  const forwarded = out[0].params.params;
  const declared = (forwarded?.mcpServers ?? []).filter((s: Json) => s?.type === "acp");
  const answers = p.deliver({ jsonrpc: "2.0", id: out[0].id, result });
  if (answers.length !== 1 || answers[0].id !== id) throw new Error(`expected the ${method} answer, got ${JSON.stringify(answers)}`);
  return { forwarded, declared, answer: answers[0] };
}

/** `session/new` answered with `sessionId`: the proxy's declarations. */
export function newSession(p: ProxyUnderTest, sessionId: string, params: Json = { cwd: "/work", mcpServers: [] }): Json[] {
  return setupSession(p, "session/new", params, { sessionId }).declared;
}

/**
 * A request from the successor (the agent, or the conductor's MCP bridge acting for it); returns the
 * proxy's answer to it, and everything else it sent meanwhile in `others`.
 */
export function agentRequest(p: ProxyUnderTest, method: string, params?: Json): Json & { others: Json[] } {
  const id = `agent-${p.nextId()}`;
  const out = p.deliver(ProxyUnderTest.fromAgent({ method, params }, id));
  const answer = out.find((m) => m.id === id && !("method" in m));
  return { ...(answer ?? { missing: true }), others: out.filter((m) => m !== answer) };
}

/** `mcp/connect {serverId}` → the connectionId (throws when the proxy refuses). */
export function mcpConnect(p: ProxyUnderTest, serverId: string): string {
  const answer = agentRequest(p, "mcp/connect", { serverId });
  if (typeof answer.result?.connectionId !== "string") throw new Error(`mcp/connect refused: ${JSON.stringify(answer)}`);
  return answer.result.connectionId;
}

let mcpRequestIds = 0;

/**
 * One MCP request: over a connection (`{connectionId}`, the connection form) or straight to a
 * server (`{serverId}`, the connectionless form, with a fresh `requestId`). Returns the proxy's
 * answer to the `mcp/message` request.
 */
export function mcpRequest(p: ProxyUnderTest, target: { connectionId: string } | { serverId: string }, method: string, params?: Json): Json {
  const envelope: Json = "serverId" in target ? { serverId: target.serverId, requestId: `mcp-request:${++mcpRequestIds}`, method } : { connectionId: target.connectionId, method };
  if (params !== undefined) envelope.params = params;
  return agentRequest(p, "mcp/message", envelope);
}

/** The text of a `CallToolResult` (its text blocks, one per line). */
export function toolText(result: Json): string {
  return (result?.content ?? []).filter((b: Json) => b.type === "text").map((b: Json) => b.text).join("\n");
}

/** A `session/update` notification wrapped as the conductor delivers it from the successor. */
export function agentUpdate(update: Json, sessionId = "sess-1"): Json {
  return ProxyUnderTest.fromAgent({ method: "session/update", params: { sessionId, update } });
}

/** What a proxy sends when it forwards `session/update` to its predecessor unchanged. */
export function clientUpdate(update: Json, sessionId = "sess-1"): Json {
  return { jsonrpc: "2.0", method: "session/update", params: { sessionId, update } };
}

export function textChunk(text: string, kind = "agent_message_chunk"): Json {
  return { sessionUpdate: kind, content: { type: "text", text } };
}
