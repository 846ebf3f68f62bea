/**
 * The simulated tools: `tool <title>` (runs at once) and `permission <title>` (runs only when the
 * client allows it). Nothing is executed; the tool call's updates are the whole effect:
 * `tool_call` {kind `execute`, status `pending`, rawInput {command: title}}, then `in_progress`, then
 * `completed` with content and rawOutput `ran <title>`.
 */
import type { StopReason, ToolCall } from "@agentclientprotocol/sdk/unstable";
import { askPermission, notRun } from "../permission.js";
import { type TurnContext, textContent } from "../turn-context.js";

/** `tool <title>`. */
export async function runTool(turn: TurnContext, title: string): Promise<void> {
  const toolCallId = turn.session.nextToolCallId();
  await turn.emit({ sessionUpdate: "tool_call", ...simulatedCall(toolCallId, title) });
  await runSimulated(turn, toolCallId, title);
}

/** `permission <title>`: the same tool call, after `session/request_permission`. */
export async function runPermission(turn: TurnContext, title: string): Promise<StopReason | undefined> {
  const toolCallId = turn.session.nextToolCallId();
  const call = simulatedCall(toolCallId, title);
  await turn.emit({ sessionUpdate: "tool_call", ...call });
  const outcome = await askPermission(turn, call);
  if (outcome !== "allowed") return notRun(turn, toolCallId, outcome);
  await runSimulated(turn, toolCallId, title);
}

function simulatedCall(toolCallId: string, title: string): ToolCall {
  return { toolCallId, title, kind: "execute", status: "pending", rawInput: { command: title } };
}

async function runSimulated(turn: TurnContext, toolCallId: string, title: string): Promise<void> {
  await turn.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  await turn.emit({
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: "completed",
    content: textContent(`ran ${title}`),
    rawOutput: { output: `ran ${title}` },
  });
}
