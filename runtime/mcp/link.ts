/**
 * One MCP session of the agent's MCP client, relayed to the proxy that provides the server over
 * MCP-over-ACP in the **connection form**:
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
 * `mcp/message`). The transport (loopback HTTP, or the TCP line of a `cordon mcp-bridge`
 * process) is the caller's business: it hands messages in with {@link McpLink.fromClient} and
 * receives what goes to the client through `toClient`.
 *
 * Failure rules: a link that cannot connect answers every request with the connect error; a link
 * that closes answers its requests still in flight with an error, withdraws them upstream with
 * `$/cancel_request`, answers the proxy's requests still waiting on the agent with an error, and
 * sends `mcp/disconnect`.
 */
import { ErrorCodes, errorResponse, idFromKey, idKey, paramsObject, type JsonRpcError, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from "../protocol/json-rpc.js";

export const McpMethods = {
  connect: "mcp/connect",
  message: "mcp/message",
  disconnect: "mcp/disconnect",
} as const;

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

/** Receives the answer to a request of the agent's client. */
export type Reply = (response: JsonRpcResponse) => void;

type Call = { upstreamId: JsonRpcId; reply: Reply };

/**
 * Everything is synchronous once the connection is up: an answer or a message from the proxy side
 * reaches `toClient` / the reply in the order the conductor routed them.
 */
export class McpLink {
  connectionId: string | null = null;
  private failure: JsonRpcError | null = null;
  private closedBecause: string | null = null;
  private connecting = true;
  /** What the agent's client sent before `mcp/connect` was answered. */
  private readonly early: { message: JsonRpcMessage; reply: Reply }[] = [];
  /** The agent's requests in flight upstream, by the agent's MCP id. */
  private readonly calls = new Map<string, Call>();
  /** The proxy's requests delivered to the agent, by the bridge-local id → the id to answer upstream. */
  private readonly serverCalls = new Map<string, JsonRpcId>();
  private nextLocal = 1;

  constructor(
    private readonly up: Upstream,
    readonly serverId: string,
    private readonly toClient: (message: JsonRpcMessage) => void,
    private readonly hooks: { connected(link: McpLink): void; closed(link: McpLink): void },
  ) {
    this.up.request(McpMethods.connect, { serverId }, (answer) => this.connected(answer));
  }

  get closed(): boolean {
    return this.closedBecause !== null;
  }

  private connected(answer: JsonRpcResponse): void {
    this.connecting = false;
    const result = paramsObject(answer.result);
    // `connection_id` is the Rust SDK's older spelling.
    const connectionId = result?.connectionId ?? result?.connection_id;
    if (answer.error) this.failure = answer.error;
    else if (typeof connectionId !== "string") {
      this.failure = { code: ErrorCodes.internalError, message: `mcp/connect for server ${JSON.stringify(this.serverId)} was answered without a connectionId` };
    } else {
      this.connectionId = connectionId;
      if (this.closed) this.disconnect();
      else this.hooks.connected(this);
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
    if (!("method" in message)) return this.answerFromClient(message as JsonRpcResponse);
    const isRequest = "id" in message;
    const refusal = this.failure ?? (this.closedBecause !== null ? { code: ErrorCodes.internalError, message: `MCP connection closed: ${this.closedBecause}` } : null);
    if (refusal) {
      if (isRequest) reply(errorResponse((message as JsonRpcRequest).id, refusal.code, refusal.message, refusal.data));
      return;
    }
    const params: Record<string, unknown> = { connectionId: this.connectionId, method: message.method };
    if (message.params !== undefined) params.params = message.params;
    if (!isRequest) {
      // mcp/message carries no inner id, so the server could not tell which call an MCP
      // `notifications/cancelled` means: a call in flight is withdrawn with `$/cancel_request`.
      const cancelled = message.method === "notifications/cancelled" ? paramsObject(message.params)?.requestId : undefined;
      const call = typeof cancelled === "string" || typeof cancelled === "number" ? this.calls.get(idKey(cancelled)) : undefined;
      if (call) this.up.cancel(call.upstreamId);
      else this.up.notify(McpMethods.message, params);
      return;
    }
    const id = (message as JsonRpcRequest).id;
    const key = idKey(id);
    if (this.calls.has(key)) return reply(errorResponse(id, ErrorCodes.invalidRequest, `request id ${JSON.stringify(id)} is already in flight on this MCP session`));
    const call: Call = { upstreamId: 0, reply };
    call.upstreamId = this.up.request(McpMethods.message, params, (answer) => {
      if (this.calls.get(key) !== call) return; // abandoned, or answered at close
      this.calls.delete(key);
      reply(answer.error ? errorResponse(id, answer.error.code, answer.error.message, answer.error.data) : { jsonrpc: "2.0", id, result: answer.result ?? null });
    });
    this.calls.set(key, call);
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
      this.calls.delete(key);
      this.up.cancel(call.upstreamId);
      return call.reply(errorResponse(id, ErrorCodes.requestCancelled, "the MCP client went away before the answer"));
    }
    const early = this.early.findIndex((e) => "id" in e.message && "method" in e.message && idKey((e.message as JsonRpcRequest).id) === key);
    if (early >= 0) this.early.splice(early, 1)[0].reply(errorResponse(id, ErrorCodes.requestCancelled, "the MCP client went away before the answer"));
  }

  /** An `mcp/message` for this connection from the proxy side (`message.params.connectionId` is ours). */
  fromServer(message: JsonRpcRequest | { jsonrpc: "2.0"; method: string; params?: unknown }): void {
    const p = paramsObject(message.params);
    const isRequest = "id" in message;
    const upstreamId = isRequest ? (message as JsonRpcRequest).id : undefined;
    if (typeof p?.method !== "string") {
      if (upstreamId !== undefined) this.up.respond(upstreamId, { error: { code: ErrorCodes.invalidParams, message: "mcp/message needs params {connectionId, method, params?}" } });
      return;
    }
    if (this.closed) {
      if (upstreamId !== undefined) this.up.respond(upstreamId, { error: { code: ErrorCodes.internalError, message: `MCP connection closed: ${this.closedBecause}` } });
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
      this.toClient({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: idFromKey(key), reason: "cancelled by the server" } });
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
      this.calls.delete(key);
      this.up.cancel(call.upstreamId);
      call.reply(error(idFromKey(key)));
    }
    for (const { message, reply } of this.early.splice(0)) if ("method" in message && "id" in message) reply(error((message as JsonRpcRequest).id));
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
