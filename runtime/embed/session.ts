/**
 * One ACP session of a {@link Connection}: prompting, its modes and config options, and what the
 * agent has told the client about it (kept current from the agent's updates).
 */
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { checkConfigValue, checkMode, checkPromptContent } from "./capabilities.js";
import { AbortError, InvalidRequestError } from "./errors.js";
import { type PromptEvent, PromptRun, ToolCallTracker, type ToolCallView, toEvent } from "./prompt-stream.js";
import type { RequestOptions } from "./rpc.js";

/** What a prompt may be: a string (one text block), one content block, or several. */
export type PromptInput = string | acp.ContentBlock | acp.ContentBlock[];

/** @internal What a session needs from its connection. */
export interface SessionHost {
  readonly agentCapabilities: acp.AgentCapabilities;
  /** Throws if the connection is closed or closing. */
  ensureOpen(): void;
  call<R, T = R>(method: string, params: unknown, options?: RequestOptions & { onResult?: (result: R) => T }): Promise<T>;
  notify(method: string, params: unknown): void;
  closeSession(sessionId: string, options?: RequestOptions): Promise<void>;
  /** Where a prompt run's reader says it fell behind or caught up (backpressure toward the chain). */
  readonly readPressure?: { set(reader: object, behind: boolean): void };
}

/** How the session was set up, as answered by the agent. */
export interface SessionSetup {
  sessionId: string;
  cwd: string;
  modes?: acp.SessionModeState | null;
  configOptions?: acp.SessionConfigOption[] | null;
  /** MCP servers that were offered to the agent. */
  mcpServers: acp.McpServer[];
  /** MCP servers left out because the agent does not accept their transport. */
  omittedMcpServers: acp.McpServer[];
}

export class Session {
  /** The session id. */
  readonly id: string;
  /** The session's working directory. */
  readonly cwd: string;
  /** MCP servers offered to the agent for this session. */
  readonly mcpServers: readonly acp.McpServer[];
  /** MCP servers that were not offered because the agent does not accept their transport. */
  readonly omittedMcpServers: readonly acp.McpServer[];
  /** Events the agent sent before answering the setup request: for `loadSession`, the replayed conversation, in order. */
  readonly history: PromptEvent[] = [];
  private modeState: acp.SessionModeState | null;
  private options: acp.SessionConfigOption[] | null;
  private availableCommands: acp.AvailableCommand[] = [];
  private info: { title?: string | null; updatedAt?: string | null } = {};
  private readonly tools = new ToolCallTracker();
  private readonly listeners = new Set<(event: PromptEvent) => void>();
  private run: PromptRun | null = null;
  private turn: AbortController | null = null;
  private ended = false;
  private settingUp = true;

  /** @internal Created by the connection. */
  constructor(
    private readonly host: SessionHost,
    setup: SessionSetup,
  ) {
    this.id = setup.sessionId;
    this.cwd = setup.cwd;
    this.modeState = setup.modes ?? null;
    this.options = setup.configOptions ?? null;
    this.mcpServers = setup.mcpServers;
    this.omittedMcpServers = setup.omittedMcpServers;
  }

  /** The modes the session announced with the current one, or null if it announced none. */
  get modes(): acp.SessionModeState | null {
    return this.modeState && { ...this.modeState, availableModes: [...this.modeState.availableModes] };
  }

  /** The current mode id, if the session has modes. */
  get currentModeId(): string | undefined {
    return this.modeState?.currentModeId;
  }

  /** The config options the session announced, with current values, or null if none. */
  get configOptions(): acp.SessionConfigOption[] | null {
    return this.options && [...this.options];
  }

  /** The slash commands the agent last said it offers. */
  get commands(): acp.AvailableCommand[] {
    return [...this.availableCommands];
  }

  /** The session's title, if the agent reported one. */
  get title(): string | null | undefined {
    return this.info.title;
  }

  /** When the agent last said the session changed, if it did. */
  get updatedAt(): string | null | undefined {
    return this.info.updatedAt;
  }

  /** Every tool call of this session so far (this connection's view), with its latest state. */
  get toolCalls(): ToolCallView[] {
    return this.tools.all();
  }

  /** Whether a prompt turn is running. */
  get busy(): boolean {
    return this.run !== null;
  }

  /** The running turn, if any. */
  get currentRun(): PromptRun | null {
    return this.run;
  }

  /** Whether the session was closed or deleted through this connection. */
  get closed(): boolean {
    return this.ended;
  }

  /**
   * Sends a prompt and returns the running turn: iterate it for typed events ending with the stop
   * reason, take `.text()`, or await `.result`. `signal` cancels the turn (`session/cancel`; the
   * run ends with stop reason `cancelled` once the agent stops, and pending permission requests
   * are answered `cancelled`).
   *
   * Throws before anything is sent — {@link UnsupportedError} for content the agent did not
   * advertise, {@link InvalidRequestError} while another turn runs in this session or after it was
   * closed, {@link AbortError} if `signal` has already fired, `ConnectionClosedError` after close.
   */
  prompt(input: PromptInput, options: { signal?: AbortSignal } = {}): PromptRun {
    this.host.ensureOpen();
    if (this.ended) throw new InvalidRequestError(`session ${this.id} is closed; nothing was sent`);
    if (this.run) throw new InvalidRequestError(`session ${this.id} is already running a prompt turn (one at a time); nothing was sent`);
    const blocks: acp.ContentBlock[] = typeof input === "string" ? [{ type: "text", text: input }] : Array.isArray(input) ? input : [input];
    if (blocks.length === 0) throw new InvalidRequestError("a prompt needs at least one content block; nothing was sent");
    checkPromptContent(blocks, this.host.agentCapabilities);
    if (options.signal?.aborted) throw new AbortError("the prompt was aborted before it was sent");

    const turn = new AbortController();
    const run = new PromptRun(() => this.cancel(), this.host.readPressure);
    this.run = run;
    this.turn = turn;
    const onAbort = () => this.cancel();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const end = () => {
      options.signal?.removeEventListener("abort", onAbort);
      if (this.run === run) {
        this.run = null;
        this.turn = null;
      }
    };
    this.host
      .call<acp.PromptResponse>(
        "session/prompt",
        { sessionId: this.id, prompt: blocks },
        {
          onResult: (response) => {
            // Synchronously, so the stop event follows the turn's updates and precedes anything later.
            const usage = response && typeof response === "object" && response.usage ? { usage: response.usage } : {};
            this.emit({ type: "stop", stopReason: response.stopReason, ...usage, response });
            end();
            return response;
          },
        },
      )
      .catch((error: Error) => {
        end();
        run.fail(error);
      });
    return run;
  }

  /**
   * Cancels the running turn, if any: pending permission requests of this session are answered
   * `cancelled` and `session/cancel` is sent. The turn ends when the agent answers (`cancelled`).
   */
  cancel(): void {
    const turn = this.turn;
    if (!turn || turn.signal.aborted) return;
    turn.abort();
    this.host.notify("session/cancel", { sessionId: this.id });
  }

  /** @internal Fires when the running turn is cancelled (permission requests withdraw on it). */
  get turnSignal(): AbortSignal | undefined {
    return this.turn?.signal;
  }

  /**
   * Switches the session's mode. Throws before sending unless the session announced modes and
   * `modeId` is one of them.
   */
  async setMode(modeId: string, options: RequestOptions = {}): Promise<void> {
    this.host.ensureOpen();
    checkMode(this.modeState, modeId);
    await this.host.call(
      "session/set_mode",
      { sessionId: this.id, modeId },
      {
        ...options,
        onResult: () => {
          if (this.modeState) this.modeState = { ...this.modeState, currentModeId: modeId };
        },
      },
    );
  }

  /**
   * Sets a config option. Throws before sending unless the session announced the option and the
   * value is valid for it (a select: one of its values; a boolean: a boolean). Resolves with the
   * whole set as the agent answers it (also kept in {@link Session.configOptions}).
   */
  async setConfigOption(configId: string, value: string | boolean, options: RequestOptions = {}): Promise<acp.SessionConfigOption[]> {
    this.host.ensureOpen();
    const params = checkConfigValue(this.options, this.id, configId, value);
    return this.host.call<acp.SetSessionConfigOptionResponse, acp.SessionConfigOption[]>("session/set_config_option", params, {
      ...options,
      onResult: (response) => {
        if (response && Array.isArray(response.configOptions)) this.options = response.configOptions;
        return this.configOptions ?? [];
      },
    });
  }

  /** Closes the session on the agent (`session/close`; needs the agent's `sessionCapabilities.close`). */
  close(options: RequestOptions = {}): Promise<void> {
    return this.host.closeSession(this.id, options);
  }

  /**
   * Calls `listener` with every event of this session from now on — during prompts (up to and
   * including each turn's `stop`) and between them (a mode change, a title, commands). Returns the
   * function that removes it.
   */
  onEvent(listener: (event: PromptEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** @internal A `session/update` for this session. */
  update(update: unknown): void {
    const event = toEvent(update, this.tools);
    this.apply(event);
    this.emit(event);
  }

  /** @internal An event that is not an update (a permission outcome). */
  emit(event: PromptEvent): void {
    if (this.settingUp) this.history.push(event);
    this.run?.push(event);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's bug must not break the session.
      }
    }
  }

  /** @internal The tool call a permission request is about, merged with what is known of it. */
  previewToolCall(toolCall: unknown): ToolCallView {
    return this.tools.preview(toolCall && typeof toolCall === "object" ? (toolCall as Record<string, unknown>) : {});
  }

  /** @internal Setup answered: what came with the answer replaces what the session was created with. */
  setupAnswered(
    result: { modes?: acp.SessionModeState | null; configOptions?: acp.SessionConfigOption[] | null } | null | undefined,
  ): void {
    if (result?.modes !== undefined) this.modeState = result.modes;
    if (result?.configOptions !== undefined) this.options = result.configOptions;
    this.settingUp = false;
  }

  /** @internal The session was closed or deleted, or the connection ended. */
  markClosed(): void {
    this.ended = true;
  }

  private apply(event: PromptEvent): void {
    switch (event.type) {
      case "mode":
        if (this.modeState) this.modeState = { ...this.modeState, currentModeId: event.modeId };
        break;
      case "config":
        this.options = event.configOptions;
        break;
      case "commands":
        this.availableCommands = event.commands;
        break;
      case "session_info":
        if ("title" in event) this.info.title = event.title;
        if ("updatedAt" in event) this.info.updatedAt = event.updatedAt;
        break;
    }
  }
}
