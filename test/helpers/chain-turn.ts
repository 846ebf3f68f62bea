/**
 * A raw client driving `cordon run --config` with a chain of proxies in front of the reference
 * agent, and one prompt turn summed up: its stop reason, its tool calls' final status and text, its
 * message chunks (for the MCP proxy chain tests).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { CORDON, NODE } from "./paths.js";
import { type Json, RawClient } from "./raw-client.js";

const CHAIN_DIR = mkdtempSync(join(tmpdir(), "cordon-chain-turn-"));

/** `cordon run` with a chain config of `proxies` in front of the reference agent (`--mcp mode`). */
export function chainClient(proxies: Json[], mode: string, env: Record<string, string> = {}): RawClient {
  const config = join(CHAIN_DIR, `chain-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(config, JSON.stringify({ proxies }));
  return new RawClient(NODE, [CORDON, "run", "--config", config, "--", NODE, CORDON, "reference-agent", "--mcp", mode], env);
}

export async function startChain(client: RawClient, clientCapabilities: Json = {}): Promise<Json> {
  const res = await client.request("initialize", { protocolVersion: 1, clientCapabilities });
  expect(res.error, client.stderr).toBeUndefined();
  return res.result;
}

export async function newChainSession(client: RawClient, cwd = CHAIN_DIR): Promise<string> {
  const res = await client.request("session/new", { cwd, mcpServers: [] });
  expect(res.error, client.stderr).toBeUndefined();
  return res.result.sessionId;
}

export interface Turn {
  stopReason: string;
  tools: { title: string; status: string; text: string }[];
  chunks: string[];
}

/** One prompt of text: what the client saw of it. */
export async function promptTurn(client: RawClient, sessionId: string, text: string): Promise<Turn> {
  const from = client.received.length;
  const id = `p-${Math.random()}`;
  client.send({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text }] } });
  const res = await client.waitFor((m) => m.id === id && !("method" in m), 30_000);
  expect(res.error, JSON.stringify(res.error) + client.stderr).toBeUndefined();
  const tools = new Map<string, { title: string; status: string; text: string }>();
  const chunks: string[] = [];
  for (const m of client.received.slice(from)) {
    if (m.method !== "session/update" || m.params.sessionId !== sessionId) continue;
    const u = m.params.update;
    if (u.sessionUpdate === "agent_message_chunk") chunks.push(u.content.text);
    if (u.sessionUpdate === "tool_call") tools.set(u.toolCallId, { title: u.title, status: u.status, text: "" });
    if (u.sessionUpdate === "tool_call_update" && tools.has(u.toolCallId)) {
      const t = tools.get(u.toolCallId)!;
      t.status = u.status ?? t.status;
      const content = u.content?.map((c: Json) => c.content?.text).join("\n");
      if (content) t.text = content;
    }
  }
  return { stopReason: res.result.stopReason, tools: [...tools.values()], chunks };
}
