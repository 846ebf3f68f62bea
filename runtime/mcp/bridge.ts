/**
 * The MCP-over-ACP bridge: an in-process component the conductor places immediately before the
 * agent (agent mode only), like the Rust SDK's `McpOverAcpPolyfill`. To the conductor it is one
 * more proxy: it is sent `proxy/initialize`, forwards everything to its successor (the agent) in
 * `proxy/successor` envelopes and everything from it back unwrapped, with per-hop ids and
 * `$/cancel_request` translated both ways. What it changes:
 *
 * - **`initialize` answer.** If the agent advertises `agentCapabilities.mcpCapabilities.acp`, the
 *   bridge is inert: every message passes untouched, declarations stay `{"type":"acp"}` and the
 *   agent speaks MCP-over-ACP itself. Otherwise the bridge sets `mcpCapabilities.acp: true` in the
 *   answer it returns upstream (it can always bridge: stdio MCP is mandatory for every agent). When
 *   a session first declares an acp server it starts one loopback listener: streamable HTTP if the
 *   agent advertises `mcpCapabilities.http`, else TCP for stdio bridge commands.
 * - **Session setup** (`session/new`, `load`, `resume`, `fork`) going to the agent: each
 *   `{"type":"acp","name","serverId"}` becomes
 *   `{"type":"http","name","url":"http://127.0.0.1:PORT/mcp/<id>","headers":[{"name":"Authorization","value":"Bearer <secret>"}]}`
 *   or `{"name","command":<node>,"args":[<bin/cordon.js>,"mcp-bridge","--port",PORT,"--endpoint",<id>],"env":[{"name":"CORDON_BRIDGE_TOKEN","value":<secret>}]}`
 *   (`_meta` kept). One fresh secret per setup request; endpoints of a failed setup, of a session
 *   that is closed or deleted, and of earlier setups of a session that is loaded or resumed again,
 *   are dropped with their connections.
 * - **MCP traffic.** Each MCP session the agent's client opens on an endpoint is one link
 *   (`link.ts`) whose messages are sent upstream as if the agent had sent them, so they travel
 *   right→left through the proxies until the one owning the `serverId` answers. First in the
 *   connection form (`mcp/connect`, `mcp/message {connectionId}` both ways, `mcp/disconnect`),
 *   the one that carries MCP both ways; a provider that refuses `mcp/connect` (one that knows only
 *   the ACP schema's current, connectionless form) is then spoken to in that form: one
 *   `mcp/message {serverId, requestId, method, params}` per MCP request, answered `{result}` or
 *   `{error}`. What a provider speaks is remembered per `serverId` (see `link.ts`). `mcp/message`
 *   from upstream for one of the bridge's connections (the server's requests and notifications
 *   to the agent's client), or a connectionless notification for one of its requests in flight, is
 *   delivered to the agent's client; anything else passes through.
 *
 * What the connectionless form cannot carry of the agent's stateful MCP session, for a provider
 * that speaks only it: client→server notifications (`notifications/initialized`,
 * `roots/list_changed`) are dropped, and server→client requests (`ping`, sampling, elicitation,
 * `roots/list`) and notifications outside a request in flight (`list_changed`) do not exist.
 */
import type { Logger } from "../log.js";
import { packagePath } from "../package-root.js";
import {
  classify,
  ErrorCodes,
  idFromKey,
  idKey,
  type JsonRpcError,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  paramsObject,
} from "../protocol/json-rpc.js";
import { isProxyInitialize, isProxySuccessor, Methods } from "../protocol/methods.js";
import { withMember } from "../protocol/raw-json.js";
import { type Call, cancelRequest, unwrap, withId, wrap } from "../routing/envelope.js";
import type { Grant } from "../routing/grants.js";
import type { Peer, PeerSink } from "../routing/peer.js";
import { type Endpoint, type EndpointHost, guarded, newEndpointId, newSecret } from "./endpoints.js";
import type { HttpEndpoint } from "./http-endpoint.js";
import { type FormMemory, type McpForm, McpLink, McpMethods, REQUEST_ID_PREFIX, type Upstream } from "./link.js";
import { TcpEndpoint } from "./tcp-endpoint.js";

/** `native`: the agent speaks MCP-over-ACP; `http` / `stdio`: the bridge rewrites; `off`: no listener could start. */
type Mode = "pending" | "native" | "http" | "stdio" | "off";

const SETUP_METHODS = new Set(["session/new", "session/load", "session/resume", "session/fork"]);
const ENDING_METHODS = new Set(["session/close", "session/delete"]);

/**
 * What the conductor grants the bridge: it is Cordon's own component, and the stdio or HTTP
 * declarations it writes in place of a proxy's `{"type":"acp"}` one lead to its own endpoints,
 * which the `mcp-servers` rule would otherwise refuse as servers a proxy added.
 */
export const BRIDGE_GRANTS: readonly Grant[] = ["agent:mcp"];

/** The command line of `cordon mcp-bridge` as this installation runs it. */
function defaultBridgeCommand(): { command: string; args: string[] } {
  return { command: process.execPath, args: [packagePath("bin", "cordon.js"), "mcp-bridge"] };
}

export interface McpBridgeOptions {
  log: Logger;
  /** How the agent launches a stdio bridge (default: this Node and this checkout's `bin/cordon.js`). */
  bridgeCommand?: { command: string; args: string[] };
  /**
   * `auto` (default): the connection form first (the one that carries MCP both ways), the
   * connectionless form for providers that refuse `mcp/connect` (link.ts, "Which form").
   * `connection`: the connection form only.
   */
  mcpForm?: "auto" | "connection";
}

export class McpBridgePeer implements Peer, EndpointHost {
  readonly label = "MCP bridge";
  readonly traceName = "mcp-bridge";
  /** It declares its own endpoint to the agent in place of each acp server it bridges (routing/rules/mcp-servers.ts). */
  readonly ownGrants = BRIDGE_GRANTS;
  readonly log: Logger;
  private sink: PeerSink | null = null;
  private mode: Mode = "pending";
  private nextId = 1;
  /** Requests the bridge sent to the conductor, by its own id. */
  private readonly pending = new Map<string, (response: JsonRpcResponse) => void>();
  /** Requests the conductor sent the bridge that it forwarded: the conductor's id → the bridge's id. */
  private readonly forwarded = new Map<string, { id: JsonRpcId; toSuccessor: boolean }>();
  /** Messages from upstream that wait: for the agent's `initialize` answer, or for the listener to start. */
  private held: Call[] | null = null;
  /** Messages from the conductor, and `whenIdle` callbacks, in order. */
  private readonly inbox: unknown[] = [];
  private draining = false;
  private http: HttpEndpoint | null = null;
  private tcp: TcpEndpoint | null = null;
  private listening = false;
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly links = new Map<string, McpLink>();
  /** Connectionless requests in flight, by their `requestId`. */
  private readonly requests = new Map<string, McpLink>();
  /** Per `serverId`: the form its provider speaks, once known. */
  private readonly forms = new Map<string, McpForm>();
  private readonly memory: FormMemory;
  private readonly bridgeCommand: { command: string; args: string[] };

  constructor(options: McpBridgeOptions) {
    this.log = options.log;
    this.bridgeCommand = options.bridgeCommand ?? defaultBridgeCommand();
    const connectionOnly = options.mcpForm === "connection";
    this.memory = {
      formOf: (serverId) => (connectionOnly ? "connection" : this.forms.get(serverId)),
      learned: (serverId, form) => {
        if (!this.forms.has(serverId)) this.log.debug(`MCP bridge: server ${serverId} speaks the ${form} form`);
        this.forms.set(serverId, form);
      },
    };
  }

  // ---- Peer ------------------------------------------------------------------------------

  async open(sink: PeerSink): Promise<void> {
    this.sink = sink;
  }

  /** From the conductor. Handled after the current routing step, in order (never re-entrantly). */
  send(message: JsonRpcMessage): void {
    this.inbox.push(message);
    if (this.draining) return;
    this.draining = true;
    queueMicrotask(() => {
      for (let m = this.inbox.shift(); m !== undefined; m = this.inbox.shift()) {
        try {
          if (typeof m === "function") m();
          else this.receive(m);
        } catch (error) {
          this.log.error(`MCP bridge: ${(error as Error).stack ?? String(error)}`);
        }
      }
      this.draining = false;
    });
  }

  /**
   * What the bridge would forward untouched, while it has nothing queued or held: the conductor
   * routes it straight past (so a chain without MCP-over-ACP servers pays no hop for the bridge).
   * Inert (the agent speaks MCP-over-ACP, or no listener could start): everything. Bridging:
   * everything from the agent, and everything toward it but session setup and teardown and
   * `mcp/message` (which may belong to one of its links). Until the agent's `initialize` answer: nothing.
   */
  passes(message: JsonRpcRequest | JsonRpcNotification, fromSuccessor: boolean): boolean {
    if (this.draining || this.held !== null) return false;
    switch (this.mode) {
      case "native":
      case "off":
        return true;
      case "pending":
        return false;
      default: {
        if (fromSuccessor) return true;
        const { method } = message;
        return !SETUP_METHODS.has(method) && !ENDING_METHODS.has(method) && method !== McpMethods.message;
      }
    }
  }

  /** Its output is emitted as each queued message is handled: idle once the inbox is drained. */
  whenIdle(then: () => void): void {
    if (this.draining) this.inbox.push(then);
    else then();
  }

  async close(): Promise<void> {
    for (const link of [...this.links.values()]) link.close("Cordon is shutting down");
    await Promise.all([this.http?.close(), this.tcp?.close()]);
  }

  // ---- EndpointHost ----------------------------------------------------------------------

  endpoint(id: string): Endpoint | undefined {
    return this.endpoints.get(id);
  }

  openLink(endpoint: Endpoint, toClient: (message: JsonRpcMessage) => void): McpLink {
    const link = new McpLink(
      this.upstream,
      endpoint.serverId,
      toClient,
      {
        connected: (l) => {
          this.links.set(l.connectionId!, l);
          this.log.debug(`MCP bridge: ${endpoint.name} (${endpoint.serverId}) connected as ${l.connectionId}`);
        },
        closed: (l) => {
          endpoint.links.delete(l);
          if (l.connectionId !== null && this.links.get(l.connectionId) === l) this.links.delete(l.connectionId);
        },
        tracking: (l, requestId, active) => {
          if (active) this.requests.set(requestId, l);
          else if (this.requests.get(requestId) === l) this.requests.delete(requestId);
        },
      },
      this.memory,
      endpoint.name,
    );
    endpoint.links.add(link);
    return link;
  }

  /** Toward the proxies, as if from the agent: unwrapped messages go to the bridge's predecessor. */
  private readonly upstream: Upstream = {
    request: (method, params, onAnswer) => {
      const id = this.ownId();
      this.pending.set(idKey(id), onAnswer);
      this.emit({ jsonrpc: "2.0", id, method, params });
      return id;
    },
    notify: (method, params) => this.emit({ jsonrpc: "2.0", method, params }),
    respond: (id, outcome) => this.emit({ jsonrpc: "2.0", id, ...outcome }),
    cancel: (id) => {
      if (this.pending.has(idKey(id))) this.emit(cancelRequest(id));
    },
  };

  // ---- routing ---------------------------------------------------------------------------

  private emit(message: JsonRpcMessage): void {
    this.sink?.message(message);
  }

  private ownId(): string {
    return `b${this.nextId++}`;
  }

  private receive(value: unknown): void {
    const c = classify(value);
    if (c.kind === "invalid") return this.log.warn(`MCP bridge: dropped an invalid message from the conductor (${c.reason})`);
    if (c.kind === "response") {
      const key = c.message.id === null ? null : idKey(c.message.id);
      const resolve = key === null ? undefined : this.pending.get(key);
      if (!resolve || key === null) return this.log.debug(`MCP bridge: answer to unknown id ${JSON.stringify(c.message.id)} dropped`);
      this.pending.delete(key);
      return resolve(c.message);
    }
    const message = c.message;
    if (isProxyInitialize(message.method)) return this.initialize(message);
    if (isProxySuccessor(message.method)) {
      const p = paramsObject(message.params);
      if (typeof p?.method !== "string") {
        if (c.kind === "request")
          this.respond(c.message.id, {
            error: { code: ErrorCodes.invalidRequest, message: `${message.method} needs params {method, params?}` },
          });
        return;
      }
      const inner = unwrap(message);
      if (typeof inner === "string") return; // checked above: p.method is a string
      return this.fromSuccessor(inner);
    }
    if (this.held) {
      this.held.push(message);
      return;
    }
    this.fromPredecessor(message);
  }

  private respond(id: JsonRpcId, outcome: { result: unknown } | { error: JsonRpcError }): void {
    this.emit({ jsonrpc: "2.0", id, ...outcome });
  }

  /** Forwards a call to the agent (wrapped) or to the predecessor (plain); `then` may rewrite the answer. */
  private forward(message: Call, toSuccessor: boolean, then?: (answer: JsonRpcResponse) => JsonRpcResponse): void {
    const toward = (m: Call): Call => (toSuccessor ? wrap(m, "rfd") : m);
    if (!("id" in message)) return this.emit(toward(message));
    const theirs = (message as JsonRpcRequest).id;
    const id = this.ownId();
    this.forwarded.set(idKey(theirs), { id, toSuccessor });
    this.pending.set(idKey(id), (answer) => {
      this.forwarded.delete(idKey(theirs));
      // Synchronously: what the agent sends after an answer must not overtake it.
      this.emit(withMember(then ? then(answer) : answer, "id", theirs));
    });
    this.emit(toward(withId(message, id)));
  }

  /** `$/cancel_request` is per hop: re-issue it with the bridge's own id, in the same direction. */
  private cancel(params: unknown, fromSuccessor: boolean): void {
    const requestId = paramsObject(params)?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return;
    const record = this.forwarded.get(idKey(requestId));
    if (!record || record.toSuccessor === fromSuccessor) {
      // A request of the proxy side that waits on the agent's MCP client?
      if (!fromSuccessor) for (const link of this.links.values()) if (link.cancelServerCall(requestId)) return;
      return;
    }
    const cancel = cancelRequest(record.id, paramsObject(params));
    this.emit(record.toSuccessor ? wrap(cancel, "rfd") : cancel);
  }

  private fromSuccessor(message: Call): void {
    if (message.method === Methods.cancelRequest) return this.cancel(message.params, true);
    this.forward(message.method === "elicitation/create" ? this.scopeToHop(message) : message, false);
  }

  /**
   * A request-scoped `elicitation/create` names, in `params.requestId`, a request the agent is
   * handling by the bridge's id for it; upstream it must name it by the conductor's id (as the
   * conductor does at each of its hops).
   */
  private scopeToHop(message: Call): Call {
    const params = paramsObject(message.params);
    const requestId = params?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return message;
    for (const [theirs, record] of this.forwarded) {
      if (record.toSuccessor && idKey(record.id) === idKey(requestId))
        return { ...message, params: { ...params, requestId: idFromKey(theirs) } };
    }
    return message;
  }

  private fromPredecessor(message: Call): void {
    const { method } = message;
    if (method === Methods.cancelRequest) return this.cancel(message.params, false);
    const bridging = this.mode === "http" || this.mode === "stdio";
    if (bridging && method === McpMethods.message) {
      const p = paramsObject(message.params);
      const connectionId = p?.connectionId;
      const link = typeof connectionId === "string" ? this.links.get(connectionId) : undefined;
      if (link) return link.fromServer(message);
      // A provider's notification for a connectionless request in flight (`MessageMcpNotification`).
      const requestId = p?.requestId;
      const owner = !("id" in message) && typeof requestId === "string" ? this.requests.get(requestId) : undefined;
      if (owner?.notificationFromServer(p!)) return;
      // For one of the bridge's requests that was answered already: the agent has no use for it.
      if (!("id" in message) && typeof requestId === "string" && requestId.startsWith(REQUEST_ID_PREFIX)) {
        return this.log.debug(`MCP bridge: dropped an mcp/message notification for request ${requestId}, no longer in flight`);
      }
    }
    if (bridging && SETUP_METHODS.has(method) && "id" in message) return this.setup(message as JsonRpcRequest);
    if (bridging && ENDING_METHODS.has(method) && "id" in message) {
      const sessionId = paramsObject(message.params)?.sessionId;
      return this.forward(message, true, (answer) => {
        if (!answer.error && typeof sessionId === "string") this.dropSession(sessionId);
        return answer;
      });
    }
    this.forward(message, true);
  }

  // ---- initialization --------------------------------------------------------------------

  private initialize(message: Call): void {
    if (!("id" in message)) return;
    this.held ??= [];
    this.forward(
      { jsonrpc: "2.0", id: (message as JsonRpcRequest).id, method: Methods.initialize, params: message.params },
      true,
      (answer) => {
        const result = paramsObject(answer.result);
        const agentCaps = paramsObject(result?.agentCapabilities) ?? {};
        const mcpCaps = paramsObject(agentCaps.mcpCapabilities) ?? {};
        if (answer.error || !result) this.mode = "off";
        else if (mcpCaps.acp === true) {
          this.mode = "native";
          this.log.debug("MCP bridge: the agent speaks MCP-over-ACP itself; nothing to bridge");
        } else this.mode = mcpCaps.http === true ? "http" : "stdio";
        this.release();
        if (this.mode === "native" || this.mode === "off") return answer;
        return { ...answer, result: { ...result, agentCapabilities: { ...agentCaps, mcpCapabilities: { ...mcpCaps, acp: true } } } };
      },
    );
  }

  /**
   * Starts the listener the agent's transport needs, the first time a session declares an acp
   * server (so a chain without MCP-over-ACP servers binds nothing). Messages from upstream wait
   * meanwhile, in order.
   */
  private async listen(): Promise<void> {
    this.held ??= [];
    try {
      if (this.mode === "http") {
        // Loaded here, not with the bridge: node:http is ~4 ms of every start, and only an agent
        // that takes MCP over HTTP, in a chain with MCP-over-ACP servers, ever needs it.
        const { HttpEndpoint } = await import("./http-endpoint.js");
        this.http = new HttpEndpoint(this);
        await this.http.listen();
        this.log.debug(`MCP bridge: the agent lacks mcpCapabilities.acp; bridging MCP servers over http://127.0.0.1:${this.http.port}`);
      } else {
        this.tcp = new TcpEndpoint(this);
        await this.tcp.listen();
        this.log.debug(
          `MCP bridge: the agent lacks mcpCapabilities.acp and http; bridging MCP servers over stdio (cordon mcp-bridge → 127.0.0.1:${this.tcp.port})`,
        );
      }
      this.listening = true;
    } catch (error) {
      this.log.error(
        `MCP bridge: cannot listen on 127.0.0.1 (${(error as Error).message}); MCP-over-ACP declarations reach the agent unchanged`,
      );
      this.mode = "off";
    }
    // After an await: an exception here would be an unhandled rejection, which ends the process.
    guarded(this.log, "the messages held while the listener started", () => this.release());
  }

  private release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (let i = 0; i < held.length; i++) {
      this.fromPredecessor(held[i]);
      // A setup that needs the listener holds everything again: keep the rest, in order, behind it.
      if (this.held) {
        (this.held as Call[]).push(...held.slice(i + 1));
        return;
      }
    }
  }

  // ---- session setup ---------------------------------------------------------------------

  private setup(message: JsonRpcRequest): void {
    const params = paramsObject(message.params);
    const servers = params?.mcpServers;
    if (!params || !Array.isArray(servers) || !servers.some(isAcpDeclaration)) return this.forward(message, true);
    if (!this.listening) {
      this.held = [message];
      void this.listen();
      return;
    }
    const secret = newSecret();
    const knownSession = message.method === "session/load" || message.method === "session/resume" ? params.sessionId : undefined;
    const made: Endpoint[] = [];
    const rewritten = servers.map((server) => {
      if (!isAcpDeclaration(server)) return server;
      const endpoint: Endpoint = {
        id: newEndpointId(),
        serverId: server.serverId,
        name: server.name,
        secret,
        sessionId: typeof knownSession === "string" ? knownSession : null,
        links: new Set(),
      };
      this.endpoints.set(endpoint.id, endpoint);
      made.push(endpoint);
      return this.declaration(endpoint, server._meta);
    });
    this.forward({ ...message, params: { ...params, mcpServers: rewritten } }, true, (answer) => {
      // load/resume set the session up again: its servers are the ones declared this time.
      if (!answer.error && typeof knownSession === "string") this.dropSession(knownSession, new Set(made));
      const sessionId = paramsObject(answer.result)?.sessionId;
      for (const endpoint of made) {
        if (answer.error) this.dropEndpoint(endpoint);
        else if (typeof sessionId === "string") endpoint.sessionId = sessionId;
      }
      return answer;
    });
  }

  private declaration(endpoint: Endpoint, meta: unknown): Record<string, unknown> {
    const extra = meta !== undefined ? { _meta: meta } : {};
    if (this.mode === "http") {
      return {
        type: "http",
        name: endpoint.name,
        url: this.http!.url(endpoint),
        headers: [{ name: "Authorization", value: `Bearer ${endpoint.secret}` }],
        ...extra,
      };
    }
    return {
      name: endpoint.name,
      command: this.bridgeCommand.command,
      args: [...this.bridgeCommand.args, "--port", String(this.tcp!.port), "--endpoint", endpoint.id],
      env: [{ name: "CORDON_BRIDGE_TOKEN", value: endpoint.secret }],
      ...extra,
    };
  }

  private dropSession(sessionId: string, keep: ReadonlySet<Endpoint> = new Set()): void {
    for (const endpoint of [...this.endpoints.values()])
      if (endpoint.sessionId === sessionId && !keep.has(endpoint)) this.dropEndpoint(endpoint);
  }

  private dropEndpoint(endpoint: Endpoint): void {
    this.endpoints.delete(endpoint.id);
    this.http?.drop(endpoint);
    this.tcp?.drop(endpoint);
    if (![...this.endpoints.values()].some((e) => e.serverId === endpoint.serverId)) this.forms.delete(endpoint.serverId);
    for (const link of [...endpoint.links]) link.close("the ACP session ended");
  }
}

function isAcpDeclaration(server: unknown): server is { type: "acp"; name: string; serverId: string; _meta?: unknown } {
  const s = paramsObject(server);
  return s?.type === "acp" && typeof s.name === "string" && typeof s.serverId === "string";
}
