// The author-facing hooks of a proxy: one method per kind of message, each defaulting to forwarding
// unchanged, so an empty subclass is a transparent pass-through. Override only what the proxy does.
// AssemblyScript has no closures: answers to a proxy's own requests come back through
// `onReply(tag, response)` with the tag it chose.
import { Channel } from "./channel";
import { ErrorCode, LogLevel } from "./codes";
import { Config } from "./config";
import { getObj } from "./json";
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
} from "./messages";
import { Resource } from "./catalog";
import { McpClientReply } from "./mcp-client";
import { McpNotification, PromptGet, ResourceRead } from "./resources";
import { Subagent, SubagentEngine, SubagentError, rejectPermission } from "./subagent";
import { McpServer, ToolCall } from "./tools";

export class Hooks extends Channel {
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

  /**
   * The resources `resources/list` shows for one server in one ACP session (called for each list
   * request). Default: the ones declared with `server.resource(...)`. Override it to list per
   * session (set `server.dynamicResources` so `initialize` advertises resources while none are declared).
   */
  resourcesFor(server: McpServer, sessionId: string): Resource[] {
    return server.resources;
  }

  /**
   * An MCP `resources/read` for one of the proxy's servers. Default: the text of the resource with
   * that URI among `resourcesFor(server, session)`, else "resource not found".
   */
  onResourceRead(read: ResourceRead): void {
    const list = this.resourcesFor(read.server, read.sessionId);
    for (let i = 0; i < list.length; i++) {
      const r = list[i];
      if (r.uri == read.uri && r.text.length) {
        read.reply(r.text, r.mimeType);
        return;
      }
    }
    read.notFound();
  }

  /** An MCP `prompts/get` for a declared prompt. Default: its declared text as one user message. */
  onMcpPromptGet(get: PromptGet): void {
    const p = get.server.findPrompt(get.name);
    if (p != null && p.text.length) get.reply(p.text, p.description);
    else get.invalid(`prompt ${get.name} has no handler in proxy ${this.name}`);
  }

  /** An MCP notification from the agent's MCP client to one of the proxy's servers (`notifications/initialized`, …). */
  onMcpNotification(notification: McpNotification): void {}

  /**
   * The answer to a server's request to the agent's MCP client (`McpClient.listRoots`,
   * `createMessage`, `elicit`, `ping`, `request`), with the tag given there. A refusal for a missing
   * grant has `reply.grant` set and `reply.message` saying which to give. Default: a warning in the
   * proxy's log when it failed.
   */
  onMcpClientReply(reply: McpClientReply): void {
    if (reply.isError) this.log(LogLevel.Warn, `MCP ${reply.method} to the agent's MCP client failed: ${reply.message}`);
  }

  /**
   * A prompt was answered — by the agent (its answer is being relayed) or by the proxy itself
   * (`endTurn`, `respond`, `respondError`) — and the answer is about to leave: what the proxy sends
   * now (`sendMessageChunk`, `sendUpdate`) still reaches the client inside the turn. `stopReason`
   * is the answer's (`end_turn`, `cancelled`, …), "" when the turn ended with an error.
   */
  onTurnEnd(prompt: PromptRequest, stopReason: string): void {}

  /**
   * A session ended: a `session/close` or `session/delete` the proxy forwarded was answered with
   * success. Every `PerSession` store has already dropped the session; free anything else kept for it.
   */
  onSessionClosed(sessionId: string): void {}

  protected turnEnded(prompt: PromptRequest, stopReason: string): void {
    this.onTurnEnd(prompt, stopReason);
  }

  // ---------------------------------------------------------------- subagents (subagent.ts)
  // Everything the agent side sends for a session the proxy opened with `startSubagent` comes
  // here, never to the hooks above and never to the client.

  /** The subagents' engine (null until the first `startSubagent`). */
  _subagents: SubagentEngine | null = null;

  /** A subagent's `session/new` was answered: `agent.sessionId` is known (a queued prompt was just sent). */
  onSubagentStarted(agent: Subagent): void {}

  /** A `session/update` of a subagent's session (its `agent_message_chunk` text is already in `agent.text`). */
  onSubagentUpdate(agent: Subagent, update: SessionUpdate): void {}

  /**
   * The agent asks permission in a subagent's session: nobody but the proxy sees it. Default: the
   * first reject option, else `cancelled`. Answering with an allow option needs the
   * `permission:allow` grant (without it Cordon gives the agent a reject instead).
   */
  onSubagentPermission(agent: Subagent, request: PermissionRequest): void {
    rejectPermission(this, request);
  }

  /** Any other request of a subagent's session (`fs/*`, `terminal/*`, …). Default: refused. */
  onSubagentRequest(agent: Subagent, request: Request): void {
    this.respondError(request, ErrorCode.Denied, `proxy ${this.name} offers its subagents no ${request.method}`);
  }

  /** A subagent's prompt was answered (`end_turn`, `cancelled`, …); its answer text is `agent.text`. */
  onSubagentTurnEnd(agent: Subagent, stopReason: string): void {}

  /**
   * A call of a subagent failed (`error.what`: `start`, `prompt`, `close`): a missing grant
   * (`error.grant`; `error.message` says which to give) or the agent's error. A failed start frees
   * the subagent; a failed prompt leaves it idle. Default: a warning in the proxy's log.
   */
  onSubagentFailed(agent: Subagent, error: SubagentError): void {
    this.log(LogLevel.Warn, `subagent ${error.what} failed: ${error.message}`);
  }

  /** A subagent's session was closed (or forgotten, when the agent cannot close sessions). */
  onSubagentClosed(agent: Subagent): void {}

  /** A message from the agent side: true when a subagent's session took it. */
  protected _toSubagent(message: Message): bool {
    const engine = this._subagents;
    return engine != null && engine.route(message);
  }

  /** The answer to one of the proxy's own requests: the subagents' engine's, the MCP engine's, or `onReply`. */
  protected _ownReply(tag: string, response: Response): void {
    const engine = this._subagents;
    if (engine != null && engine.reply(tag, response)) return;
    const mcp = this._mcp;
    if (mcp != null && mcp.reply(tag, response)) return;
    this.onReply(tag, response);
  }

  /** The successor advertised `sessionCapabilities.close` (subagents are closed with `session/close`). */
  _agentCanClose: bool = false;

  /** The successor answered `initialize` (before `onInitializeResponse`): what subagents may use. */
  protected _agentInitialized(response: InitializeResponse): void {
    if (response.isError) return;
    const caps = getObj(response.readResult(), "agentCapabilities");
    if (caps == null) return;
    const sessions = getObj(caps, "sessionCapabilities");
    this._agentCanClose = sessions != null && getObj(sessions, "close") != null;
  }
}
