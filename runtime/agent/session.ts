/**
 * Session state of the reference agent.
 *
 * A {@link SessionStore} holds the sessions of one agent app. Each {@link AgentSession} keeps what
 * `session/new` set up, a tool-call counter, the one prompt turn that may be running, and the history of
 * the conversation (user prompts and every update the agent emitted) — today that history is only kept in
 * memory; it is what a later `session/load` replays and what an on-disk store persists.
 */
import { randomUUID } from "node:crypto";
import { RequestError, type ContentBlock, type McpServer, type SessionUpdate } from "@agentclientprotocol/sdk";

/** What `session/new` (and later load/resume/fork) establishes. */
export interface SessionSetup {
  cwd: string;
  mcpServers: McpServer[];
  additionalDirectories: string[];
}

/** One entry of a session's history, in the order it happened. */
export type HistoryEntry =
  | { kind: "user"; prompt: ContentBlock[] }
  | { kind: "update"; update: SessionUpdate };

/** The running prompt turn of a session. */
export class PromptTurn {
  private readonly cancelController = new AbortController();
  /** Aborted by `session/cancel`, by `$/cancel_request` for the prompt request, or when the connection closes. */
  readonly signal: AbortSignal;

  constructor(requestSignal: AbortSignal) {
    // (Not AbortSignal.any: it is missing before Node 20.3, and package.json allows any Node 20.)
    this.signal = this.cancelController.signal;
    if (requestSignal.aborted) this.cancelController.abort(requestSignal.reason);
    else requestSignal.addEventListener("abort", () => this.cancelController.abort(requestSignal.reason), { once: true });
  }

  /** Cancels the turn (the effect of `session/cancel`). */
  cancel(): void {
    this.cancelController.abort(new Error("session/cancel"));
  }
}

export class AgentSession {
  readonly createdAt = new Date();
  updatedAt = this.createdAt;
  readonly history: HistoryEntry[] = [];
  private toolCalls = 0;
  private turn: PromptTurn | undefined;

  constructor(
    readonly id: string,
    readonly setup: SessionSetup,
  ) {}

  /** The running turn, if any. */
  get activeTurn(): PromptTurn | undefined {
    return this.turn;
  }

  /**
   * Starts a prompt turn. A session runs one prompt at a time: a second concurrent `session/prompt` is
   * refused with -32600.
   */
  beginTurn(requestSignal: AbortSignal): PromptTurn {
    if (this.turn) {
      throw new RequestError(-32600, `Invalid request: session ${this.id} already has a prompt in progress`, {
        sessionId: this.id,
      });
    }
    this.turn = new PromptTurn(requestSignal);
    return this.turn;
  }

  /** Ends `turn` if it is still the running one. */
  endTurn(turn: PromptTurn): void {
    if (this.turn === turn) this.turn = undefined;
  }

  /** Cancels the running turn, if any. Returns whether there was one. */
  cancel(): boolean {
    if (!this.turn) return false;
    this.turn.cancel();
    return true;
  }

  /** The next tool-call id of this session: `tool-1`, `tool-2`, … (ids never repeat within a session). */
  nextToolCallId(): string {
    this.toolCalls += 1;
    return `tool-${this.toolCalls}`;
  }

  record(entry: HistoryEntry): void {
    this.history.push(entry);
    this.updatedAt = new Date();
  }
}

/** The sessions of one agent app, in memory. */
export class SessionStore {
  private readonly sessions = new Map<string, AgentSession>();

  create(setup: SessionSetup): AgentSession {
    const session = new AgentSession(`sess-${randomUUID()}`, setup);
    this.sessions.set(session.id, session);
    return session;
  }

  get(sessionId: string): AgentSession | undefined {
    return this.sessions.get(sessionId);
  }

  /** The session, or a -32002 "Resource not found" error with `data.sessionId`. */
  require(sessionId: string): AgentSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  }

  /** Cancels every running turn (used when the connection closes). */
  cancelAll(): void {
    for (const session of this.sessions.values()) session.cancel();
  }

  get size(): number {
    return this.sessions.size;
  }
}
