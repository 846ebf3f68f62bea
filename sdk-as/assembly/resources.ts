// The MCP requests for resources and prompts a proxy answers (`resources/read`, `prompts/get`), and
// the MCP notifications its servers receive — each with the ACP session of the serverId it came
// through, like a tool call.
import { JSON } from "json-as";
import { McpErrorCode } from "./codes";
import { Builder, getString, quote } from "./json";
import { McpClient } from "./mcp-client";
import { Request } from "./messages";
import { McpCall, McpEngine, ServedServer } from "./tools";

/** MCP's "resource not found" (`resources/read` of a URI the server does not have). */
export const RESOURCE_NOT_FOUND: i32 = -32002;

/**
 * One `resources/read {uri}`. Answer it once: `reply(text)`, `replyResult(json)`, `notFound()` or
 * `error(code, message)`. The session is the one the serverId was declared in: a proxy that keeps
 * resources per session refuses URIs of another session here.
 */
export class ResourceRead extends McpCall {
  constructor(host: McpEngine, request: Request, connectionless: bool, served: ServedServer, public uri: string) {
    super(host, request, connectionless, served);
  }

  describe(): string {
    return `resources/read ${this.uri}`;
  }

  /** Answers `{"contents":[{"uri","mimeType","text"}]}`. */
  reply(text: string, mimeType: string = "text/plain"): void {
    const b = new Builder().str('{"contents":[{"uri":').str(quote(this.uri));
    if (mimeType.length) b.str(',"mimeType":').str(quote(mimeType));
    this.replyResult(b.str(',"text":').str(quote(text)).str("}]}").build());
  }

  /** Answers MCP's "resource not found" (-32002) naming the URI. */
  notFound(): void {
    this.error(RESOURCE_NOT_FOUND, `Resource not found: ${this.uri}`);
  }
}

/**
 * One `prompts/get {name, arguments?}`. Answer it once: `reply(text)` (one user message),
 * `replyResult(json)`, or `error(code, message)`. The required arguments the prompt declares were
 * checked before it got here.
 */
export class PromptGet extends McpCall {
  constructor(
    host: McpEngine,
    request: Request,
    connectionless: bool,
    served: ServedServer,
    public name: string,
    args: JSON.Obj,
  ) {
    super(host, request, connectionless, served);
    this.arguments = args;
  }

  /** `arguments` (string values, as MCP defines them); empty when none were given. */
  arguments: JSON.Obj;

  describe(): string {
    return `prompts/get ${this.name}`;
  }

  /** A string argument, or `fallback`. */
  getString(key: string, fallback: string = ""): string {
    const s = getString(this.arguments, key);
    return s == null ? fallback : s;
  }

  /** Answers `{"description"?,"messages":[{"role":"user","content":{"type":"text","text"}}]}`. */
  reply(text: string, description: string = ""): void {
    const b = new Builder().str("{");
    if (description.length) b.str('"description":').str(quote(description)).str(",");
    b.str('"messages":[{"role":"user","content":{"type":"text","text":').str(quote(text)).str("}}]}");
    this.replyResult(b.build());
  }

  /** Answers "invalid params" naming the prompt (an unknown or malformed request). */
  invalid(message: string): void {
    this.error(McpErrorCode.InvalidParams, message);
  }
}

/** An MCP notification the agent's MCP client sent one of the proxy's servers (connection form). */
export class McpNotification {
  constructor(
    public served: ServedServer,
    public connectionId: string,
    /** `notifications/initialized`, `notifications/roots/list_changed`, … */
    public method: string,
    /** The inner `params` as JSON text ("" for none). */
    public paramsJson: string,
  ) {}

  /** The agent's MCP client on that connection (null in the connectionless form). */
  client: McpClient | null = null;

  get sessionId(): string {
    return this.served.sessionId;
  }
}
