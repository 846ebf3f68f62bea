// persona: the proxy-chains RFD's "Sparkle" flow. The agent is given a persona before it sees the
// user's first prompt of a session:
//
// - At every session setup the SDK adds the proxy's MCP server (`persona`, tool `persona_info`).
// - On the first `session/prompt` of a session created with `session/new`, the user's prompt is
//   held; the proxy sends its configured embodiment prompt to the agent first, as a `session/prompt`
//   of its own. Every `session/update` of that turn goes on to the client as usual; the turn's
//   response is discarded. Then the user's prompt goes to the agent and its answer is relayed.
// - Later prompts, and prompts of sessions that were loaded, resumed or forked (their history
//   already holds the embodiment), pass straight through.
// - `session/cancel` during the embodiment turn cancels both: the cancel goes on to the agent (which
//   ends the embodiment turn) and the held prompt is answered `{"stopReason":"cancelled"}`; the next
//   prompt of that session embodies again. `$/cancel_request` for the held prompt does the same and
//   answers it with a cancelled error.
//
// Config: {"embodiment": "You are Sparkle, …", "name": "Sparkle", "serverName": "persona"}; with
// no embodiment the proxy only serves its tool.
import { Config, ErrorCode, JSON, LogLevel, Notification, PromptRequest, Proxy, Request, Response, ToolCall, getString, quote, register } from "@cordon/sdk-as";

/** A user's prompt waiting for the embodiment turn of its session. */
class Held {
  cancelled: bool = false;
  constructor(public prompt: PromptRequest, public embodimentId: i64) {}
}

class Persona extends Proxy {
  embodiment: string = "";
  persona: string = "";
  /** Sessions whose agent has had (or does not need) the embodiment prompt. */
  embodied: Set<string> = new Set<string>();
  /** Held user prompts, by session. */
  held: Map<string, Held> = new Map<string, Held>();

  constructor() {
    super();
    this.addMcpServer("persona").tool("persona_info", "Who the assistant is in this session: the persona's name and instructions.");
  }

  onConfigure(config: Config): void {
    this.embodiment = config.getString("embodiment");
    this.persona = config.getString("name", "the persona");
    this.mcpServers[0].name = config.getString("serverName", "persona");
    if (this.embodiment.length == 0) this.log(LogLevel.Warn, "no embodiment configured: prompts pass through unchanged");
  }

  // ---- which sessions need the embodiment

  onClientRequest(request: Request): void {
    // A loaded or resumed session already went through its first turn.
    if (request.method == "session/load" || request.method == "session/resume") this.embodied.add(request.sessionId);
    this.forward(request);
  }

  onResponse(response: Response): void {
    if (response.method == "session/fork" && !response.isError) {
      const id = getString(response.readResult(), "sessionId");
      if (id != null) this.embodied.add(id); // the fork inherits the source's history
    } else if ((response.method == "session/close" || response.method == "session/delete") && !response.isError) {
      this.embodied.delete(response.request!.sessionId);
    }
    this.relay(response);
  }

  // ---- the embodiment turn

  onPrompt(prompt: PromptRequest): void {
    const session = prompt.sessionId;
    if (this.embodiment.length == 0 || this.embodied.has(session) || this.held.has(session)) {
      this.forward(prompt);
      return;
    }
    this.embodied.add(session);
    const params = `{"sessionId":${quote(session)},"prompt":[{"type":"text","text":${quote(this.embodiment)}}]}`;
    const id = this.requestAgent("session/prompt", JSON.Raw.from(params), "embody:" + session);
    this.held.set(session, new Held(prompt, id));
    this.hold(prompt); // forwarded once the embodiment turn is over
    this.log(LogLevel.Info, `embodying ${this.persona} in session ${session} before the user's first prompt`);
  }

  onReply(tag: string, response: Response): void {
    if (!tag.startsWith("embody:")) return;
    const session = tag.substring(7);
    if (!this.held.has(session)) return;
    const held = this.held.get(session);
    this.held.delete(session);
    if (held.cancelled) return; // the user's prompt was answered when the turn was cancelled
    if (response.isError) {
      this.log(LogLevel.Warn, `the embodiment turn of session ${session} failed (${response.errorMessage}); sending the user's prompt anyway`);
    }
    // The embodiment turn's response is not the user's business: discard it, send the real prompt.
    this.forward(held.prompt);
  }

  onClientNotification(notification: Notification): void {
    const session = notification.sessionId;
    if (notification.method == "session/cancel" && this.held.has(session)) {
      const held = this.held.get(session);
      if (!held.cancelled) {
        held.cancelled = true;
        this.embodied.delete(session); // the next prompt embodies again
        this.respond(held.prompt, JSON.Raw.from('{"stopReason":"cancelled"}'));
      }
    }
    this.forward(notification); // ends the embodiment turn in the agent
  }

  onCancel(request: Request): void {
    const session = request.sessionId;
    if (request.method != "session/prompt" || !this.held.has(session)) return;
    const held = this.held.get(session);
    if (held.prompt !== request || held.cancelled) return;
    held.cancelled = true;
    this.embodied.delete(session);
    this.cancelRequest(held.embodimentId);
    this.respondError(request, ErrorCode.RequestCancelled, "Request cancelled");
  }

  // ---- the persona's tool

  onToolCall(call: ToolCall): void {
    if (call.tool != "persona_info") {
      super.onToolCall(call);
      return;
    }
    const session = call.sessionId;
    const state = this.held.has(session) ? "the embodiment turn is running" : this.embodied.has(session) ? "embodied" : "not embodied yet";
    call.reply(`You are ${this.persona}. Session ${session}: ${state}.\nInstructions: ${this.embodiment.length ? this.embodiment : "(none configured)"}`);
  }
}

register(new Persona());
