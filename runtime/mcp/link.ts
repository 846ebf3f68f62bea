/**
 * One MCP session of the agent's MCP client, relayed to the proxy that provides the server over
 * MCP-over-ACP. Two forms exist; a link speaks one of them at a time.
 *
 * **Connectionless form** (the ACP schema's current `mcp/message`, `schema.unstable.json`, for
 * providers that know only it): every MCP *request* of the agent's client becomes
 *
 *   mcp/message {serverId, requestId, method, params?}            requestId: a fresh string per
 *                                                                  request (the schema's
 *                                                                  `McpRequestId`)
 *
 * answered with the carrier `{result}` or `{error}` (`MessageMcpResponse`; an outer error is a
 * binding failure), which the client gets as its MCP result or error. `params._meta` gets the
 * per-request MCP metadata the ACP SDK's `McpOverAcpCaller` adds (protocol version, and the
 * client's capabilities and info from its `initialize`), so a strict SDK provider accepts it. The
 * form has no client→server notifications: `notifications/initialized` and the like are dropped,
 * and `notifications/cancelled` for a call in flight withdraws the outer request
 * (`$/cancel_request`). It has no server→client requests either; the provider's request-scoped
 * notifications (`mcp/message {serverId, requestId, method, params?}` without an id,
 * `MessageMcpNotification`) reach the client as MCP notifications.
 *
 * **Connection form** (the older draft, tried first, see "Which form"):
 *
 *   mcp/connect {serverId} → {connectionId}                       when the link opens
 *   mcp/message {connectionId, method, params?}                   each MCP request / notification
 *                                                                  of the agent's client (a request
 *                                                                  is answered with the inner MCP
 *                                                                  result, or an outer error)
 *   $/cancel_request {requestId}                                  the client's MCP
 *                                                                  `notifications/cancelled` for a
 *                                                                  call in flight (the inner id is
 *                                                                  not on the wire, so the outer
 *                                                                  request is what is cancelled)
 *   mcp/disconnect {connectionId}                                 when the link closes
 *
 * and back: an `mcp/message {connectionId, …}` from the proxy side is delivered to the agent's
 * client (a request with a bridge-local id, whose answer goes back as the answer to the
 * `mcp/message`).
 *
 * **Which form.** The connection form first: it is the one that carries MCP both ways (the
 * client's notifications to the server, and the server's requests — sampling, elicitation,
 * `roots/list`, `ping` — and notifications — `list_changed` — to the client at any time), which the
 * connectionless form cannot: its `mcp/message` request goes from the consumer to the provider
 * only, and a provider's notification must name a request in flight (`MessageMcpNotification`).
 * What a server's provider speaks is remembered per `serverId` ({@link FormMemory}). While it is not
 * known, a link opens with `mcp/connect`; a provider that knows only the connectionless form (the
 * ACP SDK's `McpOverAcpProvider` has no `mcp/connect`), or nobody owning the server, answers it
 * with an error, and the link then speaks the connectionless form, remembered once a well-formed
 * carrier comes back. If that fails too, the connectionless answer is the one the client gets.
 * The cost of the probe: one `mcp/connect` round trip per MCP session of a connectionless-only
 * server whose form is not yet known (serverIds are per session setup).
 *
 * **MCP's handshake.** The agent's MCP client starts with `initialize`; it is sent like any request
 * (providers written for a stateful MCP client answer it). A provider of MCP 2026-07-28, which has
 * no handshake, answers it with an inner method-not-found: the bridge then answers it itself (the
 * version the client asked for, the declaration's name as the server's, and as capabilities the
 * kinds whose list the server answers: one `tools/list`, `resources/list` and `prompts/list` probe).
 *
 * The transport (loopback HTTP, or the TCP line of a `cordon mcp-bridge` process) is the caller's
 * business: it hands messages in with {@link McpLink.fromClient} and receives what goes to the
 * client through `toClient`.
 *
 * Failure rules: a link that cannot connect answers every request with the connect error; a link
 * that closes answers its requests still in flight with an error, withdraws them upstream with
 * `$/cancel_request`, answers the proxy's requests still waiting on the agent with an error, and
 * (connection form) sends `mcp/disconnect`.
 */
import { randomUUID } from "node:crypto";
import {
  ErrorCodes,
  errorResponse,
  idFromKey,
  idKey,
  type JsonRpcError,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  paramsObject,
} from "../protocol/json-rpc.js";

export const McpMethods = {
  connect: "mcp/connect",
  message: "mcp/message",
  disconnect: "mcp/disconnect",
} as const;

export type McpForm = "connectionless" | "connection";

/**
 * The MCP revision named in each connectionless request's `params._meta`, and the `_meta` keys, as
 * the ACP SDK 2.4.0's `McpOverAcpCaller` sends them (`MCP_PROTOCOL_VERSION`, `MCP_META_*`).
 */
const MCP_META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  version: "2026-07-28",
} as const;

/** Every connectionless `requestId` the bridge makes starts so (then a random UUID). */
export const REQUEST_ID_PREFIX = "cordon:";

/** What is known, per `serverId`, of the form its provider speaks (shared by the links of a bridge). */
export interface FormMemory {
  formOf(serverId: string): McpForm | undefined;
  learned(serverId: string, form: McpForm): void;
}

/** What a link needs from the bridge: requests and notifications toward the proxies, as if from the agent. */
export interface Upstream {
  /**
   * Sends a request toward the proxies; `onAnswer` is called synchronously when the answer is
   * routed to the bridge. Returns the bridge's own id for it (for {@link Upstream.cancel}).
   */
  request(method: string, params: unknown, onAnswer: (response: JsonRpcResponse) => void): JsonRpcId;
  notify(method: string, params: unknown): void;
  /** Answers a request that came from the proxy side. */
  respond(id: JsonRpcId, outcome: { result: unknown } | { error: JsonRpcError }): void;
  /** Withdraws a request sent with {@link Upstream.request} (`$/cancel_request`); its late answer is ignored. */
  cancel(id: JsonRpcId): void;
}

export interface LinkHooks {
  connected(link: McpLink): void;
  closed(link: McpLink): void;
  /** A connectionless request is in flight under `requestId` (`active`), or no longer. */
  tracking?(link: McpLink, requestId: string, active: boolean): void;
}

/** Receives the answer to a request of the agent's client. */
export type Reply = (response: JsonRpcResponse) => void;

type Call = { upstreamId: JsonRpcId; reply: Reply; requestId?: string };

/** Parses a `MessageMcpResponse` carrier: `{result}` (even null) or `{error}` with a code and message; else null. */
function parseCarrier(value: unknown): { result: unknown } | { error: JsonRpcError } | null {
  const v = paramsObject(value);
  if (!v) return null;
  if (Object.hasOwn(v, "result")) return { result: v.result };
  const error = paramsObject(v.error);
  if (error && Number.isInteger(error.code) && typeof error.message === "string") return { error: error as unknown as JsonRpcError };
  return null;
}

/**
 * Everything is synchronous once the connection is up: an answer or a message from the proxy side
 * reaches `toClient` / the reply in the order the conductor routed them.
 */
export class McpLink {
  /** The form this link speaks now. */
  form: McpForm = "connectionless";
  connectionId: string | null = null;
  private failure: JsonRpcError | null = null;
  private closedBecause: string | null = null;
  private connecting = false;
  /** What the agent's client sent before `mcp/connect` was answered. */
  private readonly early: { message: JsonRpcMessage; reply: Reply }[] = [];
  /** The agent's requests in flight upstream, by the agent's MCP id. */
  private readonly calls = new Map<string, Call>();
  /** Connectionless: the calls in flight by their `requestId`. */
  private readonly byRequestId = new Map<string, Call>();
  /** The proxy's requests delivered to the agent, by the bridge-local id → the id to answer upstream. */
  private readonly serverCalls = new Map<string, JsonRpcId>();
  private nextLocal = 1;
  /** From the client's `initialize`, for each connectionless request's `_meta`. */
  private clientCapabilities: Record<string, unknown> = {};
  private clientInfo: unknown = undefined;

  constructor(
    private readonly up: Upstream,
    readonly serverId: string,
    private readonly toClient: (message: JsonRpcMessage) => void,
    private readonly hooks: LinkHooks,
    private readonly memory: FormMemory = { formOf: () => "connection", learned: () => {} },
    /** The declaration's name (what an `initialize` answered by the bridge itself names). */
    private readonly serverName: string = serverId,
  ) {
    if (memory.formOf(serverId) !== "connectionless") this.connect();
  }

  get closed(): boolean {
    return this.closedBecause !== null;
  }

  /** The link cannot carry messages (its `mcp/connect` failed). */
  get refused(): boolean {
    return this.failure !== null;
  }

  private connect(): void {
    this.form = "connection";
    this.connecting = true;
    this.up.request(McpMethods.connect, { serverId: this.serverId }, (answer) => this.connected(answer));
  }

  private connected(answer: JsonRpcResponse): void {
    this.connecting = false;
    const result = paramsObject(answer.result);
    // `connection_id` is the Rust SDK's older spelling.
    const connectionId = result?.connectionId ?? result?.connection_id;
    if (typeof connectionId === "string" && !answer.error) {
      this.connectionId = connectionId;
      this.memory.learned(this.serverId, "connection");
      if (this.closed) this.disconnect();
      else this.hooks.connected(this);
    } else if (this.memory.formOf(this.serverId) === undefined) {
      this.form = "connectionless"; // not understood, or not owned: the connectionless form's answer decides
    } else {
      this.failure = answer.error ?? {
        code: ErrorCodes.internalError,
        message: `mcp/connect for server ${JSON.stringify(this.serverId)} was answered without a connectionId`,
      };
    }
    for (const { message, reply } of this.early.splice(0)) this.fromClient(message, reply);
  }

  /**
   * A message from the agent's MCP client. A request's answer goes to `reply` (exactly once);
   * notifications and answers to the proxy's own requests have none.
   */
  fromClient(message: JsonRpcMessage, reply: Reply = () => {}): void {
    if (this.connecting) {
      this.early.push({ message, reply });
      return;
    }
    if (!("method" in message)) {
      if (this.form === "connection") this.answerFromClient(message as JsonRpcResponse);
      return; // connectionless: the provider cannot have asked anything
    }
    const isRequest = "id" in message;
    const refusal =
      this.failure ??
      (this.closedBecause !== null ? { code: ErrorCodes.internalError, message: `MCP connection closed: ${this.closedBecause}` } : null);
    if (refusal) {
      if (isRequest) reply(errorResponse((message as JsonRpcRequest).id, refusal.code, refusal.message, refusal.data));
      return;
    }
    if (!isRequest) {
      // mcp/message carries no inner id, so the server could not tell which call an MCP
      // `notifications/cancelled` means: a call in flight is withdrawn with `$/cancel_request`.
      const cancelled = message.method === "notifications/cancelled" ? paramsObject(message.params)?.requestId : undefined;
      const call = typeof cancelled === "string" || typeof cancelled === "number" ? this.calls.get(idKey(cancelled)) : undefined;
      if (call) this.up.cancel(call.upstreamId);
      // The connectionless form has no client→server notifications.
      else if (this.form === "connection") this.up.notify(McpMethods.message, this.connectionParams(message.method, message.params));
      return;
    }
    const id = (message as JsonRpcRequest).id;
    const key = idKey(id);
    if (this.calls.has(key))
      return reply(
        errorResponse(id, ErrorCodes.invalidRequest, `request id ${JSON.stringify(id)} is already in flight on this MCP session`),
      );
    if (this.form === "connection") return this.viaConnection(message as JsonRpcRequest, reply);
    this.connectionless(message as JsonRpcRequest, reply);
  }

  private connectionParams(method: string, params: unknown): Record<string, unknown> {
    const out: Record<string, unknown> = { connectionId: this.connectionId, method };
    if (params !== undefined) out.params = params;
    return out;
  }

  private viaConnection(message: JsonRpcRequest, reply: Reply): void {
    const { id } = message;
    const key = idKey(id);
    const call: Call = { upstreamId: 0, reply };
    call.upstreamId = this.up.request(McpMethods.message, this.connectionParams(message.method, message.params), (answer) => {
      if (this.calls.get(key) !== call) return; // abandoned, or answered at close
      this.calls.delete(key);
      reply(
        answer.error
          ? errorResponse(id, answer.error.code, answer.error.message, answer.error.data)
          : { jsonrpc: "2.0", id, result: answer.result ?? null },
      );
    });
    this.calls.set(key, call);
  }

  private connectionless(message: JsonRpcRequest, reply: Reply): void {
    const { id, method } = message;
    const key = idKey(id);
    if (method === "initialize") {
      const p = paramsObject(message.params);
      const caps = paramsObject(p?.capabilities);
      if (caps) this.clientCapabilities = caps;
      if (paramsObject(p?.clientInfo)) this.clientInfo = p!.clientInfo;
    }
    const requestId = `${REQUEST_ID_PREFIX}${randomUUID()}`;
    const params: Record<string, unknown> = { serverId: this.serverId, requestId, method };
    const inner = this.withMeta(message.params);
    if (inner !== undefined) params.params = inner;
    const call: Call = { upstreamId: 0, reply, requestId };
    call.upstreamId = this.up.request(McpMethods.message, params, (answer) => {
      if (this.calls.get(key) !== call) return; // abandoned, or answered at close
      this.settle(key, call);
      const outcome = answer.error ? null : parseCarrier(answer.result);
      if (outcome && this.memory.formOf(this.serverId) === undefined) this.memory.learned(this.serverId, "connectionless");
      if (answer.error) return reply(errorResponse(id, answer.error.code, answer.error.message, answer.error.data));
      if (!outcome)
        return reply(
          errorResponse(id, ErrorCodes.internalError, "the MCP server's answer was not an MCP-over-ACP carrier ({result} or {error})"),
        );
      if (method === "initialize" && "error" in outcome && outcome.error.code === ErrorCodes.methodNotFound) {
        return this.probeCapabilities((capabilities) =>
          reply({ jsonrpc: "2.0", id, result: this.initializeResult(message.params, capabilities) }),
        );
      }
      reply(
        "result" in outcome
          ? { jsonrpc: "2.0", id, result: outcome.result }
          : errorResponse(id, outcome.error.code, outcome.error.message, outcome.error.data),
      );
    });
    this.calls.set(key, call);
    this.byRequestId.set(requestId, call);
    this.hooks.tracking?.(this, requestId, true);
  }

  /**
   * The answer to the client's `initialize` when the server has none (an MCP 2026-07-28 server, as
   * the ACP SDK's providers serve: every request stands alone, there is no handshake): the version
   * the client asked for, the capabilities the server was found to serve, the declaration's name.
   */
  private initializeResult(params: unknown, capabilities: Record<string, unknown>): Record<string, unknown> {
    const asked = paramsObject(params)?.protocolVersion;
    return {
      protocolVersion: typeof asked === "string" ? asked : "2025-11-25",
      capabilities,
      serverInfo: { name: this.serverName, version: "0.0.0" },
    };
  }

  /**
   * What a server without a handshake serves, found by asking: one `tools/list`, `resources/list`
   * and `prompts/list` each (connectionless, in parallel); a kind is advertised when its list is
   * answered with a result. Costs three round trips, once per MCP session, and only for such servers.
   */
  private probeCapabilities(then: (capabilities: Record<string, unknown>) => void): void {
    const kinds = ["tools", "resources", "prompts"] as const;
    const found: Record<string, unknown> = {};
    let waiting = kinds.length;
    for (const kind of kinds) {
      const params = {
        serverId: this.serverId,
        requestId: `${REQUEST_ID_PREFIX}${randomUUID()}`,
        method: `${kind}/list`,
        params: this.withMeta({}),
      };
      this.up.request(McpMethods.message, params, (answer) => {
        const outcome = answer.error ? null : parseCarrier(answer.result);
        if (outcome && "result" in outcome) found[kind] = {};
        if (--waiting === 0) then(Object.fromEntries(kinds.filter((k) => k in found).map((k) => [k, found[k]])));
      });
    }
  }

  /** `params` with the per-request MCP metadata added (what the caller gave wins); non-objects as they are. */
  private withMeta(params: unknown): unknown {
    if (params !== undefined && params !== null && !paramsObject(params)) return params;
    const base = (params as Record<string, unknown> | null | undefined) ?? {};
    const meta: Record<string, unknown> = { ...(paramsObject(base._meta) ?? {}) };
    if (!Object.hasOwn(meta, MCP_META.protocolVersion)) meta[MCP_META.protocolVersion] = MCP_META.version;
    if (!Object.hasOwn(meta, MCP_META.clientCapabilities)) meta[MCP_META.clientCapabilities] = this.clientCapabilities;
    if (this.clientInfo !== undefined && !Object.hasOwn(meta, MCP_META.clientInfo)) meta[MCP_META.clientInfo] = this.clientInfo;
    return { ...base, _meta: meta };
  }

  private settle(key: string, call: Call): void {
    this.calls.delete(key);
    if (call.requestId !== undefined) {
      this.byRequestId.delete(call.requestId);
      this.hooks.tracking?.(this, call.requestId, false);
    }
  }

  /** The agent's client answered a request the proxy sent it. */
  private answerFromClient(message: JsonRpcResponse): void {
    if (message.id === null) return;
    const key = idKey(message.id);
    const upstreamId = this.serverCalls.get(key);
    if (upstreamId === undefined) return;
    this.serverCalls.delete(key);
    this.up.respond(upstreamId, message.error ? { error: message.error } : { result: message.result ?? null });
  }

  /** The agent's client gave up waiting for `id` (its HTTP request went away): withdraw it upstream. */
  abandon(id: JsonRpcId): void {
    const key = idKey(id);
    const call = this.calls.get(key);
    if (call) {
      this.settle(key, call);
      this.up.cancel(call.upstreamId);
      return call.reply(errorResponse(id, ErrorCodes.requestCancelled, "the MCP client went away before the answer"));
    }
    const early = this.early.findIndex(
      (e) => "id" in e.message && "method" in e.message && idKey((e.message as JsonRpcRequest).id) === key,
    );
    if (early >= 0)
      this.early.splice(early, 1)[0].reply(errorResponse(id, ErrorCodes.requestCancelled, "the MCP client went away before the answer"));
  }

  /**
   * A connectionless `mcp/message` notification from the provider for one of this link's requests
   * in flight (`params.requestId` is one of ours): delivered to the client. Returns false if not ours.
   */
  notificationFromServer(params: Record<string, unknown>): boolean {
    const requestId = params.requestId;
    if (typeof requestId !== "string" || !this.byRequestId.has(requestId) || params.serverId !== this.serverId) return false;
    if (typeof params.method !== "string") return true; // malformed: dropped
    const inner: Record<string, unknown> = { jsonrpc: "2.0", method: params.method };
    if (params.params !== undefined && params.params !== null) inner.params = params.params;
    this.toClient(inner as unknown as JsonRpcMessage);
    return true;
  }

  /** An `mcp/message` for this connection from the proxy side (`message.params.connectionId` is ours). */
  fromServer(message: JsonRpcRequest | { jsonrpc: "2.0"; method: string; params?: unknown }): void {
    const p = paramsObject(message.params);
    const isRequest = "id" in message;
    const upstreamId = isRequest ? (message as JsonRpcRequest).id : undefined;
    if (typeof p?.method !== "string") {
      if (upstreamId !== undefined)
        this.up.respond(upstreamId, {
          error: { code: ErrorCodes.invalidParams, message: "mcp/message needs params {connectionId, method, params?}" },
        });
      return;
    }
    if (this.closed) {
      if (upstreamId !== undefined)
        this.up.respond(upstreamId, { error: { code: ErrorCodes.internalError, message: `MCP connection closed: ${this.closedBecause}` } });
      return;
    }
    const inner: Record<string, unknown> = { jsonrpc: "2.0", method: p.method };
    if (p.params !== undefined) inner.params = p.params;
    if (upstreamId !== undefined) {
      const localId = `cordon-${this.nextLocal++}`;
      this.serverCalls.set(idKey(localId), upstreamId);
      inner.id = localId;
    }
    this.toClient(inner as unknown as JsonRpcMessage);
  }

  /** The proxy side withdrew a request it sent through this link (`$/cancel_request`). */
  cancelServerCall(upstreamId: JsonRpcId): boolean {
    for (const [key, id] of this.serverCalls) {
      if (idKey(id) !== idKey(upstreamId)) continue;
      this.serverCalls.delete(key);
      this.toClient({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: idFromKey(key), reason: "cancelled by the server" },
      });
      this.up.respond(upstreamId, { error: { code: ErrorCodes.requestCancelled, message: "Request cancelled" } });
      return true;
    }
    return false;
  }

  /** The agent's side of the link is gone (or the session ended): answer and withdraw everything in flight. */
  close(reason: string): void {
    if (this.closedBecause !== null) return;
    this.closedBecause = reason;
    const error = (id: JsonRpcId) => errorResponse(id, ErrorCodes.internalError, `MCP connection closed: ${reason}`);
    for (const [key, call] of [...this.calls]) {
      this.settle(key, call);
      this.up.cancel(call.upstreamId);
      call.reply(error(idFromKey(key)));
    }
    for (const { message, reply } of this.early.splice(0))
      if ("method" in message && "id" in message) reply(error((message as JsonRpcRequest).id));
    for (const upstreamId of this.serverCalls.values()) {
      this.up.respond(upstreamId, { error: { code: ErrorCodes.internalError, message: `the agent's MCP client is gone: ${reason}` } });
    }
    this.serverCalls.clear();
    if (this.connectionId !== null) this.disconnect();
    this.hooks.closed(this);
  }

  private disconnect(): void {
    this.up.request(McpMethods.disconnect, { connectionId: this.connectionId }, () => {});
  }
}
