// MCP servers served by a proxy over MCP-over-ACP: the proxy declares tools, resources and prompts,
// the SDK does the rest.
//
//   class Tools extends Proxy {
//     constructor() {
//       super();
//       this.addMcpServer("notes").tool("count", "Counts words", `{"type":"object","properties":{"text":{"type":"string"}}}`);
//     }
//     onToolCall(call: ToolCall): void {
//       call.reply(call.getString("text").split(" ").length.toString());
//     }
//   }
//
// What the SDK does for every server added with `Proxy.addMcpServer`:
// - **Declares it** in every session setup request the proxy forwards (`session/new`, `session/load`,
//   `session/resume`, `session/fork`): `{"type":"acp","name","serverId"}` appended to `mcpServers`,
//   with a fresh `serverId` per setup request, so every serverId belongs to exactly one ACP session
//   (the session id is learned from the setup request, or from the answer to `session/new` / `fork`).
//   Only when the successor's `initialize` answer advertised `agentCapabilities.mcpCapabilities.acp`
//   (Cordon's conductor does whenever it can bridge), otherwise the agent would refuse the session.
// - **Serves it** over the channel, to requests from the agent side, in both MCP-over-ACP forms:
//   the connection form (`mcp/connect {serverId}` → `{connectionId}`, `mcp/message {connectionId,
//   method, params?}` answered with the MCP result or an outer error, `mcp/disconnect
//   {connectionId}` → `{}`), and the connectionless form (`mcp/message {serverId, requestId, method,
//   params?}` answered `{result}` or `{error}`). MCP `initialize` (advertising exactly the kinds
//   the server has), `ping`, `tools/list`, `tools/call`, `resources/list`, `resources/read`,
//   `resources/templates/list`, `prompts/list` and `prompts/get` are served, every list one page
//   at a time (`server.pageSize`, `cursor` / `nextCursor`); other MCP methods (and the methods of a
//   kind the server does not have) get an MCP "method not found" error. MCP notifications from the
//   agent's client reach `onMcpNotification`. `mcp/*` traffic for servers the proxy does not own is
//   forwarded unchanged.
// - **Tool calls** reach `Proxy.onToolCall(call)` with the ACP session id, the server and the
//   arguments, once the arguments fit the tool's declared input schema (the subset schema.ts
//   checks; otherwise an MCP invalid-params error naming the argument); the proxy answers now or
//   later with `call.reply(text)` / `call.fail(message)` (an MCP tool error: `isError: true`, not a
//   protocol error). Reads reach `onResourceRead`, prompt gets `onMcpPromptGet`, both with the
//   session of the serverId they came through; both have defaults serving the declared texts.
// - **List changes**: `Proxy.notifyListChanged(server, kind)` sends
//   `notifications/<kind>/list_changed` over every open connection of the server (the
//   connectionless form has no way to carry it: there `listChanged` is advertised false).
// - **Requests to the agent's MCP client** (mcp-client.ts): over a connection, `McpClient`
//   (`call.client`, `notification.client`, `Proxy.mcpClients`) sends `mcp/message {connectionId,
//   method, params}` requests toward the agent, once the client declared the capability the method
//   needs; the answer (the inner MCP result, or an outer error) reaches `onMcpClientReply`.
import { JSON } from "json-as";
import { ErrorCode, LogLevel, McpErrorCode } from "./codes";
import { Hooks } from "./hooks";
import { Builder, RawObject, getArr, getBool, getObj, getString, quote, slice } from "./json";
import { InitializeResponse, Request, Response, Side } from "./messages";
import { page } from "./catalog";
import { McpClient, McpClientReply } from "./mcp-client";
import { McpNotification, PromptGet, ResourceRead } from "./resources";
import { McpCall, McpEngine, McpServer, ServedServer, ToolCall, isSessionSetup } from "./tools";

/** MCP protocol versions the SDK's servers answer `initialize` with when the client asks for them. */
const KNOWN_VERSIONS: string[] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];
const LATEST_VERSION = "2025-11-25";

/** Every tag of a server's request to the MCP client starts so (the author's tag is kept beside it). */
const CLIENT_TAG = "\u0000mcp-client:";

/** A server's request to the agent's MCP client, waiting for its answer. */
class ClientAsk {
  constructor(public tag: string, public method: string, public client: McpClient) {}
}

/** FNV-1a over a string's code units, mixed into `h`. */
function fnv(h: u32, s: string): u32 {
  for (let i = 0, n = s.length; i < n; i++) {
    h ^= <u32>s.charCodeAt(i);
    h *= 16777619;
  }
  return h;
}

function hex8(v: u32): string {
  let s = v.toString(16);
  while (s.length < 8) s = "0" + s;
  return s;
}

/** The SDK's MCP engine inside a Proxy (created by the first `addMcpServer`). */
export class McpHost extends McpEngine {
  servers: McpServer[] = new Array<McpServer>(0);
  private warned: bool = false;
  /** Prefix of every serverId (and connectionId) this instance makes; "" until the first declaration. */
  private prefix: string = "";
  private counter: i32 = 0;
  private nextConnection: i32 = 0;
  private served: Map<string, ServedServer> = new Map<string, ServedServer>();
  private connections: Map<string, McpClient> = new Map<string, McpClient>();
  /** Forwarded setup requests (by the proxy's id) → the declarations they carry. */
  private setups: Map<i64, ServedServer[]> = new Map<i64, ServedServer[]>();
  /** Tool calls, reads and prompt gets in progress, by the `mcp/message` request's key. */
  private calls: Map<string, McpCall> = new Map<string, McpCall>();
  /** Connectionless requests in progress: "serverId\nrequestId" (unique while active, as the schema says). */
  private activeIds: Set<string> = new Set<string>();
  /** The active "serverId\nrequestId" of each such request, by the request's key. */
  private activeOf: Map<string, string> = new Map<string, string>();
  /** Servers' requests to the agent's MCP client, by their number in the tag. */
  private asks: Map<i32, ClientAsk> = new Map<i32, ClientAsk>();
  private nextAsk: i32 = 0;

  constructor(public proxy: Hooks) {
    super();
  }

  /** The declaration (serverId → session) behind a serverId, or null. */
  servedById(serverId: string): ServedServer | null {
    return this.served.has(serverId) ? this.served.get(serverId) : null;
  }

  /** Every current declaration of the proxy's servers in one ACP session. */
  servedInSession(sessionId: string): ServedServer[] {
    const out = new Array<ServedServer>(0);
    const all = this.served.values();
    for (let i = 0; i < all.length; i++) if (all[i].sessionId == sessionId) out.push(all[i]);
    return out;
  }

  get connectionCount(): i32 {
    return this.connections.size;
  }

  // ---------------------------------------------------------------- declaring

  forwarding(request: Request, ourId: i64): void {
    if (isSessionSetup(request.method)) this.declareIn(request, ourId);
  }

  answered(method: string, ourId: i64, r: Response): void {
    if (r instanceof InitializeResponse) {
      if (r.isError) return;
      const caps = getObj(r.readResult(), "agentCapabilities");
      let acp = false;
      if (caps != null) {
        const mcp = getObj(caps, "mcpCapabilities");
        if (mcp != null) acp = getBool(mcp, "acp", false);
      }
      this.available = acp;
    } else if (isSessionSetup(method)) {
      let sessionId = "";
      if (!r.isError) {
        const s = getString(r.readResult(), "sessionId");
        if (s != null) sessionId = s;
      }
      this.setupAnswered(ourId, r.isError, sessionId);
    } else if ((method == "session/close" || method == "session/delete") && !r.isError) {
      this.sessionEnded(r.request!.sessionId);
    }
  }

  /** Adds the declarations to a session setup request about to be forwarded under `ourId`. */
  private declareIn(request: Request, ourId: i64): void {
    if (this.servers.length == 0) return;
    if (!this.available) {
      if (!this.warned) {
        this.warned = true;
        this.proxy.log(
          LogLevel.Warn,
          `the agent side does not advertise mcpCapabilities.acp; MCP server ${this.servers[0].name} is not declared`,
        );
      }
      return;
    }
    if (this.prefix.length == 0) {
      // Unique on the connection: the proxy's name, and a hash of the first setup request (whose id
      // is the conductor's, never reused on a hop, so a restarted instance gets another prefix).
      const name = this.proxy.name.length ? this.proxy.name : "proxy";
      this.prefix = "mcp:" + name + ":" + hex8(fnv(fnv(2166136261, name), request._src)) + ":";
    }
    const known = request.method == "session/load" || request.method == "session/resume" ? request.sessionId : "";
    const list = new Array<ServedServer>(0);
    const b = new Builder();
    for (let i = 0; i < this.servers.length; i++) {
      const server = this.servers[i];
      const id = this.prefix + server.name + "/" + (++this.counter).toString();
      const s = new ServedServer(id, server, known);
      this.served.set(id, s);
      list.push(s);
      if (i > 0) b.str(",");
      b.str('{"type":"acp","name":').str(quote(server.name)).str(',"serverId":').str(quote(id)).str("}");
    }
    this.setups.set(ourId, list);
    inject(request, b.build());
  }

  /** The successor answered a setup request the proxy forwarded. */
  private setupAnswered(ourId: i64, isError: bool, resultSessionId: string): void {
    if (!this.setups.has(ourId)) return;
    const list = this.setups.get(ourId);
    this.setups.delete(ourId);
    for (let i = 0; i < list.length; i++) {
      const s = list[i];
      if (isError) this.drop(s.serverId);
      else if (resultSessionId.length) s.sessionId = resultSessionId;
    }
  }

  /** A session ended (`session/close`, `session/delete` answered): its declarations are gone. */
  private sessionEnded(sessionId: string): void {
    const list = this.servedInSession(sessionId);
    for (let i = 0; i < list.length; i++) this.drop(list[i].serverId);
  }

  private drop(serverId: string): void {
    this.served.delete(serverId);
    const conns = this.connections.values();
    for (let i = 0; i < conns.length; i++) {
      if (conns[i].served.serverId != serverId) continue;
      conns[i].closed = true;
      this.connections.delete(conns[i].connectionId);
    }
  }

  private owns(id: string): bool {
    return this.prefix.length > 0 && id.startsWith(this.prefix);
  }

  // ---------------------------------------------------------------- serving

  /**
   * An `mcp/connect`, `mcp/message` or `mcp/disconnect` from the agent side (`request` null for a
   * notification). Returns false when it is for a server this proxy does not own (then it goes on).
   */
  handle(method: string, request: Request | null, p: RawObject | null): bool {
    if (p == null) return false;
    const connectionId = p.str("connectionId");
    const serverId = p.str("serverId");
    if (method == "mcp/connect") {
      if (serverId == null || !this.owns(serverId)) return false;
      if (request == null) return true; // a connect must be a request: nothing to answer
      if (!this.served.has(serverId)) {
        this.proxy.respondError(request, McpErrorCode.ServerUnavailable, `unknown MCP server ${serverId}`);
        return true;
      }
      const id = serverId + "#" + (++this.nextConnection).toString();
      this.connections.set(id, new McpClient(id, this.served.get(serverId), this));
      this.proxy.respond(request, JSON.Raw.from('{"connectionId":' + quote(id) + "}"));
      return true;
    }
    if (method == "mcp/disconnect") {
      if (connectionId == null || !this.owns(connectionId)) return false;
      const open = this.connections.has(connectionId);
      if (open) this.connections.get(connectionId).closed = true;
      this.connections.delete(connectionId);
      if (request != null) {
        if (open) this.proxy.respond(request, JSON.Raw.from("{}"));
        else this.proxy.respondError(request, ErrorCode.InvalidParams, `unknown MCP connection ${connectionId}`);
      }
      return true;
    }
    if (method != "mcp/message") return false;
    if (connectionId != null) {
      if (!this.owns(connectionId)) return false;
      if (!this.connections.has(connectionId)) {
        if (request != null) this.proxy.respondError(request, ErrorCode.InvalidParams, `unknown MCP connection ${connectionId}`);
        else this.proxy.log(LogLevel.Warn, `dropped an mcp/message notification for unknown connection ${connectionId}`);
        return true;
      }
      const conn = this.connections.get(connectionId);
      this.dispatch(request, conn.served, conn, p);
      return true;
    }
    if (serverId != null) {
      if (!this.owns(serverId)) return false;
      if (!this.served.has(serverId)) {
        if (request != null) this.proxy.respondError(request, McpErrorCode.ServerUnavailable, `unknown MCP server ${serverId}`);
        return true;
      }
      this.dispatch(request, this.served.get(serverId), null, p);
      return true;
    }
    return false;
  }

  /** One MCP message for a served server: `conn` null in the connectionless form. */
  private dispatch(request: Request | null, served: ServedServer, conn: McpClient | null, p: RawObject): void {
    const connectionless = conn == null;
    const method = p.str("method");
    if (method == null) {
      if (request != null) {
        this.proxy.respondError(request, ErrorCode.InvalidParams, "mcp/message needs params {" + (connectionless ? "serverId, requestId" : "connectionId") + ", method, params?}");
      } else {
        this.proxy.log(LogLevel.Warn, "dropped an mcp/message notification without a method");
      }
      return;
    }
    if (request != null && connectionless) {
      // The schema's McpRequestId: a string, unique among the server's active requests.
      const ri = p.indexOf("requestId");
      if (ri < 0 || p.firstChar(ri) != 0x22) {
        this.proxy.respondError(request, ErrorCode.InvalidParams, "mcp/message needs a string requestId");
        return;
      }
      const active = served.serverId + "\n" + p.str("requestId")!;
      if (this.activeIds.has(active)) {
        this.proxy.respondError(request, ErrorCode.InvalidParams, "duplicate active MCP request ID");
        return;
      }
      this.activeIds.add(active);
      this.activeOf.set(callKey(request), active);
    }
    if (request == null) {
      // MCP notifications from the client: `notifications/initialized`, `notifications/cancelled`, …
      if (method == "notifications/initialized" && conn != null) conn.initialized = true;
      const ni = p.indexOf("params");
      const paramsJson = ni >= 0 ? slice(p.valueStart(ni), p.valueEnd(ni)) : "";
      const n = new McpNotification(served, conn != null ? conn.connectionId : "", method, paramsJson);
      n.client = conn;
      this.proxy.onMcpNotification(n);
      return;
    }
    const pi = p.indexOf("params");
    let ip: RawObject | null = null;
    if (pi >= 0) {
      const c = p.firstChar(pi);
      if (c == 0x7b) ip = p.objAt(pi);
      else if (c != 0x6e) {
        if (connectionless) {
          this.release(request);
          this.proxy.respondError(request, ErrorCode.InvalidParams, "mcp/message params must be an object or null");
        } else this.answer(request, connectionless, "", McpErrorCode.InvalidParams, "MCP params must be an object");
        return;
      }
    }
    const server = served.server;
    if (method == "initialize") {
      if (conn != null && ip != null) {
        const ci = ip.indexOf("capabilities");
        if (ci >= 0 && ip.firstChar(ci) == 0x7b) conn.capabilitiesJson = slice(ip.valueStart(ci), ip.valueEnd(ci));
      }
      let version = LATEST_VERSION;
      const asked: string | null = ip != null ? ip.str("protocolVersion") : null;
      if (asked != null && KNOWN_VERSIONS.includes(asked)) version = asked;
      const b = new Builder()
        .str('{"protocolVersion":')
        .str(quote(version))
        .str(',"capabilities":')
        .str(capabilities(server, !connectionless))
        .str(',"serverInfo":{"name":')
        .str(quote(server.name))
        .str(',"version":')
        .str(quote(server.version))
        .str("}");
      if (server.instructions.length) b.str(',"instructions":').str(quote(server.instructions));
      this.answer(request, connectionless, b.str("}").build(), 0, "");
    } else if (method == "ping") {
      this.answer(request, connectionless, "{}", 0, "");
    } else if (method == "tools/list" && server.tools.length > 0) {
      const items = new Array<string>(server.tools.length);
      for (let i = 0; i < server.tools.length; i++) items[i] = server.tools[i].toJson();
      this.listPage(request, connectionless, server, ip, "tools", items);
    } else if (method == "tools/call" && server.tools.length > 0) {
      this.toolCall(request, served, conn, ip);
    } else if (method == "resources/list" && server.servesResources) {
      const list = this.proxy.resourcesFor(server, served.sessionId);
      const items = new Array<string>(list.length);
      for (let i = 0; i < list.length; i++) items[i] = list[i].toJson();
      this.listPage(request, connectionless, server, ip, "resources", items);
    } else if (method == "resources/templates/list" && server.servesResources) {
      const items = new Array<string>(server.templates.length);
      for (let i = 0; i < server.templates.length; i++) items[i] = server.templates[i].toJson();
      this.listPage(request, connectionless, server, ip, "resourceTemplates", items);
    } else if (method == "resources/read" && server.servesResources) {
      const uri: string | null = ip != null ? ip.str("uri") : null;
      if (uri == null) {
        this.answer(request, connectionless, "", McpErrorCode.InvalidParams, "resources/read needs params {uri}");
        return;
      }
      const read = new ResourceRead(this, request, connectionless, served, uri);
      this.track(read, conn);
      this.proxy.onResourceRead(read);
    } else if (method == "prompts/list" && server.prompts.length > 0) {
      const items = new Array<string>(server.prompts.length);
      for (let i = 0; i < server.prompts.length; i++) items[i] = server.prompts[i].toJson();
      this.listPage(request, connectionless, server, ip, "prompts", items);
    } else if (method == "prompts/get" && server.prompts.length > 0) {
      this.promptGet(request, served, conn, ip);
    } else {
      this.answer(request, connectionless, "", McpErrorCode.MethodNotFound, `Method not found: ${method}`);
    }
  }

  /** One page of a list, from `params.cursor` (a cursor the SDK did not make: invalid params). */
  private listPage(request: Request, connectionless: bool, server: McpServer, ip: RawObject | null, key: string, items: string[]): void {
    let cursor: string | null = null;
    if (ip != null) {
      const ci = ip.indexOf("cursor");
      if (ci >= 0 && ip.firstChar(ci) != 0x6e) {
        cursor = ip.str("cursor");
        if (cursor == null) {
          this.answer(request, connectionless, "", McpErrorCode.InvalidParams, "cursor must be a string");
          return;
        }
      }
    }
    const text = page(key, items, cursor, server.pageSize);
    if (text.length == 0) this.answer(request, connectionless, "", McpErrorCode.InvalidParams, `invalid cursor ${quote(cursor!)}`);
    else this.answer(request, connectionless, text, 0, "");
  }

  /** The inner params' `arguments`: an empty object when absent or null, null when it is not an object. */
  private argumentsOf(ip: RawObject | null): JSON.Obj | null {
    if (ip == null) return new JSON.Obj();
    const ai = ip.indexOf("arguments");
    if (ai < 0) return new JSON.Obj();
    const c = ip.firstChar(ai);
    if (c == 0x7b) return JSON.parse<JSON.Obj>(slice(ip.valueStart(ai), ip.valueEnd(ai)));
    return c == 0x6e ? new JSON.Obj() : null;
  }

  private toolCall(request: Request, served: ServedServer, conn: McpClient | null, ip: RawObject | null): void {
    const connectionless = conn == null;
    const name: string | null = ip != null ? ip.str("name") : null;
    if (name == null) {
      this.answer(request, connectionless, "", McpErrorCode.InvalidParams, "tools/call needs params {name, arguments?}");
      return;
    }
    const tool = served.server.find(name);
    if (tool == null) {
      this.answer(request, connectionless, "", McpErrorCode.InvalidParams, `Unknown tool: ${name}`);
      return;
    }
    const parsed = this.argumentsOf(ip);
    if (parsed == null) {
      this.answer(request, connectionless, "", McpErrorCode.InvalidParams, "tools/call arguments must be an object");
      return;
    }
    const args = parsed!;
    const why = tool.checkArguments(args);
    if (why.length) {
      this.answer(request, connectionless, "", McpErrorCode.InvalidParams, `Invalid arguments for tool ${name}: ${why}`);
      return;
    }
    const call = new ToolCall(this, request, connectionless, served, name, args);
    this.track(call, conn);
    this.proxy.onToolCall(call);
  }

  private promptGet(request: Request, served: ServedServer, conn: McpClient | null, ip: RawObject | null): void {
    const connectionless = conn == null;
    const name: string | null = ip != null ? ip.str("name") : null;
    if (name == null) {
      this.answer(request, connectionless, "", McpErrorCode.InvalidParams, "prompts/get needs params {name, arguments?}");
      return;
    }
    const prompt = served.server.findPrompt(name);
    if (prompt == null) {
      this.answer(request, connectionless, "", McpErrorCode.InvalidParams, `Unknown prompt: ${name}`);
      return;
    }
    const parsed = this.argumentsOf(ip);
    if (parsed == null) {
      this.answer(request, connectionless, "", McpErrorCode.InvalidParams, "prompts/get arguments must be an object");
      return;
    }
    const args = parsed!;
    for (let i = 0; i < prompt.arguments.length; i++) {
      const a = prompt.arguments[i];
      if (a.required && !args.has(a.name)) {
        this.answer(request, connectionless, "", McpErrorCode.InvalidParams, `Invalid arguments for prompt ${name}: missing required argument ${quote(a.name)}`);
        return;
      }
    }
    const get = new PromptGet(this, request, connectionless, served, name, args);
    this.track(get, conn);
    this.proxy.onMcpPromptGet(get);
  }

  /** Keeps a request the proxy answers (for `$/cancel_request`). */
  private track(call: McpCall, conn: McpClient | null): void {
    if (conn != null) {
      call.connectionId = conn.connectionId;
      call.client = conn;
    }
    if (!call.answered) this.calls.set(callKey(call._request), call);
  }

  /**
   * Tells the agent's MCP clients connected to `server` that one of its lists changed
   * (`notifications/<kind>/list_changed`, kind `tools`, `resources` or `prompts`), in every ACP
   * session or in `sessionId` only. Only the connection form can carry it; returns how many
   * connections were told.
   */
  notifyListChanged(server: McpServer, kind: string, sessionId: string): i32 {
    const conns = this.clients(server, sessionId);
    for (let i = 0; i < conns.length; i++) this.notifyClient(conns[i], "notifications/" + kind + "/list_changed", "");
    return conns.length;
  }

  /** The open connections of the agent's MCP clients to `server` (in `sessionId` only, unless ""). */
  clients(server: McpServer, sessionId: string): McpClient[] {
    const conns = this.connections.values();
    const out = new Array<McpClient>(0);
    for (let i = 0; i < conns.length; i++) {
      const c = conns[i];
      if (c.served.server !== server) continue;
      if (sessionId.length && c.served.sessionId != sessionId) continue;
      out.push(c);
    }
    return out;
  }

  askClient(client: McpClient, method: string, paramsJson: string, tag: string): string {
    if (!this.connections.has(client.connectionId)) return `MCP connection ${client.connectionId} is closed`;
    const n = ++this.nextAsk;
    this.asks.set(n, new ClientAsk(tag, method, client));
    this.proxy.requestAgent("mcp/message", JSON.Raw.from(clientMessage(client, method, paramsJson)), CLIENT_TAG + n.toString());
    return "";
  }

  notifyClient(client: McpClient, method: string, paramsJson: string): void {
    this.proxy.notifyAgent("mcp/message", JSON.Raw.from(clientMessage(client, method, paramsJson)));
  }

  reply(tag: string, response: Response): bool {
    if (!tag.startsWith(CLIENT_TAG)) return false;
    const n = I32.parseInt(tag.substring(CLIENT_TAG.length));
    if (!this.asks.has(n)) return true;
    const ask = this.asks.get(n);
    this.asks.delete(n);
    this.proxy.onMcpClientReply(new McpClientReply(ask.tag, ask.method, ask.client, response));
    return true;
  }

  /**
   * Sends the answer to an `mcp/message` request: in the connection form the MCP result is the
   * result and an MCP error the outer error; in the connectionless form both travel in a successful
   * answer, `{"result":…}` or `{"error":…}`.
   */
  answer(request: Request, connectionless: bool, resultJson: string, code: i32, message: string): void {
    if (request.answered) return;
    this.release(request);
    if (resultJson.length) {
      this.proxy.respond(request, JSON.Raw.from(connectionless ? '{"result":' + resultJson + "}" : resultJson));
    } else if (connectionless) {
      this.proxy.respond(request, JSON.Raw.from('{"error":{"code":' + code.toString() + ',"message":' + quote(message) + "}}"));
    } else {
      this.proxy.respondError(request, code, message);
    }
  }

  warn(message: string): void {
    this.proxy.log(LogLevel.Warn, message);
  }

  /** A tool call was answered. */
  forget(request: Request): void {
    this.calls.delete(callKey(request));
    this.release(request);
  }

  /** A connectionless request is over: its requestId may be used again. */
  private release(request: Request): void {
    const k = callKey(request);
    if (!this.activeOf.has(k)) return;
    this.activeIds.delete(this.activeOf.get(k));
    this.activeOf.delete(k);
  }

  /** `$/cancel_request` for a request the proxy received: true when it was an MCP request it holds (now answered). */
  cancel(request: Request): bool {
    const k = callKey(request);
    if (!this.calls.has(k)) return false;
    const call = this.calls.get(k);
    this.calls.delete(k);
    this.release(request);
    call._cancelled = true;
    call._done = true;
    this.proxy.respondError(request, ErrorCode.RequestCancelled, "Request cancelled");
    if (call instanceof ToolCall) this.proxy.onToolCallCancelled(changetype<ToolCall>(call));
    return true;
  }

  /** Tool calls waiting for an answer. */
  get openCalls(): i32 {
    return this.calls.size;
  }
}

/** `mcp/message {connectionId, method, params?}` toward the agent's MCP client. */
function clientMessage(client: McpClient, method: string, paramsJson: string): string {
  const b = new Builder().str('{"connectionId":').str(quote(client.connectionId)).str(',"method":').str(quote(method));
  if (paramsJson.length) b.str(',"params":').str(paramsJson);
  return b.str("}").build();
}

function callKey(request: Request): string {
  return (request.from == Side.Client ? "c" : "a") + request.id;
}

/**
 * The `capabilities` of a server's `initialize` answer: exactly the kinds it serves. `listChanged`
 * is true only over a connection, the one form that can carry `notifications/<kind>/list_changed`.
 */
function capabilities(server: McpServer, connection: bool): string {
  const lc = connection ? '{"listChanged":true}' : '{"listChanged":false}';
  const parts = new Array<string>(0);
  if (server.tools.length) parts.push('"tools":' + lc);
  if (server.servesResources) parts.push('"resources":' + lc);
  if (server.prompts.length) parts.push('"prompts":' + lc);
  return "{" + parts.join(",") + "}";
}

/** Appends declarations (JSON text of objects, comma-separated) to a request's `mcpServers`. */
function inject(request: Request, decls: string): void {
  const v = request._rawOk ? request._rawView() : null;
  if (v != null) {
    const i = v.indexOf("mcpServers");
    if (i >= 0 && v.firstChar(i) == 0x5b) {
      const close = v.valueEnd(i) - 2;
      const empty = load<u16>(v.innerStart(i)) == 0x5d;
      if (request._tryRawEdit(close, close, empty ? decls : "," + decls)) return;
    } else if (i < 0) {
      const at = request._pStart + 2; // just inside params' `{`
      const member = '"mcpServers":[' + decls + "]";
      if (request._tryRawEdit(at, at, v.count == 0 ? member : member + ",")) return;
    }
  }
  const params = request.params;
  let arr = getArr(params, "mcpServers");
  if (arr == null) {
    arr = new JSON.Arr();
    params.set<JSON.Arr>("mcpServers", arr);
  }
  const parsed = JSON.parse<JSON.Arr>("[" + decls + "]");
  for (let i = 0, n = parsed.length; i < n; i++) arr.push<JSON.Obj>(parsed.getAs<JSON.Obj>(i));
}
