/**
 * The MCP tools: `use tool <server>::<tool> {json}` and `list tools <server>`, on the MCP servers the
 * session was set up with (connected on first use by the agent's MCP client, `../mcp.ts`).
 *
 * Each is a tool call (kind `other`, rawInput {server, tool?, arguments?}), `in_progress`, then
 * `completed` with the result's text as content and the MCP result as rawOutput — `failed` when the
 * tool answered `isError`, or with `MCP error: …` when the server could not be reached or refused the
 * request (the turn goes on). No permission is asked: the client chose the servers.
 */
import type { StopReason } from "@agentclientprotocol/sdk/unstable";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Step } from "../commands.js";
import { errorMessage, TurnCancelled, type TurnContext, textContent } from "../turn-context.js";

/** `use tool …` (`mcp-call`) and `list tools …` (`mcp-list`). */
export async function runMcp(turn: TurnContext, step: Extract<Step, { kind: "mcp-call" | "mcp-list" }>): Promise<StopReason | undefined> {
  const { session, signal } = turn;
  const toolCallId = session.nextToolCallId();
  const call = step.kind === "mcp-call";
  const title = call ? `${step.server}::${step.tool}` : `list tools ${step.server}`;
  const rawInput = call ? { server: step.server, tool: step.tool, arguments: step.arguments } : { server: step.server };
  await turn.emit({ sessionUpdate: "tool_call", toolCallId, title, kind: "other", status: "pending", rawInput });
  const servers = session.setup.mcpServers;
  const server = servers.find((s) => s.name === step.server);
  if (!server || !turn.io.mcp) {
    const known = servers.map((s) => s.name).join(", ") || "none";
    await turn.failed(toolCallId, `not run: no MCP server named "${step.server}" in this session (servers: ${known})`);
    return;
  }
  const mcp = turn.io.mcp;
  await turn.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  return turn.interruptible(toolCallId, async () => {
    try {
      if (call) {
        const result = await turn.abortable(mcp.callTool(server, step.tool, step.arguments, signal));
        await turn.emit({
          sessionUpdate: "tool_call_update",
          toolCallId,
          status: result.isError ? "failed" : "completed",
          content: textContent(mcpText(result.content)),
          rawOutput: result as unknown as Record<string, unknown>,
        });
      } else {
        const tools = await turn.abortable(mcp.listTools(server, signal));
        const text = tools.map((t) => (t.description ? `${t.name}: ${t.description}` : t.name)).join("\n");
        await turn.emit({
          sessionUpdate: "tool_call_update",
          toolCallId,
          status: "completed",
          content: textContent(text),
          rawOutput: { tools },
        });
      }
    } catch (error) {
      if (error instanceof TurnCancelled) throw error;
      const message = errorMessage(error);
      await turn.failed(toolCallId, message.startsWith("MCP error") ? message : `MCP error: ${message}`);
    }
  });
}

/** The text of an MCP result's content: text blocks as they are, other blocks described on a line. */
function mcpText(content: CallToolResult["content"] | undefined): string {
  return (content ?? [])
    .map((block) => {
      switch (block.type) {
        case "text":
          return block.text;
        case "resource":
          return "text" in block.resource ? block.resource.text : `[resource uri=${block.resource.uri}]`;
        case "resource_link":
          return `[resource_link uri=${block.uri}]`;
        case "image":
        case "audio":
          return `[${block.type} mimeType=${block.mimeType}]`;
        default:
          return JSON.stringify(block);
      }
    })
    .join("\n");
}
