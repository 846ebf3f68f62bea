// The Proxy base class: a proxy author subclasses it, overrides the hooks it cares about, and calls
// `register(new MyProxy())` at top level. The SDK does the protocol bookkeeping:
// - unwraps `proxy/successor` envelopes (and wraps what goes to the successor);
// - issues its own request ids on both sides and keeps a pending map that relays every answer back
//   to whoever asked, under the id they used (answers to enveloped requests are never wrapped);
// - answers `proxy/initialize` by forwarding `initialize` to the successor and replying with its
//   (optionally edited) result;
// - translates `$/cancel_request` to its own ids for requests it forwarded;
// - takes `_cordon/configure` into `this.config` — only when it is the very first message the host
//   delivers; a later one (only a forger — the client, another proxy — could send it) is ignored
//   with a warning, as is every other `_cordon/*` message from either side (the namespace is the
//   host's; a request is answered with an error) — and sends `_cordon/log` for `this.log(...)`;
// - declares and serves the proxy's MCP servers (`addMcpServer`, mcp.ts) over MCP-over-ACP.
//
// Hook defaults forward unchanged, so an empty subclass is a transparent pass-through.
// AssemblyScript has no closures: hooks are methods, and answers to a proxy's own requests come
// back through `onReply(tag, response)` with the tag it chose.
import { JSON } from "json-as";
import { send, setReceiver } from "./abi";
import { Config } from "./config";
import { Builder, RawObject, decodeString, getNumber, quote, slice } from "./json";
import { McpHost, McpServer, ServedServer, ToolCall } from "./mcp";
import {
  InitializeRequest,
  InitializeResponse,
  Message,
  Notification,
  PermissionRequest,
  PromptRequest,
  Request,
  Response,
  SessionUpdate,
  Side,
} from "./messages";

/** JSON-RPC error codes. */
export namespace ErrorCode {
  export const ParseError: i32 = -32700;
  export const InvalidRequest: i32 = -32600;
  export const MethodNotFound: i32 = -32601;
  export const InvalidParams: i32 = -32602;
  export const InternalError: i32 = -32603;
  export const RequestCancelled: i32 = -32800;
}

/** Levels for `log`. */
export namespace LogLevel {
  export const Error: string = "error";
  export const Warn: string = "warn";
  export const Info: string = "info";
  export const Debug: string = "debug";
}

const HEAD = '{"jsonrpc":"2.0"';

/** Methods only the host (Cordon) may originate. */
const RESERVED_PREFIX = "_cordon/";
/** Refused reserved-method attempts logged one by one; after that only a final note. */
const MAX_RESERVED_WARNINGS = 20;

/**
 * Members scanned in the one pass over each received message: the envelope's params, the inner
 * message's params, and for `session/update` its update and content — so routing and the common
 * typed getters never walk the same bytes twice.
 */
const SCAN_PATH: string[] = ["params", "params", "update", "content"];

/**
 * The SDK's MCP engine behind `addMcpServer` (`McpHost` in mcp.ts overrides these). The proxy only
 * talks to this no-op base, so a proxy that serves no MCP server does not carry the engine's code.
 */
export class McpEngine {
  /** The successor advertised `mcpCapabilities.acp` in its `initialize` answer. */
  available: bool = false;
  /** A request from the client side is being forwarded to the successor under `ourId`. */
  forwarding(request: Request, ourId: i64): void {}
  /** The successor answered a request the proxy forwarded to it (before any hook sees it). */
  answered(method: string, ourId: i64, response: Response): void {}
  /** An `mcp/*` message from the agent side; false when it is not for this proxy's servers. */
  handle(method: string, request: Request | null, p: RawObject | null): bool {
    return false;
  }
  /** `$/cancel_request` for a request the proxy received; true when it was a tool call. */
  cancel(request: Request): bool {
    return false;
  }
}

/** A request the proxy sent and is waiting on. */
class Pending {
  constructor(
    public method: string,
    /** Where it went. */
    public to: Side,
    /** The request it forwards (null for the proxy's own). */
    public request: Request | null,
    public tag: string,
  ) {}
}

export class Proxy {
  /** Configuration from `_cordon/configure` (empty until it arrives, which is before initialize). */
  config: Config = new Config();

  private nextId: i64 = 1;
  /** Requests received and not yet answered, by side + the conductor's id. */
  private incoming: Map<string, Request> = new Map<string, Request>();
  /** Requests sent and not yet answered, by the id the proxy used. */
  private pending: Map<i64, Pending> = new Map<i64, Pending>();
  /** The MCP servers the proxy provides (null until `addMcpServer`). */
  _mcp: McpEngine | null = null;
  /** No message has arrived yet: only the first one may be the host's `_cordon/configure`. */
  private fresh: bool = true;
  /** Reserved-method attempts refused so far (for bounding the warnings). */
  private refusedReserved: i32 = 0;

  /** The proxy's name in the chain ("" until configured). */
  get name(): string {
    return this.config.name;
  }

  // ---------------------------------------------------------------- hooks

  /** `_cordon/configure` arrived; `this.config` is set. */
  onConfigure(config: Config): void {}

  /** `proxy/initialize`: forward it (as `initialize`) to the successor, optionally after editing params. */
  onInitialize(request: InitializeRequest): void {
    this.forward(request);
  }

  /** The successor answered `initialize`; edit `response.result`/`agentCapabilities` before it is relayed. */
  onInitializeResponse(response: InitializeResponse): void {
    this.relay(response);
  }

  /** `session/prompt` from the client side. Default: `onClientRequest`. */
  onPrompt(prompt: PromptRequest): void {
    this.onClientRequest(prompt);
  }

  /** Any other request from the client side (`session/new`, `session/load`, `_ext/…`). Default: forward. */
  onClientRequest(request: Request): void {
    this.forward(request);
  }

  /** A notification from the client side (`session/cancel`, `_ext/…`). Default: forward. */
  onClientNotification(notification: Notification): void {
    this.forward(notification);
  }

  /** `session/update` from the agent side. Default: `onAgentNotification`. */
  onSessionUpdate(update: SessionUpdate): void {
    this.onAgentNotification(update);
  }

  /** `session/request_permission` from the agent side. Default: `onAgentRequest`. */
  onPermissionRequest(request: PermissionRequest): void {
    this.onAgentRequest(request);
  }

  /** Any other request from the agent side (`fs/*`, `terminal/*`, `_ext/…`). Default: forward. */
  onAgentRequest(request: Request): void {
    this.forward(request);
  }

  /** Any other notification from the agent side. Default: forward. */
  onAgentNotification(notification: Notification): void {
    this.forward(notification);
  }

  /** The answer to a request the proxy forwarded (other than initialize). Default: relay it back. */
  onResponse(response: Response): void {
    this.relay(response);
  }

  /** The answer to one of the proxy's own requests (`requestClient`/`requestAgent`). */
  onReply(tag: string, response: Response): void {}

  /**
   * The conductor cancelled a request it sent the proxy. If the proxy had forwarded it, the SDK has
   * already cancelled the forwarded request (its answer is still relayed when it comes). If the
   * proxy holds it, the proxy must still answer it (a result, or `ErrorCode.RequestCancelled`).
   */
  onCancel(request: Request): void {}

  /**
   * An MCP `tools/call` for one of the proxy's tools (see `addMcpServer`). Answer it now or later
   * with `call.reply(text)` / `call.fail(message)`. Default: a tool error saying it has no handler.
   */
  onToolCall(call: ToolCall): void {
    call.fail(`tool ${call.tool} has no handler in proxy ${this.name}`);
  }

  /** The caller withdrew a tool call (`$/cancel_request`); the SDK has answered it already. */
  onToolCallCancelled(call: ToolCall): void {}

  // ---------------------------------------------------------------- helpers

  /**
   * Adds an MCP server the proxy provides to the agent (declare its tools with `.tool(...)`).
   * Sends nothing: call it in the constructor or `onConfigure`. From then on the SDK declares it in
   * every session setup request the proxy forwards and serves it; tool calls reach `onToolCall`.
   */
  addMcpServer(name: string, version: string = "0.1.0"): McpServer {
    let host: McpHost;
    if (this._mcp == null) {
      host = new McpHost(this);
      this._mcp = host;
    } else {
      host = changetype<McpHost>(this._mcp);
    }
    const server = new McpServer(name, version);
    host.servers.push(server);
    return server;
  }

  /** The MCP servers added with `addMcpServer`. */
  get mcpServers(): McpServer[] {
    const host = this._mcp;
    return host == null ? new Array<McpServer>(0) : changetype<McpHost>(host).servers;
  }

  /**
   * Whether the agent side advertised `mcpCapabilities.acp` (known after the `initialize` answer):
   * the proxy's servers are declared only then.
   */
  get mcpAvailable(): bool {
    const host = this._mcp;
    return host != null && host.available;
  }

  /** The ACP session a serverId of this proxy was declared in ("" when unknown). */
  sessionOfServer(serverId: string): string {
    const host = this._mcp;
    if (host == null) return "";
    const s = changetype<McpHost>(host).servedById(serverId);
    return s == null ? "" : s.sessionId;
  }

  /** The proxy's current server declarations in an ACP session (one per server per setup). */
  serversInSession(sessionId: string): ServedServer[] {
    const host = this._mcp;
    return host == null ? new Array<ServedServer>(0) : changetype<McpHost>(host).servedInSession(sessionId);
  }

  /**
   * Sends a message on to the other side: a client-side message to the successor (in a
   * `proxy/successor` envelope), an agent-side one to the predecessor. A request's answer comes
   * back through `onResponse` (or `onInitializeResponse`) and is relayed by default.
   */
  forward(message: Message): void {
    if (message.isRequest) {
      const request = changetype<Request>(message);
      if (request.answered || request.forwardedAs != 0) {
        this.log(LogLevel.Warn, `request ${request.id} (${request.method}) was already ${request.answered ? "answered" : "forwarded"}; not forwarding it again`);
        return;
      }
      const to = message.from == Side.Client ? Side.Agent : Side.Client;
      const id = this.nextId++;
      request.forwardedAs = id;
      this.pending.set(id, new Pending(request.method, to, request, ""));
      const host = this._mcp;
      if (host != null && to == Side.Agent) host.forwarding(request, id);
      send(this.envelope(to, id.toString(), message.method, message));
    } else {
      send(this.envelope(message.from == Side.Client ? Side.Agent : Side.Client, "", message.method, message));
    }
  }

  /** Passes an answer back to whoever sent the request it answers (with their id). */
  relay(response: Response): void {
    const request = response.request;
    if (request == null) return; // the proxy's own request: nobody to relay to
    if (request.answered) return;
    this.finish(request);
    const b = Builder.begin().str(HEAD).str(',"id":').str(request.id);
    if (response.isError) {
      b.str(',"error":').slice(response._src, response._eStart, response._eEnd);
    } else if (response.changed && response._result != null) {
      b.str(',"result":').str(JSON.stringify(response._result!));
    } else if (response._rStart != 0) {
      b.str(',"result":').slice(response._src, response._rStart, response._rEnd);
    } else {
      b.str(',"result":null');
    }
    send(b.str("}").build());
  }

  /**
   * Answers a request with a result: a `JSON.Obj`, any `@json` class, or `JSON.Raw.from(text)` for
   * JSON text. Use this for requests the proxy handles itself.
   */
  respond<T>(request: Request, result: T): void {
    if (request.answered) {
      this.log(LogLevel.Warn, `request ${request.id} (${request.method}) was already answered`);
      return;
    }
    this.finish(request);
    send(Builder.begin().str(HEAD).str(',"id":').str(request.id).str(',"result":').str(toJson<T>(result)).str("}").build());
  }

  /** Answers a request with a JSON-RPC error. `data` is optional JSON text. */
  respondError(request: Request, code: i32, message: string, data: string = ""): void {
    if (request.answered) {
      this.log(LogLevel.Warn, `request ${request.id} (${request.method}) was already answered`);
      return;
    }
    this.finish(request);
    send(errorResponse(request.id, code, message, data));
  }

  /** Sends a notification to the client side (e.g. a `session/update` the proxy makes up). */
  notifyClient<T>(method: string, params: T): void {
    send(this.build(Side.Client, "", method, toJson<T>(params)));
  }

  /** Sends a notification to the agent side. */
  notifyAgent<T>(method: string, params: T): void {
    send(this.build(Side.Agent, "", method, toJson<T>(params)));
  }

  /** Sends the proxy's own request to the client side; the answer arrives in `onReply(tag, …)`. Returns its id. */
  requestClient<T>(method: string, params: T, tag: string): i64 {
    return this.request(Side.Client, method, toJson<T>(params), tag);
  }

  /** Sends the proxy's own request to the agent side; the answer arrives in `onReply(tag, …)`. Returns its id. */
  requestAgent<T>(method: string, params: T, tag: string): i64 {
    return this.request(Side.Agent, method, toJson<T>(params), tag);
  }

  /** Asks the receiver of one of the proxy's own requests (by id) to cancel it. */
  cancelRequest(id: i64): void {
    if (!this.pending.has(id)) return;
    this.sendCancel(this.pending.get(id).to, id);
  }

  /** Sends a `_cordon/log` line (`error`, `warn`, `info`, `debug`); the conductor prints it with the proxy's name. */
  log(level: string, message: string): void {
    send(
      Builder.begin()
        .str(HEAD)
        .str(',"method":"_cordon/log","params":{"level":')
        .str(quote(level))
        .str(',"message":')
        .str(quote(message))
        .str("}}")
        .build(),
    );
  }

  /** Number of requests the proxy has sent and not had answered (forwarded and own). */
  get pendingCount(): i32 {
    return this.pending.size;
  }

  /** Number of requests received and not yet answered. */
  get openCount(): i32 {
    return this.incoming.size;
  }

  // ---------------------------------------------------------------- dispatch

  /** Entry point for every message from the conductor (installed by `register`). */
  receive(text: string): void {
    const first = this.fresh;
    this.fresh = false;
    const msg = RawObject.parse(text, SCAN_PATH);
    if (msg == null) {
      this.log(LogLevel.Error, "dropped a message that is not a JSON object");
      return;
    }
    const mi = msg.indexOf("method");
    const idi = msg.indexOf("id");
    const id = idi >= 0 ? slice(msg.valueStart(idi), msg.valueEnd(idi)) : "";
    if (mi < 0) {
      if (idi >= 0) this.onRawResponse(msg, id);
      else this.log(LogLevel.Warn, "dropped a message with neither method nor id");
      return;
    }
    if (msg.firstChar(mi) != 0x22) {
      if (idi >= 0) send(errorResponse(id, ErrorCode.InvalidRequest, "method is not a string", ""));
      return;
    }
    const method = decodeString(msg.valueStart(mi), msg.valueEnd(mi));
    const pi = msg.indexOf("params");

    if (method.startsWith(RESERVED_PREFIX)) {
      if (first && idi < 0 && method == "_cordon/configure") this.configure(msg);
      else this.refuseReserved(method, Side.Client, idi >= 0, id);
      return;
    }
    if (method == "proxy/successor" || method == "_proxy/successor") {
      this.fromSuccessor(msg, idi >= 0, id, pi);
      return;
    }
    if (idi < 0) {
      if (method == "$/cancel_request") {
        this.cancelled(Side.Client, msg, pi);
      } else {
        const n = new Notification();
        fill(n, method, Side.Client, msg, pi);
        this.onClientNotification(n);
      }
      return;
    }
    if (method == "proxy/initialize" || method == "_proxy/initialize" || method == "initialize") {
      const r = new InitializeRequest();
      this.open(r, method, Side.Client, msg, pi, id);
      r.method = "initialize"; // what it is forwarded as
      this.onInitialize(r);
    } else if (method == "session/prompt") {
      const r = new PromptRequest();
      this.open(r, method, Side.Client, msg, pi, id);
      this.onPrompt(r);
    } else {
      const r = new Request();
      this.open(r, method, Side.Client, msg, pi, id);
      this.onClientRequest(r);
    }
  }

  private fromSuccessor(msg: RawObject, isRequest: bool, id: string, pi: i32): void {
    const env = pi >= 0 ? msg.obj("params") : null;
    const mi = env == null ? -1 : env.indexOf("method");
    if (env == null || mi < 0 || env.firstChar(mi) != 0x22) {
      if (isRequest) send(errorResponse(id, ErrorCode.InvalidParams, "proxy/successor needs params {method, params}", ""));
      else this.log(LogLevel.Warn, "dropped a proxy/successor notification without an inner method");
      return;
    }
    const method = decodeString(env.valueStart(mi), env.valueEnd(mi));
    if (method.startsWith(RESERVED_PREFIX)) {
      this.refuseReserved(method, Side.Agent, isRequest, id);
      return;
    }
    const inner = env.indexOf("params");
    let meta = env.indexOf("_meta");
    if (meta < 0) meta = env.indexOf("meta"); // the Rust SDK's older spelling
    const envelopeMeta = meta >= 0 ? slice(env.valueStart(meta), env.valueEnd(meta)) : null;

    const host = this._mcp;
    const isMcp = host != null && (method == "mcp/message" || method == "mcp/connect" || method == "mcp/disconnect");
    if (!isRequest) {
      if (method == "$/cancel_request") {
        this.cancelled(Side.Agent, env, inner);
        return;
      }
      if (isMcp && host!.handle(method, null, env.objAt(inner))) return;
      const n: Notification = method == "session/update" ? new SessionUpdate() : new Notification();
      fill(n, method, Side.Agent, env, inner);
      n.envelopeMeta = envelopeMeta;
      if (method == "session/update") this.onSessionUpdate(changetype<SessionUpdate>(n));
      else this.onAgentNotification(n);
      return;
    }
    if (method == "session/request_permission") {
      const r = new PermissionRequest();
      this.open(r, method, Side.Agent, env, inner, id);
      r.envelopeMeta = envelopeMeta;
      this.onPermissionRequest(r);
    } else {
      const r = new Request();
      this.open(r, method, Side.Agent, env, inner, id);
      r.envelopeMeta = envelopeMeta;
      if (isMcp && host!.handle(method, r, env.objAt(inner))) return;
      if (method == "elicitation/create") this.scopeToPredecessor(r);
      this.onAgentRequest(r);
    }
  }

  /**
   * A request-scoped `elicitation/create` names, in `params.requestId`, the request it belongs to by
   * the id this proxy gave it when forwarding it; toward the predecessor it must name it by the id
   * the proxy received it under (ids are per hop, like `$/cancel_request`'s).
   */
  private scopeToPredecessor(r: Request): void {
    const n = getNumber(r.readParams(), "requestId");
    if (isNaN(n) || n != Math.floor(n)) return; // not one of this proxy's (numeric) ids
    const ours = <i64>n;
    if (!this.pending.has(ours)) return;
    const forwarded = this.pending.get(ours).request;
    if (forwarded == null) return;
    r.params.set<JSON.Raw>("requestId", JSON.Raw.from(forwarded.id));
  }

  private open(r: Request, method: string, from: Side, obj: RawObject, pi: i32, id: string): void {
    fill(r, method, from, obj, pi);
    r.id = id;
    this.incoming.set(key(from, id), r);
  }

  private finish(request: Request): void {
    request.answered = true;
    this.incoming.delete(key(request.from, request.id));
  }

  /**
   * A `_cordon/*` message the host did not send (a late `_cordon/configure`, or any other from
   * either side): never handed to a hook nor forwarded; a request is answered with an error. Logged
   * as a warning naming the attempt (the first {@link MAX_RESERVED_WARNINGS}, then one final note).
   */
  private refuseReserved(method: string, from: Side, isRequest: bool, id: string): void {
    const side = from == Side.Client ? "client" : "agent";
    const why = method == "_cordon/configure" ? "configuration is accepted only as the host's first message" : "the _cordon/ namespace is reserved for the host";
    const shown = method.length > 80 ? method.substring(0, 80) + "…" : method;
    const n = ++this.refusedReserved;
    if (n <= MAX_RESERVED_WARNINGS) {
      const what = isRequest ? `request ${shown} (id ${id.length > 40 ? id.substring(0, 40) + "…" : id})` : `notification ${shown}`;
      this.log(LogLevel.Warn, `ignored a forged ${what} from the ${side} side: ${why}`);
      if (n == MAX_RESERVED_WARNINGS) this.log(LogLevel.Warn, "further forged _cordon/ messages are ignored without a warning");
    }
    if (isRequest) send(errorResponse(id, ErrorCode.InvalidRequest, `refused ${shown}: ${why}`, ""));
  }

  private configure(msg: RawObject): void {
    const params = msg.obj("params");
    let name = "";
    let obj = new JSON.Obj();
    if (params != null) {
      const n = params.str("name");
      if (n != null) name = n;
      const ci = params.indexOf("config");
      if (ci >= 0 && params.firstChar(ci) == 0x7b) obj = JSON.parse<JSON.Obj>(params.text("config")!);
    }
    this.config = new Config(name, obj);
    this.onConfigure(this.config);
  }

  /** `$/cancel_request` from `from` for the request it sent under `requestId`. */
  private cancelled(from: Side, params: RawObject, pi: i32): void {
    if (pi < 0) return;
    const p = params.objAt(pi);
    if (p == null) return;
    const target = p.text("requestId");
    if (target == null) return;
    const k = key(from, target);
    if (!this.incoming.has(k)) return; // unknown or already answered: ignored
    const request = this.incoming.get(k);
    if (request.forwardedAs != 0 && !request.answered) {
      this.sendCancel(from == Side.Client ? Side.Agent : Side.Client, request.forwardedAs);
    }
    const host = this._mcp;
    if (host != null && host.cancel(request)) return;
    this.onCancel(request);
  }

  private sendCancel(to: Side, id: i64): void {
    send(this.build(to, "", "$/cancel_request", `{"requestId":${id.toString()}}`));
  }

  private onRawResponse(msg: RawObject, id: string): void {
    const ours = parseId(id);
    if (ours <= 0 || !this.pending.has(ours)) {
      this.log(LogLevel.Warn, `dropped a response to unknown request id ${id}`);
      return;
    }
    const p = this.pending.get(ours);
    this.pending.delete(ours);
    const request = p.request;
    const r: Response = request != null && request instanceof InitializeRequest ? new InitializeResponse() : new Response();
    r.id = ours;
    r.method = p.method;
    r.from = p.to;
    r.request = request;
    r.tag = p.tag;
    r._src = msg.src;
    const ei = msg.indexOf("error");
    if (ei >= 0) {
      r._eStart = msg.valueStart(ei);
      r._eEnd = msg.valueEnd(ei);
    } else {
      const ri = msg.indexOf("result");
      if (ri >= 0) {
        r._rStart = msg.valueStart(ri);
        r._rEnd = msg.valueEnd(ri);
      }
    }
    const host = this._mcp;
    if (host != null && request != null && p.to == Side.Agent) host.answered(p.method, ours, r);
    if (request == null) this.onReply(p.tag, r);
    else if (r instanceof InitializeResponse) this.onInitializeResponse(changetype<InitializeResponse>(r));
    else this.onResponse(r);
  }

  private request(to: Side, method: string, params: string, tag: string): i64 {
    const id = this.nextId++;
    this.pending.set(id, new Pending(method, to, null, tag));
    send(this.build(to, id.toString(), method, params));
    return id;
  }

  /** A request (`id` non-empty) or notification carrying a message's params, for side `to`. */
  private envelope(to: Side, id: string, method: string, message: Message): string {
    const b = Builder.begin().str(HEAD);
    if (id.length) b.str(',"id":').str(id);
    b.str(to == Side.Agent ? ',"method":"proxy/successor","params":{"method":' : ',"method":');
    if (message._mStart != 0 && method == message._method) b.slice(message._src, message._mStart, message._mEnd);
    else b.str(quote(method));
    if (message.changed && message._params != null) {
      b.str(',"params":').str(JSON.stringify(message._params!));
    } else if (message._edit != null) {
      // one raw edit: the received params with one range replaced
      b.str(',"params":')
        .slice(message._src, message._pStart, message._editStart)
        .str(message._edit!)
        .slice(message._src, message._editEnd, message._pEnd);
    } else if (message._pStart != 0) {
      b.str(',"params":').slice(message._src, message._pStart, message._pEnd);
    }
    if (to == Side.Agent) b.str("}");
    return b.str("}").build();
  }

  /** Like `envelope`, with params given as JSON text ("" for none). */
  private build(to: Side, id: string, method: string, params: string): string {
    const b = Builder.begin().str(HEAD);
    if (id.length) b.str(',"id":').str(id);
    if (to == Side.Agent) b.str(',"method":"proxy/successor","params":{"method":').str(quote(method));
    else b.str(',"method":').str(quote(method));
    if (params.length) b.str(',"params":').str(params);
    if (to == Side.Agent) b.str("}");
    return b.str("}").build();
  }
}

function key(from: Side, id: string): string {
  return (from == Side.Client ? "c" : "a") + id;
}

function fill(m: Message, method: string, from: Side, obj: RawObject, pi: i32): void {
  m.method = method;
  m.from = from;
  m._src = obj.src;
  const mi = obj.indexOf("method");
  if (mi >= 0) {
    m._mStart = obj.valueStart(mi);
    m._mEnd = obj.valueEnd(mi);
    m._method = method;
  }
  if (pi >= 0) {
    m._pStart = obj.valueStart(pi);
    m._pEnd = obj.valueEnd(pi);
    if (pi == obj.nestedIndex) m._view = obj.nested;
  }
}

/** The proxy's own numeric id from a response's raw id, or 0 when it is not one of ours. */
function parseId(raw: string): i64 {
  const n = raw.length;
  if (n == 0 || n > 18) return 0;
  let v: i64 = 0;
  for (let i = 0; i < n; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return 0;
    v = v * 10 + (c - 0x30);
  }
  return v;
}

function errorResponse(id: string, code: i32, message: string, data: string): string {
  const b = Builder.begin()
    .str(HEAD)
    .str(',"id":')
    .str(id.length ? id : "null")
    .str(',"error":{"code":')
    .str(code.toString())
    .str(',"message":')
    .str(quote(message));
  if (data.length) b.str(',"data":').str(data);
  return b.str("}}").build();
}

/** JSON text of a result or params value: a `JSON.Raw` as is, anything else through json-as. */
function toJson<T>(value: T): string {
  if (isString<T>()) {
    ERROR("pass JSON.Raw.from(text) for JSON text, or a JSON.Obj / @json object");
  }
  if (value instanceof JSON.Raw) return changetype<JSON.Raw>(value).data;
  return JSON.stringify<T>(value);
}

let registered: Proxy | null = null;

function dispatch(message: string): void {
  registered!.receive(message);
}

/** Makes `proxy` the one that receives every message. Call once, at top level. */
export function register(proxy: Proxy): void {
  registered = proxy;
  setReceiver(dispatch);
}
