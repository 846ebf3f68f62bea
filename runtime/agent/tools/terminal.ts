/**
 * The terminal tool: `run <command> [args…]` in a terminal of the client (`terminal/*`), after
 * permission. Nothing runs locally: without `clientCapabilities.terminal: true` the tool call fails.
 *
 * Sequence: `terminal/create` (output capped at {@link TERMINAL_OUTPUT_LIMIT} bytes by the client),
 * `terminal/wait_for_exit`, `terminal/output`, `terminal/release`. Every terminal created is released,
 * whatever happens; a turn cancelled while it runs withdraws the pending request (`$/cancel_request`),
 * kills and releases the terminal (both fire-and-forget) and ends the turn.
 */
import { methods, type StopReason, type ToolCall, type ToolCallContent } from "@agentclientprotocol/sdk/unstable";
import { askPermission, notRun } from "../permission.js";
import { errorMessage, TurnCancelled, type TurnContext, textContent } from "../turn-context.js";

/** `outputByteLimit` of the terminals `run` creates. */
const TERMINAL_OUTPUT_LIMIT = 64 * 1024;

/** `run <command> [args…]`: an `execute` tool call whose content is the terminal and its output. */
export async function runCommand(turn: TurnContext, command: string, args: string[]): Promise<StopReason | undefined> {
  const { session, io } = turn;
  const toolCallId = session.nextToolCallId();
  const { cwd } = session.setup;
  const call: ToolCall = {
    toolCallId,
    title: `Run ${[command, ...args].join(" ")}`,
    kind: "execute",
    status: "pending",
    rawInput: { command, args, cwd },
  };
  await turn.emit({ sessionUpdate: "tool_call", ...call });
  if (io.clientCapabilities().terminal !== true) {
    await turn.failed(toolCallId, "not run: the client offers no terminal (clientCapabilities.terminal)");
    return;
  }
  const outcome = await askPermission(turn, call);
  if (outcome !== "allowed") return notRun(turn, toolCallId, outcome);
  let terminalId: string;
  try {
    ({ terminalId } = await turn.clientRequest(methods.client.terminal.create, {
      sessionId: session.id,
      command,
      args,
      cwd,
      outputByteLimit: TERMINAL_OUTPUT_LIMIT,
    }));
  } catch (error) {
    if (error instanceof TurnCancelled) {
      await turn.failed(toolCallId, "cancelled before the terminal started");
      return "cancelled";
    }
    await turn.failed(toolCallId, `not run: ${errorMessage(error)}`);
    return;
  }
  const ids = { sessionId: session.id, terminalId };
  const terminal: ToolCallContent = { type: "terminal", terminalId };
  let released = false;
  try {
    await turn.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress", content: [terminal] });
    const exit = await turn.clientRequest(methods.client.terminal.waitForExit, ids);
    const output = await turn.clientRequest(methods.client.terminal.output, ids);
    released = true;
    await turn.clientRequest(methods.client.terminal.release, ids);
    const ok = exit.exitCode === 0;
    await turn.emit({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: ok ? "completed" : "failed",
      content: [terminal, ...textContent(output.output)],
      rawOutput: { exitCode: exit.exitCode ?? null, signal: exit.signal ?? null, output: output.output, truncated: output.truncated },
    });
  } catch (error) {
    // Whatever happened, the terminal is released (the client keeps showing its output).
    if (error instanceof TurnCancelled) {
      if (!released) {
        void io.request(methods.client.terminal.kill, ids).catch(() => {});
        void io.request(methods.client.terminal.release, ids).catch(() => {});
      }
      await turn.failed(toolCallId, "cancelled: terminal killed");
      return "cancelled";
    }
    if (!released) void io.request(methods.client.terminal.release, ids).catch(() => {});
    await turn.failed(toolCallId, `failed: ${errorMessage(error)}`);
  }
}
