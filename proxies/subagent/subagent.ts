// subagent: a `/review` slash command answered by a second session of the same agent — the
// proxy-chains RFD's subagents, where a proxy starts sessions of its own and coordinates them.
//
// - `/review <text>` in a user's session opens a subagent session at the agent (`session/new` in the
//   user's session's cwd), prompts it with the configured review prompt over the user's text, and
//   tells the user a short progress line (an `agent_thought_chunk`). The subagent's updates stay with
//   the proxy (the client never sees its session); when its turn ends, its answer is the user's
//   turn's result: its text as an `agent_message_chunk`, the stop reason `end_turn`. The subagent
//   session is then closed.
// - Cancelling the user's turn (`session/cancel`, or `$/cancel_request` for the prompt) cancels the
//   subagent; the user's turn ends `cancelled`.
// - The agent's permission requests in the subagent session are answered by the proxy: a reject
//   option (or `cancelled`) — unless the config says `"permissions": "allow"`, which also needs the
//   `permission:allow` grant (without it Cordon turns the allow into a reject and tells the user).
// - Starting and prompting a session of its own needs the `agent:sessions` and `agent:prompt`
//   grants; without them the user's `/review` is answered with a message naming the grant, and
//   every other prompt goes on to the agent as usual.
//
// Config: {"prompt": "… {text} …", "cwd": "/fallback/dir", "permissions": "reject" | "allow"}.
import {
  Config,
  LogLevel,
  Notification,
  PermissionOutcome,
  PermissionRequest,
  PromptRequest,
  Proxy,
  Request,
  Response,
  SessionUpdate,
  Subagent,
  SubagentError,
  getString,
  register,
} from "@cordon/sdk-as";

const DEFAULT_PROMPT =
  "You are reviewing text for the user. Point out mistakes, unclear passages and risks, and suggest concrete improvements. Be brief.\n\nThe text to review:\n{text}";

/** A user's `/review` turn and the subagent working on it. */
class Review {
  cancelled: bool = false;
  constructor(
    public prompt: PromptRequest,
    public agent: Subagent,
  ) {}
}

class Reviewer extends Proxy {
  template: string = DEFAULT_PROMPT;
  fallbackCwd: string = "/";
  allowTools: bool = false;
  /** Running reviews, by the user's session. */
  reviews: Map<string, Review> = new Map<string, Review>();
  /** The cwd of each user session (from its setup), where its reviews run. */
  cwds: Map<string, string> = new Map<string, string>();

  constructor() {
    super();
    this.addCommand("review", "Review the text with a second session of the agent (a subagent)", "text to review");
  }

  onConfigure(config: Config): void {
    this.template = config.getString("prompt", DEFAULT_PROMPT);
    this.fallbackCwd = config.getString("cwd", "/");
    this.allowTools = config.getString("permissions", "reject") == "allow";
  }

  // ---- where each user session lives

  onResponse(response: Response): void {
    const m = response.method;
    if (!response.isError && (m == "session/new" || m == "session/fork" || m == "session/load" || m == "session/resume")) {
      const asked = response.request!.readParams();
      const cwd = getString(asked, "cwd");
      const id = m == "session/new" || m == "session/fork" ? getString(response.readResult(), "sessionId") : getString(asked, "sessionId");
      if (cwd != null && id != null) this.cwds.set(id, cwd);
    }
    this.relay(response);
  }

  onSessionClosed(sessionId: string): void {
    this.cwds.delete(sessionId);
    if (this.reviews.has(sessionId)) this.reviews.get(sessionId).agent.close();
  }

  // ---- the command

  onPrompt(prompt: PromptRequest): void {
    if (prompt.command != "review") {
      this.forward(prompt);
      return;
    }
    const session = prompt.sessionId;
    let text = prompt.text.trim();
    text = text.substring(1 + "review".length).trim();
    if (text.length == 0) {
      this.answerPrompt(prompt, "usage: /review <text to review>");
      return;
    }
    if (this.reviews.has(session)) {
      this.answerPrompt(prompt, "a review is already running in this session");
      return;
    }
    const cwd = this.cwds.has(session) ? this.cwds.get(session) : this.fallbackCwd;
    const agent = this.startSubagent(cwd, session);
    const t = this.template;
    agent.prompt(t.includes("{text}") ? t.replace("{text}", text) : t + "\n\n" + text);
    this.reviews.set(session, new Review(prompt, agent));
    this.hold(prompt);
    this.sendThought(session, "Reviewing in a subagent session…\n");
  }

  onSubagentUpdate(agent: Subagent, update: SessionUpdate): void {
    // One short line per tool the reviewer runs; its text is collected by the SDK.
    if (update.kind == "tool_call") this.sendThought(agent.tag, `The reviewer runs: ${update.title}\n`);
  }

  onSubagentPermission(agent: Subagent, request: PermissionRequest): void {
    const allow = this.allowTools ? request.optionOfKind("allow_once") : null;
    if (allow != null) this.respond(request, PermissionOutcome.selected(allow.optionId));
    else super.onSubagentPermission(agent, request); // a reject option, else cancelled
  }

  onSubagentTurnEnd(agent: Subagent, stopReason: string): void {
    agent.close();
    const session = agent.tag;
    if (!this.reviews.has(session)) return;
    const review = this.reviews.get(session);
    this.reviews.delete(session);
    if (review.prompt.answered) return;
    if (review.cancelled || stopReason == "cancelled") {
      this.endTurn(review.prompt, "cancelled");
      return;
    }
    const answer = agent.text;
    this.answerPrompt(review.prompt, answer.length ? answer : "The reviewer returned no text.");
  }

  onSubagentFailed(agent: Subagent, error: SubagentError): void {
    const session = agent.tag;
    agent.close();
    if (!this.reviews.has(session)) return;
    const review = this.reviews.get(session);
    this.reviews.delete(session);
    if (review.prompt.answered) return;
    if (error.grant.length) {
      this.log(LogLevel.Warn, `/review: ${error.message}`);
      this.answerPrompt(
        review.prompt,
        `/review cannot run: ${error.message} (in the chain config: "grants": ["agent:sessions", "agent:prompt"]).`,
      );
    } else {
      this.answerPrompt(review.prompt, `/review failed: ${error.message}`);
    }
  }

  // ---- cancelling the user's turn cancels the subagent

  onClientNotification(notification: Notification): void {
    if (notification.method == "session/cancel") this.cancelReview(notification.sessionId);
    this.forward(notification);
  }

  onCancel(request: Request): void {
    if (request.method == "session/prompt") this.cancelReview(request.sessionId);
  }

  private cancelReview(session: string): void {
    if (!this.reviews.has(session)) return;
    const review = this.reviews.get(session);
    review.cancelled = true;
    review.agent.cancel(); // the turn ends in onSubagentTurnEnd (at once while the session is starting)
  }
}

register(new Reviewer());
