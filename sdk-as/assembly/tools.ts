// MCP data types a proxy sees (`McpServer`, `Tool`, `McpCall` and its `ToolCall`; resources and
// prompts are in catalog.ts and resources.ts) and the engine interface the
// dispatcher talks to (`McpEngine`, a no-op base; mcp.ts's `McpHost` is the real engine, compiled
// only into proxies that call `addMcpServer`).
import { JSON } from "json-as";
import { Builder, RawObject, getBool, getNumber, getObj, getString, getStrings, quote } from "./json";
import { McpPrompt, Resource, ResourceTemplate } from "./catalog";
import { McpClient } from "./mcp-client";
import { Request, Response } from "./messages";
import { ArgSchema } from "./schema";

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
  /** Sends the answer to a tool call's `mcp/message` request. */
  answer(request: Request, connectionless: bool, resultJson: string, code: i32, message: string): void {}
  /** A tool call was answered. */
  forget(request: Request): void {}
  /** A warning in the proxy's log. */
  warn(message: string): void {}
  /** Sends an MCP request to the agent's MCP client over `client`'s connection; "" when sent, else why not. */
  askClient(client: McpClient, method: string, paramsJson: string, tag: string): string {
    return "the proxy serves no MCP server";
  }
  /** Sends an MCP notification to the agent's MCP client over `client`'s connection. */
  notifyClient(client: McpClient, method: string, paramsJson: string): void {}
  /** The answer to one of the proxy's own requests: true when it was a server's request to the MCP client. */
  reply(tag: string, response: Response): bool {
    return false;
  }
}

/** `{"type":"object"}`: a tool without arguments. */
export const NO_ARGUMENTS = '{"type":"object","properties":{}}';

/** Session setup requests that get the proxy's server declarations. */
export function isSessionSetup(method: string): bool {
  return method == "session/new" || method == "session/load" || method == "session/resume" || method == "session/fork";
}

/** One MCP tool: its name, description and JSON Schema for its arguments. */
export class Tool {
  constructor(
    public name: string,
    public description: string,
    /** JSON Schema text of the `arguments` object. */
    public inputSchema: string = NO_ARGUMENTS,
    /** Optional display name. */
    public title: string = "",
  ) {}

  private _schema: ArgSchema | null = null;

  /** "" when `args` fit the declared input schema's checked subset (schema.ts), else why not. */
  checkArguments(args: JSON.Obj): string {
    let s = this._schema;
    if (s == null) {
      s = ArgSchema.compile(this.inputSchema);
      this._schema = s;
    }
    return s.check(args);
  }

  toJson(): string {
    const b = new Builder().str('{"name":').str(quote(this.name));
    if (this.title.length) b.str(',"title":').str(quote(this.title));
    return b.str(',"description":').str(quote(this.description)).str(',"inputSchema":').str(this.inputSchema).str("}").build();
  }
}

/**
 * An MCP server the proxy provides: a name (what the agent sees), its tools, resources, resource
 * templates and prompts. `initialize` advertises exactly the kinds it has (`resources` also when
 * `dynamicResources` is set: the proxy lists them per session in `resourcesFor`).
 */
export class McpServer {
  tools: Tool[] = new Array<Tool>(0);
  resources: Resource[] = new Array<Resource>(0);
  templates: ResourceTemplate[] = new Array<ResourceTemplate>(0);
  prompts: McpPrompt[] = new Array<McpPrompt>(0);
  /** The server serves resources even while `resources` is empty (listed per session by the proxy). */
  dynamicResources: bool = false;
  /** Items per page of every list (`tools/list`, `resources/list`, …); 0: everything on one page. */
  pageSize: i32 = 100;
  /** MCP `instructions` returned by `initialize` ("" for none). */
  instructions: string = "";

  constructor(
    /** The name in the `mcpServers` declaration (the agent shows and addresses the server by it). */
    public name: string,
    public version: string = "0.1.0",
  ) {}

  /** Declares a tool (chainable). `inputSchema` is JSON Schema text for its arguments object. */
  tool(name: string, description: string, inputSchema: string = NO_ARGUMENTS): McpServer {
    this.tools.push(new Tool(name, description, inputSchema));
    return this;
  }

  /** Declares a resource (chainable); with `text`, `resources/read` answers it without the proxy. */
  resource(uri: string, name: string, description: string = "", mimeType: string = "text/plain", text: string = ""): McpServer {
    this.resources.push(new Resource(uri, name, description, mimeType, text));
    return this;
  }

  /** Declares a resource template (chainable); reads of its URIs reach `onResourceRead`. */
  resourceTemplate(uriTemplate: string, name: string, description: string = "", mimeType: string = ""): McpServer {
    this.templates.push(new ResourceTemplate(uriTemplate, name, description, mimeType));
    return this;
  }

  /** Declares a prompt and returns it (add arguments with `.argument(...)`); with `text`, `prompts/get` answers it. */
  prompt(name: string, description: string = "", text: string = ""): McpPrompt {
    const p = new McpPrompt(name, description, text);
    this.prompts.push(p);
    return p;
  }

  /** The prompt with that name, or null. */
  findPrompt(name: string): McpPrompt | null {
    for (let i = 0; i < this.prompts.length; i++) if (this.prompts[i].name == name) return this.prompts[i];
    return null;
  }

  get servesResources(): bool {
    return this.dynamicResources || this.resources.length > 0 || this.templates.length > 0;
  }

  /** The tool with that name, or null. */
  find(name: string): Tool | null {
    for (let i = 0; i < this.tools.length; i++) if (this.tools[i].name == name) return this.tools[i];
    return null;
  }
}

/** One declaration of a server: a serverId, in one ACP session. */
export class ServedServer {
  constructor(
    public serverId: string,
    public server: McpServer,
    /** The ACP session ("" until the answer to `session/new` / `session/fork` names it). */
    public sessionId: string,
  ) {}
}

/**
 * One MCP request a proxy answers itself (a tool call, a resource read, a prompt get): which server,
 * in which ACP session, through which connection. Answer it exactly once — now or later (keep the
 * object). If it is cancelled first, `cancelled` is true and answers are dropped.
 */
export class McpCall {
  server: McpServer;
  serverId: string = "";
  /** The ACP session the request belongs to ("" only if the agent asks before `session/new` was answered). */
  sessionId: string = "";
  /** The connection it came through ("" in the connectionless form). */
  connectionId: string = "";
  /**
   * The agent's MCP client on that connection, to send requests of its own (`roots/list`, …) while
   * answering this one; null in the connectionless form, which cannot carry them.
   */
  client: McpClient | null = null;

  _request: Request;
  _connectionless: bool;
  _host: McpEngine;
  _done: bool = false;
  _cancelled: bool = false;

  constructor(host: McpEngine, request: Request, connectionless: bool, served: ServedServer) {
    this._host = host;
    this._request = request;
    this._connectionless = connectionless;
    this.server = served.server;
    this.serverId = served.serverId;
    this.sessionId = served.sessionId;
  }

  /** Whether an answer was sent (or the request was cancelled). */
  get answered(): bool {
    return this._done;
  }

  /** Whether the caller withdrew the request (`$/cancel_request`); answers are then dropped. */
  get cancelled(): bool {
    return this._cancelled;
  }

  /** Answers with a whole MCP result given as JSON text. */
  replyResult(resultJson: string): void {
    if (this.finish()) this._host.answer(this._request, this._connectionless, resultJson, 0, "");
  }

  /** Answers with an MCP protocol error. */
  error(code: i32, message: string): void {
    if (this.finish()) this._host.answer(this._request, this._connectionless, "", code, message);
  }

  /** What the request is, for the warning about a second answer. */
  describe(): string {
    return "MCP request";
  }

  private finish(): bool {
    if (this._done) {
      if (!this._cancelled) this._host.warn(`${this.describe()} was already answered`);
      return false;
    }
    this._done = true;
    this._host.forget(this._request);
    return true;
  }
}

/**
 * One `tools/call`: which tool, of which server, in which ACP session, with which arguments (checked
 * against the tool's declared input schema before it got here, see schema.ts). Answer it exactly
 * once with `reply`, `fail`, `replyResult` or `error` (an MCP protocol error, for a malformed call;
 * a failing tool should `fail`).
 */
export class ToolCall extends McpCall {
  /** The tool's name. */
  tool: string = "";
  /** The arguments object (empty when none were given). */
  arguments: JSON.Obj;

  constructor(host: McpEngine, request: Request, connectionless: bool, served: ServedServer, tool: string, args: JSON.Obj) {
    super(host, request, connectionless, served);
    this.tool = tool;
    this.arguments = args;
  }

  describe(): string {
    return `tool call ${this.tool}`;
  }

  has(key: string): bool {
    return this.arguments.has(key);
  }

  /** A string argument, or `fallback` when absent or not a string. */
  getString(key: string, fallback: string = ""): string {
    const s = getString(this.arguments, key);
    return s == null ? fallback : s;
  }

  /** A numeric argument, or `fallback` when absent or not a number. */
  getNumber(key: string, fallback: f64 = NaN): f64 {
    return getNumber(this.arguments, key, fallback);
  }

  /** An integer argument (truncated), or `fallback` when absent or not a finite number. */
  getInt(key: string, fallback: i64 = 0): i64 {
    const n = getNumber(this.arguments, key, NaN);
    return isFinite(n) ? <i64>n : fallback;
  }

  /** A boolean argument, or `fallback`. */
  getBool(key: string, fallback: bool = false): bool {
    return getBool(this.arguments, key, fallback);
  }

  /** A string-array argument's strings (a single string counts as one; others are skipped). */
  getStrings(key: string): string[] {
    return getStrings(this.arguments, key);
  }

  /** A nested object argument, or null. */
  getObj(key: string): JSON.Obj | null {
    return getObj(this.arguments, key);
  }

  /** The arguments as JSON text. */
  argumentsJson(): string {
    return JSON.stringify(this.arguments);
  }

  /** Answers with one text block: `{"content":[{"type":"text","text":…}]}`. */
  reply(text: string): void {
    this.replyResult(textResult(text, false));
  }

  /** Answers with a tool error the model sees: `{"content":[{"type":"text","text":…}],"isError":true}`. */
  fail(message: string): void {
    this.replyResult(textResult(message, true));
  }
}

/** `{"content":[{"type":"text","text":…}]}`, with `"isError":true` for a tool error. */
export function textResult(text: string, isError: bool): string {
  const b = new Builder().str('{"content":[{"type":"text","text":').str(quote(text)).str("}]");
  if (isError) b.str(',"isError":true');
  return b.str("}").build();
}

