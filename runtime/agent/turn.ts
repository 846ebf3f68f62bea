/**
 * Runs one prompt turn of the reference agent: executes the parsed {@link Step}s in order, emitting
 * `session/update`s and asking `session/request_permission` through the given {@link TurnIO}.
 *
 * Cancellation: the turn's signal is checked before every step and interrupts `wait`, `sleep` and a
 * pending permission request; once it is aborted no further step runs and the turn ends with
 * `stopReason: "cancelled"` (never an error).
 */
import {
  RequestError,
  type PermissionOption,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
  type StopReason,
  type ToolCallContent,
} from "@agentclientprotocol/sdk";
import { fakeSecret, helpText, type Step } from "./commands.js";
import type { AgentSession } from "./session.js";

/** How a turn talks to the client. */
export interface TurnIO {
  /** Sends one `session/update` for the turn's session. */
  emit(update: SessionUpdate): Promise<void>;
  /** Sends `session/request_permission` and returns the client's answer. */
  requestPermission(params: RequestPermissionRequest): Promise<RequestPermissionResponse>;
  /** Lines describing the connection for `info` (client info and capabilities). */
  describeConnection(): string[];
}

/** The options every `permission` request offers. */
export const PERMISSION_OPTIONS: readonly PermissionOption[] = [
  { optionId: "allow", name: "Allow once", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];

/** Text helpers for the updates the agent emits; every chunk ends with a newline. */
export const messageChunk = (text: string): SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  content: { type: "text", text: `${text}\n` },
});
export const thoughtChunk = (text: string): SessionUpdate => ({
  sessionUpdate: "agent_thought_chunk",
  content: { type: "text", text: `${text}\n` },
});
const textContent = (text: string): ToolCallContent[] => [{ type: "content", content: { type: "text", text } }];

/** Thrown internally when the turn's signal aborts while a step is waiting. */
class TurnCancelled extends Error {}

export async function runTurn(session: AgentSession, steps: readonly Step[], signal: AbortSignal, io: TurnIO): Promise<StopReason> {
  const emit = async (update: SessionUpdate): Promise<void> => {
    session.record({ kind: "update", update });
    await io.emit(update);
  };
  try {
    for (const step of steps) {
      if (signal.aborted) return "cancelled";
      const stop = await runStep(step);
      if (stop) return stop;
    }
    return signal.aborted ? "cancelled" : "end_turn";
  } catch (error) {
    if (error instanceof TurnCancelled) return "cancelled";
    throw error;
  }

  async function runStep(step: Step): Promise<StopReason | undefined> {
    switch (step.kind) {
      case "echo":
        await emit(messageChunk(`echo: ${step.text}`));
        return;
      case "usage":
        await emit(messageChunk(step.text));
        return;
      case "think":
        await emit(thoughtChunk(step.text));
        return;
      case "secret":
        await emit(messageChunk(`here is a fake ${step.flavour} API key: ${fakeSecret(step.flavour)}`));
        return;
      case "help":
        await emit(messageChunk(helpText()));
        return;
      case "info":
        await emit(messageChunk(describeSession().join("\n")));
        return;
      case "tool": {
        const toolCallId = session.nextToolCallId();
        await emit({ sessionUpdate: "tool_call", ...toolCall(toolCallId, step.title) });
        await runTool(toolCallId, step.title);
        return;
      }
      case "permission":
        return runPermission(step.title);
      case "wait":
        await emit(messageChunk("waiting for session/cancel"));
        await untilAborted();
        return "cancelled";
      case "sleep":
        await sleep(step.ms);
        return;
      case "stop":
        return step.reason;
      case "error":
        throw new RequestError(-32603, step.message, { command: "error" });
    }
  }

  function toolCall(toolCallId: string, title: string) {
    return { toolCallId, title, kind: "execute" as const, status: "pending" as const, rawInput: { command: title } };
  }

  async function runTool(toolCallId: string, title: string): Promise<void> {
    await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
    await emit({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "completed",
      content: textContent(`ran ${title}`),
      rawOutput: { output: `ran ${title}` },
    });
  }

  async function runPermission(title: string): Promise<StopReason | undefined> {
    const toolCallId = session.nextToolCallId();
    const call = toolCall(toolCallId, title);
    await emit({ sessionUpdate: "tool_call", ...call });
    let outcome: "allowed" | "rejected" | "cancelled";
    let detail = "";
    try {
      const response = await abortable(
        io.requestPermission({ sessionId: session.id, toolCall: call, options: [...PERMISSION_OPTIONS] }),
      );
      if (response.outcome.outcome === "cancelled") {
        outcome = "cancelled";
      } else {
        const optionId = response.outcome.optionId;
        const option = PERMISSION_OPTIONS.find((o) => o.optionId === optionId);
        outcome = option?.kind.startsWith("allow") ? "allowed" : "rejected";
        detail = option ? ` (option ${optionId})` : ` (unknown option ${JSON.stringify(optionId)})`;
      }
    } catch (error) {
      if (!(error instanceof TurnCancelled) && !signal.aborted) {
        // The client could not answer (e.g. -32601): treat it as a refusal and carry on with the turn.
        outcome = "rejected";
        detail = ` (request failed: ${error instanceof Error ? error.message : String(error)})`;
      } else {
        outcome = "cancelled";
      }
    }
    // A session/cancel that raced with a "selected" answer still cancels the turn.
    if (signal.aborted) outcome = "cancelled";
    await emit(messageChunk(`permission ${outcome}: ${title}${detail}`));
    switch (outcome) {
      case "allowed":
        await runTool(toolCallId, title);
        return;
      case "rejected":
        await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: textContent("not run: permission rejected") });
        return;
      case "cancelled":
        await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: textContent("not run: turn cancelled") });
        return "cancelled";
    }
  }

  function describeSession(): string[] {
    const { cwd, mcpServers, additionalDirectories } = session.setup;
    const servers = mcpServers.map((s) => `${s.name} (${"type" in s ? s.type : "stdio"})`);
    return [
      `session ${session.id}`,
      `cwd ${cwd}`,
      `additionalDirectories ${additionalDirectories.length ? additionalDirectories.join(", ") : "(none)"}`,
      `mcpServers ${servers.length ? servers.join(", ") : "(none)"}`,
      ...io.describeConnection(),
    ];
  }

  /** Races `promise` against the turn's signal. */
  function abortable<T>(promise: Promise<T>): Promise<T> {
    if (signal.aborted) return Promise.reject(new TurnCancelled());
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

  function untilAborted(): Promise<never> {
    return abortable(new Promise<never>(() => {}));
  }

  async function sleep(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await abortable(new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))));
    } finally {
      clearTimeout(timer);
    }
  }
}
