/**
 * Permission before a side effect: the `session/request_permission` every side-effecting tool
 * (`permission`, `edit`, `run`) sends once its tool call is announced, and how a refusal closes it.
 *
 * The outcome is always reported to the client as an `agent_message_chunk` (`permission <outcome>:
 * <title>[ (detail)]`). Rejected: a reject option, an unknown option, or an error answer (the turn goes
 * on). Cancelled: outcome `cancelled`, or `session/cancel` while waiting or racing with the answer (the
 * turn ends).
 */
import type { PermissionOption, StopReason, ToolCall } from "@agentclientprotocol/sdk/unstable";
import { errorMessage, messageChunk, TurnCancelled, type TurnContext } from "./turn-context.js";

/** The options every permission request offers. */
const PERMISSION_OPTIONS: readonly PermissionOption[] = [
  { optionId: "allow", name: "Allow once", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];

export type PermissionOutcome = "allowed" | "rejected" | "cancelled";

/** Asks permission for `call` (already announced with `tool_call`) and reports the outcome as a message. */
export async function askPermission(turn: TurnContext, call: ToolCall): Promise<PermissionOutcome> {
  const { session, signal, io } = turn;
  let outcome: PermissionOutcome;
  let detail = "";
  try {
    const response = await turn.abortable(
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
      detail = ` (request failed: ${errorMessage(error)})`;
    } else {
      outcome = "cancelled";
    }
  }
  if (signal.aborted) outcome = "cancelled";
  await turn.emit(messageChunk(`permission ${outcome}: ${call.title}${detail}`));
  return outcome;
}

/** Closes a tool call that was not allowed to run; a cancelled permission ends the turn. */
export async function notRun(turn: TurnContext, toolCallId: string, outcome: "rejected" | "cancelled"): Promise<StopReason | undefined> {
  if (outcome === "rejected") {
    await turn.failed(toolCallId, "not run: permission rejected");
    return;
  }
  await turn.failed(toolCallId, "not run: turn cancelled");
  return "cancelled";
}
