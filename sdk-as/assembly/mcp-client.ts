// The agent's MCP client as one of the proxy's MCP servers sees it: one open connection of the
// connection form, with the capabilities the client declared in MCP `initialize`. Through it the
// server sends the client requests of its own (`roots/list`, `sampling/createMessage`,
// `elicitation/create`, `ping`, or any other) and notifications; each answer comes back to
// `Proxy.onMcpClientReply(reply)` with the tag the proxy chose (AssemblyScript has no closures).
//
//   onToolCall(call: ToolCall): void {
//     const client = call.client;
//     const why = client == null ? "no MCP connection" : client.listRoots("roots:" + call.sessionId);
//     if (why.length) call.fail(why);
//     // else: keep `call` (by the tag) and answer it in onMcpClientReply
//   }
//
// Only the connection form carries a server's own requests and notifications (the connectionless
// form's `mcp/message` goes from the agent side to the server only): in the connectionless form a
// call has no `client`. A request is sent only when the client declared the capability it needs
// (`roots`, `sampling`, `elicitation`); otherwise nothing is sent and the method returns why.
//
// Three of these requests act with the user's authority, so Cordon refuses them to a proxy without
// the grant (`runtime/routing/rules/mcp-client.ts`), whatever the SDK does: `sampling/createMessage`
// needs `mcp:sampling` (it drives the agent's model), `elicitation/create` needs `mcp:elicitation`
// (it asks the user questions in the agent's name), `roots/list` needs `mcp:roots` (it discloses the
// user's workspace folders). A refusal reaches `onMcpClientReply` with `reply.grant` naming the
// missing grant and `reply.message` saying in words which to give.
import { JSON } from "json-as";
import { getObj, getString } from "./json";
import { Response } from "./messages";
import { McpEngine, McpServer, ServedServer } from "./tools";

/** The client capability an MCP request to the client needs ("" for none: `ping`, or a method the SDK does not know). */
export function capabilityFor(method: string): string {
  if (method == "roots/list") return "roots";
  if (method == "sampling/createMessage") return "sampling";
  if (method == "elicitation/create") return "elicitation";
  return "";
}

/** One connection of the agent's MCP client to one of the proxy's servers. */
export class McpClient {
  /** The client sent `notifications/initialized`. */
  initialized: bool = false;
  /** The `capabilities` object of the client's MCP `initialize`, as JSON text ("" before it). */
  capabilitiesJson: string = "";
  /** The connection was closed (`mcp/disconnect`, or its session ended): nothing more is sent. */
  closed: bool = false;

  constructor(
    public connectionId: string,
    public served: ServedServer,
    public _host: McpEngine,
  ) {}

  /** The ACP session of the declaration the client connected to. */
  get sessionId(): string {
    return this.served.sessionId;
  }

  get server(): McpServer {
    return this.served.server;
  }

  /** Whether the client declared `capability` (`roots`, `sampling`, `elicitation`, …) in MCP `initialize`. */
  supports(capability: string): bool {
    if (this.capabilitiesJson.length == 0) return false;
    const caps = JSON.parse<JSON.Obj>(this.capabilitiesJson);
    return caps.has(capability) && getObj(caps, capability) != null;
  }

  /** `roots/list`: the client's roots (the user's workspace folders). Needs the `mcp:roots` grant. */
  listRoots(tag: string): string {
    return this.request("roots/list", "{}", tag);
  }

  /**
   * `sampling/createMessage` with `paramsJson` (`{"messages":[…],"maxTokens":…}`): the agent's
   * model writes a message. Needs the `mcp:sampling` grant.
   */
  createMessage(paramsJson: string, tag: string): string {
    return this.request("sampling/createMessage", paramsJson, tag);
  }

  /**
   * `elicitation/create` with `paramsJson` (`{"message":…,"requestedSchema":{…}}`): the client asks
   * the user. Needs the `mcp:elicitation` grant.
   */
  elicit(paramsJson: string, tag: string): string {
    return this.request("elicitation/create", paramsJson, tag);
  }

  /** `ping`: answered `{}` by a live client. */
  ping(tag: string): string {
    return this.request("ping", "", tag);
  }

  /**
   * Sends the client an MCP request (`paramsJson` "" for none); the answer reaches
   * `onMcpClientReply` with `tag`. Returns "" when sent, else why it was not (the connection is
   * closed, or the client did not declare the capability the method needs).
   */
  request(method: string, paramsJson: string, tag: string): string {
    if (this.closed) return `MCP connection ${this.connectionId} is closed`;
    const needed = capabilityFor(method);
    if (needed.length && !this.supports(needed)) {
      return `the agent's MCP client did not declare the ${needed} capability in initialize, so it cannot be sent ${method}`;
    }
    return this._host.askClient(this, method, paramsJson, tag);
  }

  /** Sends the client an MCP notification (`paramsJson` "" for none); false when the connection is closed. */
  notify(method: string, paramsJson: string = ""): bool {
    if (this.closed) return false;
    this._host.notifyClient(this, method, paramsJson);
    return true;
  }
}

/** What a grant lets a proxy do, for the missing-grant words. */
function purpose(grant: string): string {
  if (grant == "mcp:sampling") return "have the agent's model write for it (MCP sampling)";
  if (grant == "mcp:elicitation") return "ask the user questions through the agent (MCP elicitation)";
  if (grant == "mcp:roots") return "see the user's workspace roots (MCP roots/list)";
  return "send that";
}

/**
 * The answer to one of a server's requests to the agent's MCP client: a result (`resultJson`), the
 * client's MCP error, or Cordon's refusal (a missing grant: `grant` names it, `message` says which
 * to give).
 */
export class McpClientReply {
  /** The grant Cordon says is missing ("" when the failure is not a missing grant). */
  grant: string = "";
  /** In words: "" on success; `grant mcp:roots to this proxy to let it …`, or the client's error message. */
  message: string = "";

  constructor(
    /** The proxy's label from the request. */
    public tag: string,
    public method: string,
    public client: McpClient,
    public response: Response,
  ) {
    if (response.isError) this.readError();
  }

  private readError(): void {
    const e = JSON.parse<JSON.Obj>(this.response.rawError());
    const m = getString(e, "message");
    const data = getObj(e, "data");
    const cordon = data != null ? getObj(data, "cordon") : null;
    const g = cordon != null ? getString(cordon, "grant") : null;
    if (g != null && g.length) {
      this.grant = g;
      this.message = `grant ${g} to this proxy to let it ${purpose(g)}`;
    } else this.message = m == null ? "the agent's MCP client answered an error" : m;
  }

  get isError(): bool {
    return this.response.isError;
  }

  get errorCode(): i32 {
    return this.response.errorCode;
  }

  /** The MCP result as JSON text ("" on error). */
  get resultJson(): string {
    return this.response.isError ? "" : this.response.rawResult();
  }

  /** The ACP session of the connection the request went through. */
  get sessionId(): string {
    return this.client.sessionId;
  }
}
