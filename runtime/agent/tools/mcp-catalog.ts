/**
 * The MCP resource and prompt commands: `resources <server>`, `resource <server> <uri>`,
 * `prompts <server>` and `prompt <server>::<name> {json}`, on the MCP servers the session was set up
 * with (the agent's MCP client, `../mcp.ts`). Each is a tool call (kind `read` for a resource, else
 * `other`), `in_progress`, then `completed` with the text as content and the MCP result as
 * rawOutput — or `failed` with `MCP error: …` when the server refused (the turn goes on).
 */
import type { StopReason } from "@agentclientprotocol/sdk/unstable";
import type { Step } from "../commands.js";
import { errorMessage, TurnCancelled, type TurnContext, textContent } from "../turn-context.js";

type CatalogStep = Extract<Step, { kind: "mcp-catalog" | "mcp-read" | "mcp-prompt" }>;

function titleOf(step: CatalogStep): string {
  if (step.kind === "mcp-catalog") return `${step.what} ${step.server}`;
  if (step.kind === "mcp-read") return `resource ${step.uri}`;
  return `prompt ${step.server}::${step.name}`;
}

export async function runMcpCatalog(turn: TurnContext, step: CatalogStep): Promise<StopReason | undefined> {
  const { session, signal } = turn;
  const toolCallId = session.nextToolCallId();
  const { kind, ...rawInput } = step;
  await turn.emit({
    sessionUpdate: "tool_call",
    toolCallId,
    title: titleOf(step),
    kind: kind === "mcp-read" ? "read" : "other",
    status: "pending",
    rawInput,
  });
  const servers = session.setup.mcpServers;
  const server = servers.find((s) => s.name === step.server);
  const mcp = turn.io.mcp;
  if (!server || !mcp?.listResources || !mcp.readResource || !mcp.listPrompts || !mcp.getPrompt) {
    const known = servers.map((s) => s.name).join(", ") || "none";
    await turn.failed(toolCallId, `not run: no MCP server named "${step.server}" in this session (servers: ${known})`);
    return;
  }
  await turn.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  return turn.interruptible(toolCallId, async () => {
    try {
      let text: string;
      let rawOutput: Record<string, unknown>;
      if (step.kind === "mcp-catalog" && step.what === "resources") {
        const resources = await turn.abortable(mcp.listResources!(server, signal));
        text = resources.map((r) => `${r.uri} ${r.name}${r.description ? `: ${r.description}` : ""}`).join("\n");
        rawOutput = { resources };
      } else if (step.kind === "mcp-catalog") {
        const prompts = await turn.abortable(mcp.listPrompts!(server, signal));
        text = prompts.map((p) => (p.description ? `${p.name}: ${p.description}` : p.name)).join("\n");
        rawOutput = { prompts };
      } else if (step.kind === "mcp-read") {
        const result = await turn.abortable(mcp.readResource!(server, step.uri, signal));
        text = result.contents.map((c) => ("text" in c ? String(c.text) : `[blob uri=${c.uri}]`)).join("\n");
        rawOutput = result as unknown as Record<string, unknown>;
      } else {
        const result = await turn.abortable(mcp.getPrompt!(server, step.name, step.arguments, signal));
        text = result.messages.map((m) => (m.content.type === "text" ? m.content.text : `[${m.content.type}]`)).join("\n");
        rawOutput = result as unknown as Record<string, unknown>;
      }
      await turn.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "completed", content: textContent(text), rawOutput });
    } catch (error) {
      if (error instanceof TurnCancelled) throw error;
      const message = errorMessage(error);
      await turn.failed(toolCallId, message.startsWith("MCP error") ? message : `MCP error: ${message}`);
    }
  });
}
