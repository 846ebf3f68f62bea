/**
 * A built proxy loaded with Cordon's own loader and canonical-ABI host, with the test in the
 * conductor's seat: deliver messages from either side, get back exactly what the proxy sent.
 */
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CanonicalHost } from "../../runtime/sandbox/canonical-host.js";
import { type LoadedComponent, loadComponent } from "../../runtime/sandbox/component-loader.js";
import { fromAgent, type Id, type Json, unwrap } from "./messages.js";

/** Where tests cache validated components (per user, outside the project). */
export function testCacheDir(): string {
  const dir = join(tmpdir(), `cordon-test-cache-${process.getuid?.() ?? 0}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

export interface LoadProxyOptions {
  /** WASI the chain config would grant (`wasi:clocks`, `wasi:random`) for a `proxy-wasi` proxy. */
  grants?: string[];
  cacheDir?: string;
}

/** Loads a built proxy (`.wasm` component) the way `cordon run` does: checked, refused if it imports anything else. */
export function loadProxy(wasm: string, options: LoadProxyOptions = {}): Promise<LoadedComponent> {
  return loadComponent(wasm, { cacheDir: options.cacheDir ?? testCacheDir(), grants: options.grants });
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

/** An `initialize` answer from an agent side that speaks MCP-over-ACP (as Cordon's conductor advertises it). */
export const INIT_RESULT_MCP = {
  ...INIT_RESULT,
  agentCapabilities: { ...INIT_RESULT.agentCapabilities, mcpCapabilities: { http: false, sse: false, acp: true } },
};

/** What one delivery made the proxy send, by where it goes. */
export interface Sent {
  /** Requests and notifications toward the client side. */
  toClient: Json[];
  /** Requests and notifications toward the agent side, unwrapped from `proxy/successor` (`{jsonrpc, id?, method, params}`). */
  toAgent: Json[];
  /** Answers to requests the proxy received. */
  answers: Json[];
}

/** Sorts a proxy's output by direction (envelopes unwrapped). */
export function sides(out: Json[]): Sent {
  const sent: Sent = { toClient: [], toAgent: [], answers: [] };
  for (const m of out) {
    if (typeof m?.method !== "string") sent.answers.push(m);
    else if (m.method === "proxy/successor" || m.method === "_proxy/successor") sent.toAgent.push(unwrap(m));
    else sent.toClient.push(m);
  }
  return sent;
}

/**
 * One proxy instance with the test in the conductor's seat. `deliver` hands it a message (an object
 * is JSON.stringify'd; a string goes as is) and returns what it sent, parsed; `_cordon/log`
 * notifications are collected in `logs` instead. A trap throws (the instance is then dead).
 */
export class ProxyUnderTest {
  readonly host: CanonicalHost;
  readonly logs: { level: string; message: string }[] = [];
  /** Raw text of everything the proxy sent, in order (logs included). */
  readonly wire: string[] = [];
  private conductorId = 1000;
  private mcpRequestIds = 0;

  /** Instantiation runs the proxy's top-level code (its `register(...)`); it may not send. */
  constructor(component: LoadedComponent, options: { grants?: string[] } = {}) {
    this.host = new CanonicalHost(component.module, { encodings: component.encodings, grants: options.grants });
  }

  /**
   * Loads a built proxy (a path; or a component loaded once with `loadProxy`, to start many
   * instances cheaply) and instantiates it (not configured yet: see `configure`, `initialize`, `start`).
   */
  static async load(wasm: string | LoadedComponent, options: LoadProxyOptions = {}): Promise<ProxyUnderTest> {
    return new ProxyUnderTest(typeof wasm === "string" ? await loadProxy(wasm, options) : wasm, { grants: options.grants });
  }

  /**
   * Loads, configures and initializes a proxy, as a chain starts it: `_cordon/configure` with
   * `config`, then the `initialize` handshake answered with `agentResult` (or `INIT_RESULT_MCP`
   * when `mcp` is set).
   */
  static async start(
    wasm: string | LoadedComponent,
    config: Json = {},
    options: LoadProxyOptions & { name?: string; agentResult?: Json; initParams?: Json; mcp?: boolean } = {},
  ): Promise<ProxyUnderTest> {
    const p = await ProxyUnderTest.load(wasm, options);
    p.configure(config, options.name);
    p.initialize(options.initParams ?? INIT_PARAMS, options.agentResult ?? (options.mcp ? INIT_RESULT_MCP : INIT_RESULT));
    return p;
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

  /** Delivers one message; returns what the proxy sent, by direction (see `sides`). */
  send(message: string | Json): Sent {
    return sides(this.deliver(message));
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

  /** A fresh conductor-side JSON-RPC request id (a number; any `Id` is accepted where one is delivered). */
  nextId(): number {
    return this.conductorId++;
  }

  /** A fresh MCP `requestId` for the connectionless form, which must be a string (the schema's `McpRequestId`). */
  nextMcpRequestId(): string {
    return `mcp-request:${++this.mcpRequestIds}`;
  }

  /** `_cordon/configure`: the host's first message (the proxy's `config` and its name in the chain). */
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

  /** Delivers a message from the client side; returns what the proxy sent, by direction. */
  fromClient(method: string, params?: Json, id?: Id): Sent {
    return this.send({ jsonrpc: "2.0", ...(id === undefined ? {} : { id }), method, ...(params === undefined ? {} : { params }) });
  }

  /** Delivers a message from the agent side (enveloped for you); returns what the proxy sent, by direction. */
  fromAgent(method: string, params?: Json, id?: Id): Sent {
    return this.send(fromAgent(method, params, id));
  }

  /** Wraps a message as coming from the successor (`proxy/successor` envelope). */
  static fromAgent(inner: { method: string; params?: Json }, id?: Id, meta?: Json): Json {
    return fromAgent(inner.method, inner.params, id, meta);
  }
}

/** Configures and initializes a proxy (agent side answering `agentResult`). */
export function proxyUnderTest(
  component: LoadedComponent,
  config: Json = {},
  options: { grants?: string[]; agentResult?: Json; initParams?: Json } = {},
): Promise<ProxyUnderTest> {
  const p = new ProxyUnderTest(component, { grants: options.grants });
  p.configure(config);
  p.initialize(options.initParams ?? INIT_PARAMS, options.agentResult ?? INIT_RESULT);
  return Promise.resolve(p);
}
