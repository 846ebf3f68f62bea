/**
 * Session state of the reference agent.
 *
 * Sessions live in a {@link SessionStore} on disk (see `store.ts`); the ones this connection is working
 * with — created, loaded, resumed or forked, and not closed or deleted since — are *active*, held by
 * {@link ActiveSessions}. Each {@link AgentSession} is a write-through view of its stored record: every
 * change (mode, config, title, tool-call counter, activity time) is saved at once, every replayable
 * update is appended to the history as it is sent, and it keeps the one prompt turn that may be running.
 */
import { randomUUID } from "node:crypto";
import { type McpServer, RequestError, type SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import { CONFIG_OPTIONS, configValue, currentMode, initialState, STATE_MODE, STATE_TITLE, stateConfigKey } from "./controls.js";
import { type HistoryEntry, type SessionStore, STORE_FORMAT, type StoredSession } from "./store.js";

export type { HistoryEntry } from "./store.js";

/** What the session was set up with (by `session/new`, or by the latest load/resume/fork). */
export interface SessionSetup {
  cwd: string;
  mcpServers: McpServer[];
  additionalDirectories: string[];
}

/**
 * The updates that make up a session's history and that `session/load` replays: the conversation
 * (user, agent, thought and tool events). Control updates (modes, config options, commands, title) are
 * not history: their current state is sent when the session is activated.
 */
const REPLAYED_UPDATES: ReadonlySet<string> = new Set([
  "user_message_chunk",
  "agent_message_chunk",
  "agent_thought_chunk",
  "tool_call",
  "tool_call_update",
]);

/** The updates `session/load` replays for a history, in order: a prompt becomes one `user_message_chunk` per block. */
export function replayUpdates(history: readonly HistoryEntry[]): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const entry of history) {
    if (entry.kind === "user") {
      for (const block of entry.prompt) updates.push({ sessionUpdate: "user_message_chunk", content: block });
    } else {
      updates.push(entry.update);
    }
  }
  return updates;
}

/** The running prompt turn of a session. */
export class PromptTurn {
  private readonly cancelController = new AbortController();
  /** Aborted by `session/cancel`, by `$/cancel_request` for the prompt request, or when the connection closes. */
  readonly signal: AbortSignal;
  /** Resolves when the turn has ended (its answer is being sent). */
  readonly done: Promise<void>;
  private finish!: () => void;

  constructor(requestSignal: AbortSignal) {
    // (Not AbortSignal.any: it is missing before Node 20.3, and package.json allows any Node 20.)
    this.signal = this.cancelController.signal;
    if (requestSignal.aborted) this.cancelController.abort(requestSignal.reason);
    else requestSignal.addEventListener("abort", () => this.cancelController.abort(requestSignal.reason), { once: true });
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  /** Cancels the turn (the effect of `session/cancel`). */
  cancel(): void {
    this.cancelController.abort(new Error("session/cancel"));
  }

  /** @internal Marks the turn ended. */
  end(): void {
    this.finish();
  }
}

export class AgentSession {
  private turn: PromptTurn | undefined;
  private mcp: McpServer[];

  constructor(
    private readonly store: SessionStore,
    private readonly record_: StoredSession,
    mcpServers: McpServer[],
  ) {
    this.mcp = mcpServers;
  }

  get id(): string {
    return this.record_.sessionId;
  }

  /** The stored record (a live view: do not modify). */
  get stored(): Readonly<StoredSession> {
    return this.record_;
  }

  get setup(): SessionSetup {
    return { cwd: this.record_.cwd, mcpServers: this.mcp, additionalDirectories: this.record_.additionalDirectories };
  }

  get title(): string | undefined {
    const title = this.record_.state[STATE_TITLE];
    return typeof title === "string" ? title : undefined;
  }

  get updatedAt(): string {
    return this.record_.updatedAt;
  }

  get mode(): string {
    return currentMode(this.record_.state);
  }

  /** The current value of a config option. */
  config(configId: string): string | boolean | undefined {
    const option = CONFIG_OPTIONS.find((o) => o.id === configId);
    return option ? configValue(this.record_.state, option) : undefined;
  }

  /** Re-activation (load/resume): the MCP servers and additional directories the client sent this time. */
  reattach(mcpServers: McpServer[], additionalDirectories: string[]): void {
    this.mcp = mcpServers;
    this.record_.additionalDirectories = additionalDirectories;
    this.save();
  }

  setMode(modeId: string): void {
    this.record_.state[STATE_MODE] = modeId;
    this.touch();
  }

  setConfig(configId: string, value: string | boolean): void {
    this.record_.state[stateConfigKey(configId)] = value;
    this.touch();
  }

  setTitle(title: string): void {
    this.record_.state[STATE_TITLE] = title;
    this.touch();
  }

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
      throw RequestError.invalidRequest({ sessionId: this.id }, `session ${this.id} already has a prompt in progress`);
    }
    this.turn = new PromptTurn(requestSignal);
    return this.turn;
  }

  /** Ends `turn` if it is still the running one, and records the activity time. */
  endTurn(turn: PromptTurn): void {
    if (this.turn === turn) this.turn = undefined;
    turn.end();
    try {
      this.touch();
    } catch {
      // The record could not be saved (e.g. another agent process deleted the session meanwhile): the
      // turn is over either way, and its answer must still go out.
    }
  }

  /** Cancels the running turn, if any. Returns whether there was one. */
  cancel(): boolean {
    if (!this.turn) return false;
    this.turn.cancel();
    return true;
  }

  /** Cancels the running turn, if any, and waits until it has ended. */
  async cancelAndWait(): Promise<void> {
    const turn = this.turn;
    if (!turn) return;
    turn.cancel();
    await turn.done;
  }

  /** The next tool-call id of this session: `tool-1`, `tool-2`, … (ids never repeat within a session, forks included). */
  nextToolCallId(): string {
    this.record_.toolCalls += 1;
    this.save();
    return `tool-${this.record_.toolCalls}`;
  }

  /** Appends a prompt, or an update if it is one that history keeps ({@link REPLAYED_UPDATES}). */
  record(entry: HistoryEntry): void {
    if (entry.kind === "update" && !REPLAYED_UPDATES.has(entry.update.sessionUpdate)) return;
    this.store.append(this.id, entry);
  }

  private touch(): void {
    this.record_.updatedAt = new Date().toISOString();
    this.save();
  }

  private save(): void {
    this.store.write(this.record_);
  }
}

/** The active sessions of one agent connection, backed by a store. */
export class ActiveSessions {
  private readonly sessions = new Map<string, AgentSession>();

  constructor(readonly store: SessionStore) {}

  /** A fresh record with a new id for `setup`; `from` gives a fork its source's counters and state. */
  private newRecord(setup: SessionSetup, from?: StoredSession): StoredSession {
    const now = new Date().toISOString();
    const record: StoredSession = {
      format: STORE_FORMAT,
      sessionId: `sess-${randomUUID()}`,
      cwd: setup.cwd,
      additionalDirectories: setup.additionalDirectories,
      createdAt: now,
      updatedAt: now,
      toolCalls: from ? from.toolCalls : 0,
      state: from ? { ...from.state } : initialState(),
    };
    if (from) record.forkedFrom = from.sessionId;
    return record;
  }

  /** A new session (`session/new`), stored at once. */
  create(setup: SessionSetup): AgentSession {
    const record = this.newRecord(setup);
    this.store.create(record);
    return this.add(new AgentSession(this.store, record, setup.mcpServers));
  }

  /**
   * Activates a stored session (`session/load`, `session/resume`): the active one if it is already
   * active, else a new view of its record. Unknown → -32002.
   */
  activate(sessionId: string): AgentSession {
    const active = this.sessions.get(sessionId);
    if (active) return active;
    const record = this.stored(sessionId);
    return this.add(new AgentSession(this.store, record, []));
  }

  /** Copies a stored session into a new active one (`session/fork`); the source is not changed. */
  fork(sourceId: string, setup: SessionSetup): AgentSession {
    const source = this.stored(sourceId);
    const record = this.newRecord(setup, source);
    this.store.fork(source.sessionId, record);
    return this.add(new AgentSession(this.store, record, setup.mcpServers));
  }

  /** The stored record of a session (the active one's if active); unknown → -32002. */
  stored(sessionId: string): StoredSession {
    const active = this.sessions.get(sessionId);
    if (active) return active.stored as StoredSession;
    const record = this.store.read(sessionId);
    if (!record) throw RequestError.sessionNotFound(sessionId);
    return record;
  }

  get(sessionId: string): AgentSession | undefined {
    return this.sessions.get(sessionId);
  }

  /** The active session, or a -32002 "Resource not found" error with `data.sessionId`. */
  require(sessionId: string): AgentSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  }

  /** Deactivates a session (it stays in the store). */
  remove(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** Cancels every running turn (used when the connection closes). */
  cancelAll(): void {
    for (const session of this.sessions.values()) session.cancel();
  }

  get size(): number {
    return this.sessions.size;
  }

  private add(session: AgentSession): AgentSession {
    this.sessions.set(session.id, session);
    return session;
  }
}
