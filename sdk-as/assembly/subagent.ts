// Subagents: sessions a proxy opens at its successor (the agent) for itself, prompts, cancels and
// closes — the proxy-chains RFD's "a proxy starts new sessions and coordinates several agent
// instances".
//
//   class Reviewer extends Proxy {
//     onPrompt(prompt: PromptRequest): void {
//       const agent = this.startSubagent("/work", prompt.sessionId);
//       agent.prompt("Review this:\n" + prompt.commandInput);      // queued until the session exists
//       this.hold(prompt);
//     }
//     onSubagentTurnEnd(agent: Subagent, stopReason: string): void { … agent.text … agent.close(); }
//     onSubagentFailed(agent: Subagent, error: SubagentError): void { … error.message … }
//   }
//
// What the SDK does:
// - `startSubagent(cwd)` sends the proxy's own `session/new {cwd, mcpServers}` toward the agent
//   (with the proxy's own `{"type":"acp"}` servers when asked); the answer's `sessionId` keys the
//   subagent from then on, so several run at once.
// - Everything the agent side sends for a subagent's session is the proxy's alone and never
//   reaches the client-session hooks nor the client: `session/update` → `onSubagentUpdate` (the
//   text of its `agent_message_chunk`s is collected in `agent.text`), `session/request_permission`
//   → `onSubagentPermission` (default: a reject option, else `cancelled`), any other request
//   (`fs/*`, `terminal/*`) → `onSubagentRequest` (default: refused), other notifications dropped.
//   (Cordon routes the agent's calls for a session a proxy opened only to that proxy.)
// - `agent.cancel()` sends `session/cancel`; `agent.close()` sends `session/close` when the agent
//   advertised `sessionCapabilities.close` (otherwise the subagent is only forgotten, after a cancel
//   if a turn runs).
// - A session or prompt of the proxy's own needs the user's grants (`agent:sessions`,
//   `agent:prompt`); without them Cordon refuses the call, and `onSubagentFailed` gets an error
//   whose `message` says in words which grant to give (`error.grant` names it).
//
// Cost: nothing for a proxy that never calls `startSubagent` (the engine is compiled into proxies
// that call it); afterwards one map lookup by session id per agent-side message while at least one
// subagent is open. A subagent is freed when it is closed or fails to start.
import { JSON } from "json-as";
import { ErrorCode } from "./codes";
import { Hooks } from "./hooks";
import { Builder, getObj, getString, quote } from "./json";
import { Message, PermissionOutcome, PermissionRequest, Request, Response, SessionUpdate } from "./messages";

/** The tag of every request the subagent engine sends (its answers never reach `onReply`). */
export const SUBAGENT_TAG = "\u0000subagent";

/** Where a subagent is in its life. */
export enum SubagentState {
  /** `session/new` sent, not answered yet (`sessionId` is ""). */
  Starting = 0,
  /** The session exists and no prompt runs. */
  Idle = 1,
  /** A prompt was sent and not answered yet. */
  Prompting = 2,
  /** `session/close` sent. */
  Closing = 3,
  /** Closed (or forgotten): nothing more will arrive. */
  Closed = 4,
  /** `session/new` failed: see `error`. */
  Failed = 5,
}

/** A call of a subagent that failed: Cordon refused it (a missing grant) or the agent answered an error. */
export class SubagentError {
  constructor(
    /** Which call: `start` (session/new), `prompt` (session/prompt) or `close` (session/close). */
    public what: string,
    /** The JSON-RPC error code. */
    public code: i32,
    /**
     * In words, for a user: `grant agent:sessions to this proxy to let it start subagents` for a
     * missing grant, else `the subagent's prompt failed: <the agent's message>`.
     */
    public message: string,
    /** The error's own message (Cordon's refusal, or the agent's). */
    public detail: string,
    /** The grant Cordon says is missing ("" when the failure is not a missing grant). */
    public grant: string,
  ) {}
}

/** One session the proxy opened at the agent for itself. */
export class Subagent {
  /** The session id at the agent ("" while starting). */
  sessionId: string = "";
  state: SubagentState = SubagentState.Starting;
  /** The stop reason of the last turn ("" before the first or after a failed one). */
  stopReason: string = "";
  /** The last failure, or null. */
  error: SubagentError | null = null;
  /** Whether `cancel()` was called for the current turn. */
  cancelled: bool = false;
  /** The `session/new` result (JSON text; "" while starting): modes, config options. */
  setupResult: string = "";
  /** The id of the prompt in flight (0 when none), for `cancelRequest`. */
  promptId: i64 = 0;

  private parts: string[] = new Array<string>(0);
  private queued: string | null = null;
  private closeWhenStarted: bool = false;
  private closeAfterTurn: bool = false;

  constructor(
    public host: SubagentHost,
    /** The author's label (the client session it works for, say). */
    public tag: string,
    public cwd: string,
  ) {}

  /** The text of the `agent_message_chunk`s of the current (or last) turn, joined. */
  get text(): string {
    return this.parts.join("");
  }

  /** Whether the subagent may still be prompted (starting, idle or prompting). */
  get open(): bool {
    return this.state <= SubagentState.Prompting;
  }

  /**
   * Sends a prompt of one text block. While starting it is queued (one prompt) and sent once the
   * session exists. Returns false when it cannot be sent (a turn runs, a prompt is queued, or the
   * subagent is closing, closed or failed).
   */
  prompt(text: string): bool {
    return this.promptBlocks("[" + '{"type":"text","text":' + quote(text) + "}]");
  }

  /** Sends a prompt of content blocks (`blocksJson`: a JSON array). See `prompt`. */
  promptBlocks(blocksJson: string): bool {
    if (this.state == SubagentState.Starting) {
      if (this.queued != null) return false;
      this.queued = blocksJson;
      this.cancelled = false;
      return true;
    }
    if (this.state != SubagentState.Idle) return false;
    this.host.sendPrompt(this, blocksJson);
    return true;
  }

  /**
   * Cancels the running turn (`session/cancel`): the agent ends it and `onSubagentTurnEnd` gets
   * `cancelled`. While starting, a queued prompt is dropped and its turn ends `cancelled` at once.
   */
  cancel(): void {
    this.cancelled = true;
    if (this.state == SubagentState.Starting) {
      if (this.queued == null) return;
      this.queued = null;
      this.stopReason = "cancelled";
      this.host.proxy.onSubagentTurnEnd(this, "cancelled");
    } else if (this.state == SubagentState.Prompting) {
      this.host.sendCancel(this);
    }
  }

  /**
   * Ends the session: `session/close` when the agent advertised it (it cancels a running turn
   * first), else a cancel of a running turn and the subagent is forgotten. `onSubagentClosed`
   * follows. While starting, the session is closed as soon as it exists.
   */
  close(): void {
    if (this.state == SubagentState.Starting) {
      this.queued = null;
      this.closeWhenStarted = true;
      return;
    }
    if (this.state == SubagentState.Idle) {
      this.host.sendClose(this);
    } else if (this.state == SubagentState.Prompting) {
      if (this.host.canClose) this.host.sendClose(this);
      else {
        this.closeAfterTurn = true;
        this.host.sendCancel(this);
      }
    }
  }

  // ---- the engine's side

  _started(sessionId: string, result: string): void {
    this.sessionId = sessionId;
    this.setupResult = result;
    this.state = SubagentState.Idle;
  }

  _flushStart(): void {
    if (this.closeWhenStarted) {
      this.host.sendClose(this);
      return;
    }
    const q = this.queued;
    if (q != null && this.state == SubagentState.Idle) {
      this.queued = null;
      this.host.sendPrompt(this, q);
    }
  }

  _prompting(id: i64): void {
    this.parts = new Array<string>(0);
    this.stopReason = "";
    this.cancelled = false;
    this.promptId = id;
    this.state = SubagentState.Prompting;
  }

  _turnOver(): bool {
    this.promptId = 0;
    if (this.state == SubagentState.Prompting) this.state = SubagentState.Idle;
    return this.closeAfterTurn;
  }

  _chunk(text: string): void {
    this.parts.push(text);
  }
}

/** What the dispatcher asks of the engine (compiled into every proxy; the engine only into those that start subagents). */
export class SubagentEngine {
  /** A message from the agent side: true when it belongs to a subagent's session (then it was handled). */
  route(message: Message): bool {
    return false;
  }
  /** An answer to the proxy's own request: true when it was one of the engine's. */
  reply(tag: string, response: Response): bool {
    return false;
  }
}

/** A request the engine sent, waiting for its answer. */
class Call {
  constructor(
    public agent: Subagent,
    /** `start`, `prompt`, `close`. */
    public what: string,
  ) {}
  /** For a start with the proxy's MCP servers: the key mcp.ts keeps its declarations under. */
  mcpKey: i64 = 0;
}

/** The SDK's subagent engine inside a Proxy (created by the first `startSubagent`). */
export class SubagentHost extends SubagentEngine {
  /** Open subagents by session id (those still starting are in `calls` only). */
  bySession: Map<string, Subagent> = new Map<string, Subagent>();
  /** Every subagent not closed or failed, in the order they were started. */
  all: Subagent[] = new Array<Subagent>(0);
  private calls: Map<i64, Call> = new Map<i64, Call>();
  private mcpSetups: i64 = 0;

  constructor(public proxy: Hooks) {
    super();
  }

  /** The successor advertised `sessionCapabilities.close`. */
  get canClose(): bool {
    return this.proxy._agentCanClose;
  }

  start(cwd: string, tag: string, withMcpServers: bool): Subagent {
    const agent = new Subagent(this, tag, cwd);
    this.all.push(agent);
    const params = '{"cwd":' + quote(cwd) + ',"mcpServers":[]}';
    const mcp = withMcpServers ? this.proxy._mcp : null;
    if (mcp == null) {
      this.call(agent, "start", "session/new", params);
      return agent;
    }
    // The proxy's own MCP servers are declared as in a setup it forwards (mcp.ts), on a request
    // made here for the purpose; the engine learns the session from the answer.
    // mcp.ts keys a setup by the id it is forwarded under; this one goes by a key of its own
    // (negative: never one of the proxy's request ids) until the answer.
    const r = new Request();
    r.method = "session/new";
    r._src = params;
    r.params = JSON.parse<JSON.Obj>(params);
    const key = -(++this.mcpSetups);
    mcp.forwarding(r, key);
    const id = this.call(agent, "start", "session/new", r.paramsJson());
    this.calls.get(id).mcpKey = key;
    return agent;
  }

  sendPrompt(agent: Subagent, blocksJson: string): void {
    const params = '{"sessionId":' + quote(agent.sessionId) + ',"prompt":' + blocksJson + "}";
    agent._prompting(this.call(agent, "prompt", "session/prompt", params));
  }

  sendCancel(agent: Subagent): void {
    this.proxy.notifyAgent<JSON.Raw>("session/cancel", JSON.Raw.from('{"sessionId":' + quote(agent.sessionId) + "}"));
  }

  sendClose(agent: Subagent): void {
    if (!this.canClose) {
      this.closed(agent);
      return;
    }
    agent.state = SubagentState.Closing;
    this.call(agent, "close", "session/close", '{"sessionId":' + quote(agent.sessionId) + "}");
  }

  private call(agent: Subagent, what: string, method: string, params: string): i64 {
    const id = this.proxy.requestAgent<JSON.Raw>(method, JSON.Raw.from(params), SUBAGENT_TAG);
    this.calls.set(id, new Call(agent, what));
    return id;
  }

  reply(tag: string, r: Response): bool {
    if (tag != SUBAGENT_TAG || !this.calls.has(r.id)) return false;
    const call = this.calls.get(r.id);
    this.calls.delete(r.id);
    const agent = call.agent;
    const mcp = this.proxy._mcp;
    if (call.what == "start") {
      if (mcp != null && call.mcpKey != 0) mcp.answered("session/new", call.mcpKey, r);
      let sessionId: string | null = null;
      if (!r.isError) sessionId = getString(r.readResult(), "sessionId");
      if (sessionId == null) {
        agent.state = SubagentState.Failed;
        this.forget(agent);
        this.fail(agent, call.what, r);
        return true;
      }
      agent._started(sessionId!, r.rawResult());
      this.bySession.set(sessionId!, agent);
      agent._flushStart(); // the queued prompt (or close) first: the hook sees the subagent as it now is
      this.proxy.onSubagentStarted(agent);
    } else if (call.what == "prompt") {
      const closeNow = agent._turnOver();
      if (r.isError) {
        this.fail(agent, call.what, r);
      } else {
        const s = getString(r.readResult(), "stopReason");
        agent.stopReason = s == null ? "" : s;
        this.proxy.onSubagentTurnEnd(agent, agent.stopReason);
      }
      if (closeNow && agent.open) this.closed(agent);
    } else if (call.what == "close") {
      if (mcp != null && !r.isError) {
        // The declarations of the closed session are gone (mcp.ts reads the closed session from the request).
        const closing = new Request();
        closing.method = "session/close";
        closing.params = JSON.parse<JSON.Obj>('{"sessionId":' + quote(agent.sessionId) + "}");
        r.request = closing;
        mcp.answered("session/close", r.id, r);
        r.request = null;
      }
      if (r.isError) this.fail(agent, call.what, r);
      this.closed(agent);
    }
    return true;
  }

  route(m: Message): bool {
    if (this.bySession.size == 0) return false;
    const sessionId = m.sessionId;
    if (sessionId.length == 0 || !this.bySession.has(sessionId)) return false;
    const agent = this.bySession.get(sessionId);
    if (!m.isRequest) {
      if (m instanceof SessionUpdate) {
        const u = changetype<SessionUpdate>(m);
        if (u._kindIs("agent_message_chunk") && u.isTextChunk) agent._chunk(u.text);
        this.proxy.onSubagentUpdate(agent, u);
      }
      return true; // other notifications of the session: the proxy's, dropped
    }
    if (m instanceof PermissionRequest) this.proxy.onSubagentPermission(agent, changetype<PermissionRequest>(m));
    else this.proxy.onSubagentRequest(agent, changetype<Request>(m));
    return true;
  }

  subagentOf(sessionId: string): Subagent | null {
    return this.bySession.has(sessionId) ? this.bySession.get(sessionId) : null;
  }

  private closed(agent: Subagent): void {
    if (agent.state == SubagentState.Closed) return;
    agent.state = SubagentState.Closed;
    this.forget(agent);
    this.proxy.onSubagentClosed(agent);
  }

  private forget(agent: Subagent): void {
    if (agent.sessionId.length) this.bySession.delete(agent.sessionId);
    const i = this.all.indexOf(agent);
    if (i >= 0) this.all.splice(i, 1);
  }

  private fail(agent: Subagent, what: string, r: Response): void {
    const e = describe(what, r);
    agent.error = e;
    this.proxy.onSubagentFailed(agent, e);
  }
}

/** What each call lets a proxy do, for the missing-grant message. */
function purpose(what: string): string {
  if (what == "start") return "start subagents";
  if (what == "prompt") return "prompt its subagents";
  return "close its subagents";
}

/** The error of a failed call, in words; a missing grant is read from Cordon's `data.cordon.grant`. */
function describe(what: string, r: Response): SubagentError {
  if (!r.isError) return new SubagentError(what, ErrorCode.InternalError, `the subagent's session/new answer has no sessionId`, "", "");
  const e = JSON.parse<JSON.Obj>(r.rawError());
  const m = getString(e, "message");
  const detail = m == null ? "" : m;
  let grant = "";
  const data = getObj(e, "data");
  if (data != null) {
    const cordon = getObj(data, "cordon");
    if (cordon != null) {
      const g = getString(cordon, "grant");
      if (g != null) grant = g;
    }
  }
  const words =
    grant.length > 0
      ? new Builder().str("grant ").str(grant).str(" to this proxy to let it ").str(purpose(what)).build()
      : new Builder().str("the subagent's ").str(what).str(" failed: ").str(detail).build();
  return new SubagentError(what, r.errorCode, words, detail, grant);
}

/** The default answer to a subagent's permission request: a reject option, else `cancelled`. */
export function rejectPermission(proxy: Hooks, request: PermissionRequest): void {
  const reject = request.firstRejectOption();
  proxy.respond(request, reject != null ? PermissionOutcome.selected(reject.optionId) : PermissionOutcome.cancelled());
}
