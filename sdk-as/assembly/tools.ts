// MCP data types a proxy sees (`McpServer`, `Tool`, `ToolCall`) and the engine interface the
// dispatcher talks to (`McpEngine`, a no-op base; mcp.ts's `McpHost` is the real engine, compiled
// only into proxies that call `addMcpServer`).
import { JSON } from "json-as";
import { Builder, RawObject, getBool, getNumber, getObj, getString, getStrings, quote } from "./json";
import { Request, Response } from "./messages";

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

  toJson(): string {
    const b = new Builder().str('{"name":').str(quote(this.name));
    if (this.title.length) b.str(',"title":').str(quote(this.title));
    return b.str(',"description":').str(quote(this.description)).str(',"inputSchema":').str(this.inputSchema).str("}").build();
  }
}

/** An MCP server the proxy provides: a name (what the agent sees) and its tools. */
export class McpServer {
  tools: Tool[] = new Array<Tool>(0);
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
 * One `tools/call`: which tool, of which server, in which ACP session, with which arguments.
 * Answer it exactly once — now or later (keep the object) — with `reply`, `fail`, `replyResult` or
 * `error`. If it is cancelled first, `cancelled` is true and answers are dropped.
 */
export class ToolCall {
  /** The tool's name. */
  tool: string = "";
  server: McpServer;
  serverId: string = "";
  /** The ACP session the call belongs to ("" only if the agent calls before `session/new` was answered). */
  sessionId: string = "";
  /** The connection it came through ("" in the connectionless form). */
  connectionId: string = "";
  /** The arguments object (empty when none were given). */
  arguments: JSON.Obj;

  _request: Request;
  _connectionless: bool;
  _host: McpEngine;
  _done: bool = false;
  _cancelled: bool = false;

  constructor(host: McpEngine, request: Request, connectionless: bool, served: ServedServer, tool: string, args: JSON.Obj) {
    this._host = host;
    this._request = request;
    this._connectionless = connectionless;
    this.server = served.server;
    this.serverId = served.serverId;
    this.sessionId = served.sessionId;
    this.tool = tool;
    this.arguments = args;
  }

  /** Whether an answer was sent (or the call was cancelled). */
  get answered(): bool {
    return this._done;
  }

  /** Whether the caller withdrew the call (`$/cancel_request`); answers are then dropped. */
  get cancelled(): bool {
    return this._cancelled;
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

  /** Answers with a whole `CallToolResult` given as JSON text (several blocks, `structuredContent`, …). */
  replyResult(resultJson: string): void {
    if (this.finish()) this._host.answer(this._request, this._connectionless, resultJson, 0, "");
  }

  /** Answers with an MCP protocol error (for a malformed call; a failing tool should `fail`). */
  error(code: i32, message: string): void {
    if (this.finish()) this._host.answer(this._request, this._connectionless, "", code, message);
  }

  private finish(): bool {
    if (this._done) {
      if (!this._cancelled) this._host.warn(`tool call ${this.tool} was already answered`);
      return false;
    }
    this._done = true;
    this._host.forget(this._request);
    return true;
  }
}

/** `{"content":[{"type":"text","text":…}]}`, with `"isError":true` for a tool error. */
export function textResult(text: string, isError: bool): string {
  const b = new Builder().str('{"content":[{"type":"text","text":').str(quote(text)).str("}]");
  if (isError) b.str(',"isError":true');
  return b.str("}").build();
}

