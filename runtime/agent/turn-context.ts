/**
 * What every step of a prompt turn shares: the session, the turn's cancellation signal and the way to
 * the client ({@link TurnIO}), with the helpers the tool families (`tools/*.ts`) build on.
 *
 * Invariants:
 * - Every update goes through {@link TurnContext.emit}, which records it in the session's history
 *   *before* sending it, so `session/load` replays exactly what was sent, in order.
 * - Cancellation is one mechanism: anything awaited through {@link TurnContext.abortable} rejects with
 *   {@link TurnCancelled} as soon as the turn's signal aborts (the awaited promise itself is not
 *   stopped; its outcome is ignored). Requests to the client sent with {@link TurnContext.clientRequest}
 *   are also withdrawn with `$/cancel_request`. `runTurn` turns a `TurnCancelled` into
 *   `stopReason: "cancelled"`, never an error.
 * - A tool call that has been announced is always closed: {@link TurnContext.interruptible} closes it
 *   as `failed` when the turn is cancelled during its work.
 */
import type {
  ClientCapabilities,
  ClientRequestMethod,
  ClientRequestParamsByMethod,
  ClientRequestResponsesByMethod,
  McpServer,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionUpdate,
  StopReason,
  ToolCallContent,
} from "@agentclientprotocol/sdk/unstable";
import type { CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { AgentSession } from "./session.js";

/** How a turn talks to the client. */
export interface TurnIO {
  /** Sends one `session/update` for the turn's session. */
  emit(update: SessionUpdate): Promise<void>;
  /** Sends `session/request_permission` and returns the client's answer. */
  requestPermission(params: RequestPermissionRequest): Promise<RequestPermissionResponse>;
  /**
   * Sends another request to the client (`fs/*`, `terminal/*`) and returns its result; when `signal`
   * aborts, the request is withdrawn with `$/cancel_request`.
   */
  request<M extends ClientRequestMethod>(
    method: M,
    params: ClientRequestParamsByMethod[M],
    signal?: AbortSignal,
  ): Promise<ClientRequestResponsesByMethod[M]>;
  /** What the client advertised in `initialize`. */
  clientCapabilities(): ClientCapabilities;
  /** Lines describing the connection for `info` (client info and capabilities). */
  describeConnection(): string[];
  /** The MCP client (`use tool`, `list tools`), for the servers the session was set up with. */
  mcp?: TurnMcp;
}

/** MCP access for one turn: `server` is a server given in the session's setup. */
export interface TurnMcp {
  listTools(server: McpServer, signal: AbortSignal): Promise<Tool[]>;
  callTool(server: McpServer, tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
  listResources?(server: McpServer, signal: AbortSignal): Promise<Resource[]>;
  readResource?(server: McpServer, uri: string, signal: AbortSignal): Promise<ReadResourceResult>;
  listPrompts?(server: McpServer, signal: AbortSignal): Promise<Prompt[]>;
  getPrompt?(server: McpServer, name: string, args: Record<string, string>, signal: AbortSignal): Promise<GetPromptResult>;
}

/** Thrown when the turn's signal aborts while a step is waiting. */
export class TurnCancelled extends Error {}

/** Text helpers for the updates the agent emits; every chunk ends with a newline. */
export const messageChunk = (text: string): SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  content: { type: "text", text: `${text}\n` },
});
export const thoughtChunk = (text: string): SessionUpdate => ({
  sessionUpdate: "agent_thought_chunk",
  content: { type: "text", text: `${text}\n` },
});
/** Tool-call content of one text block (no trailing newline added). */
export const textContent = (text: string): ToolCallContent[] => [{ type: "content", content: { type: "text", text } }];

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** One running turn: its session, its signal and its way to the client. */
export class TurnContext {
  constructor(
    readonly session: AgentSession,
    readonly signal: AbortSignal,
    readonly io: TurnIO,
  ) {}

  /** Records `update` in the session's history, then sends it. */
  async emit(update: SessionUpdate): Promise<void> {
    this.session.record({ kind: "update", update });
    await this.io.emit(update);
  }

  /** Closes a tool call as `failed` with one line of text. */
  failed(toolCallId: string, text: string): Promise<void> {
    return this.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: textContent(text) });
  }

  /** Runs a tool's work; if the turn is cancelled meanwhile, closes the tool call as failed and ends the turn. */
  async interruptible(toolCallId: string, work: () => Promise<void>): Promise<StopReason | undefined> {
    try {
      await work();
    } catch (error) {
      if (!(error instanceof TurnCancelled)) throw error;
      await this.failed(toolCallId, "cancelled");
      return "cancelled";
    }
  }

  /** A request to the client that the turn's cancellation withdraws (`$/cancel_request`) and stops waiting for. */
  clientRequest<M extends ClientRequestMethod>(
    method: M,
    params: ClientRequestParamsByMethod[M],
  ): Promise<ClientRequestResponsesByMethod[M]> {
    return this.abortable(this.io.request(method, params, this.signal));
  }

  /** Races `promise` against the turn's signal. */
  abortable<T>(promise: Promise<T>): Promise<T> {
    const { signal } = this;
    if (signal.aborted) {
      promise.catch(() => {});
      return Promise.reject(new TurnCancelled());
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(new TurnCancelled());
      signal.addEventListener("abort", onAbort, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      );
    });
  }

  /** Waits until the turn is cancelled (rejects with {@link TurnCancelled}). */
  untilAborted(): Promise<never> {
    return this.abortable(new Promise<never>(() => {}));
  }

  /** Pauses `ms` milliseconds; cancellation interrupts it (and clears the timer). */
  async sleep(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await this.abortable(new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))));
    } finally {
      clearTimeout(timer);
    }
  }
}
