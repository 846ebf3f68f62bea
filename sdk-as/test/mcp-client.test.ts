// A proxy's MCP server sending the agent's MCP client requests of its own (roots/list,
// sampling/createMessage, elicitation/create, ping) over a connection, only for capabilities the
// client declared, with the answer (or Cordon's refusal, in words) back in onMcpClientReply; and
// list_changed, and the client's notifications — through the real .wasm (fixtures/mcp-asker.ts).
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import {
  answerMcpClient,
  type Json,
  loadFixture,
  type McpClientAsk,
  mcpClientAsks,
  mcpConnect,
  mcpProxyUnderTest,
  mcpRequest,
  newSession,
  ProxyUnderTest,
  sides,
  toolText,
} from "./harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadFixture("mcp-asker");
}, 180_000);

/** A proxy with one session, a connection to its server, and the client's MCP initialize. */
async function connected(capabilities: Json): Promise<{ p: ProxyUnderTest; connectionId: string; serverId: string }> {
  const p = await mcpProxyUnderTest(component);
  const [server] = newSession(p, "sess-C");
  const connectionId = mcpConnect(p, server.serverId);
  mcpRequest(p, { connectionId }, "initialize", { protocolVersion: "2025-06-18", capabilities, clientInfo: { name: "c", version: "1" } });
  return { p, connectionId, serverId: server.serverId };
}

/** A tools/call the proxy holds while it asks the client: the held call's id and the request toward the agent. */
function heldCall(p: ProxyUnderTest, connectionId: string, tool: string, args: Json = {}): { callId: string; asked: McpClientAsk } {
  const callId = `call-${p.nextId()}`;
  const out = p.deliver(
    ProxyUnderTest.fromAgent(
      { method: "mcp/message", params: { connectionId, method: "tools/call", params: { name: tool, arguments: args } } },
      callId,
    ),
  );
  expect(sides(out).answers, JSON.stringify(out)).toEqual([]);
  const asks = mcpClientAsks(out);
  expect(asks).toHaveLength(1);
  return { callId, asked: asks[0] };
}

/** Delivers the answer to the proxy's request and returns the text of the tool call it answered. */
function answerAsk(
  p: ProxyUnderTest,
  asked: McpClientAsk,
  callId: string,
  outcome: { result: unknown } | { error: Json },
): { text: string; isError: boolean } {
  const out = answerMcpClient(p, asked, outcome);
  const answer = out.find((m) => m.id === callId);
  expect(answer, JSON.stringify(out)).toBeDefined();
  return { text: toolText(answer.result), isError: answer.result.isError === true };
}

describe("requests from a server to the agent's MCP client", () => {
  it("roots/list, sampling/createMessage, elicitation/create and ping go over the connection; answers come back to the hook", async () => {
    const { p, connectionId } = await connected({ roots: { listChanged: true }, sampling: {}, elicitation: {} });
    const roots = heldCall(p, connectionId, "roots");
    expect(roots.asked).toEqual({ id: roots.asked.id, connectionId, method: "roots/list", params: {} });
    expect(answerAsk(p, roots.asked, roots.callId, { result: { roots: [{ uri: "file:///w", name: "w" }] } }).text).toBe(
      'roots/list in sess-C: {"roots":[{"uri":"file:///w","name":"w"}]}',
    );

    const sample = heldCall(p, connectionId, "sample", { text: 'say "hi"' });
    expect(sample.asked).toMatchObject({
      connectionId,
      method: "sampling/createMessage",
      params: { messages: [{ role: "user", content: { type: "text", text: 'say "hi"' } }], maxTokens: 64 },
    });
    const model = { role: "assistant", content: { type: "text", text: "hi" }, model: "m", stopReason: "endTurn" };
    expect(answerAsk(p, sample.asked, sample.callId, { result: model }).text).toBe(
      `sampling/createMessage in sess-C: ${JSON.stringify(model)}`,
    );

    const elicit = heldCall(p, connectionId, "elicit", { question: "Name?" });
    expect(elicit.asked.method).toBe("elicitation/create");
    expect(elicit.asked.params?.message).toBe("Name?");
    expect(answerAsk(p, elicit.asked, elicit.callId, { error: { code: -32601, message: "Method not found" } })).toEqual({
      text: "elicitation/create failed: Method not found",
      isError: true,
    });

    const ping = heldCall(p, connectionId, "ping");
    expect(ping.asked).toEqual({ id: ping.asked.id, connectionId, method: "ping" });
    expect(answerAsk(p, ping.asked, ping.callId, { result: {} }).text).toBe("ping in sess-C: {}");
  });

  it("Cordon's refusal for a missing grant reaches the hook in words, naming the grant", async () => {
    const { p, connectionId } = await connected({ sampling: {}, roots: {} });
    const sample = heldCall(p, connectionId, "sample", { text: "x" });
    const refusal = {
      error: { code: -32600, message: "refused", data: { cordon: { failure: "refused", gate: "mcp-client", grant: "mcp:sampling" } } },
    };
    expect(answerAsk(p, sample.asked, sample.callId, refusal)).toEqual({
      text: "sampling/createMessage failed: grant mcp:sampling to this proxy to let it have the agent's model write for it (MCP sampling)",
      isError: true,
    });
  });

  it("sends nothing for a capability the client did not declare, and nothing in the connectionless form", async () => {
    const { p, connectionId, serverId } = await connected({ roots: {} });
    const call = (target: Json, name: string, args: Json = {}) => mcpRequest(p, target as never, "tools/call", { name, arguments: args });
    const sample = call({ connectionId }, "sample", { text: "x" });
    expect(sides(sample.others).toAgent).toEqual([]);
    expect(toolText(sample.result!)).toBe(
      "the agent's MCP client did not declare the sampling capability in initialize, so it cannot be sent sampling/createMessage",
    );
    expect(toolText(call({ connectionId }, "elicit", { question: "q" }).result!)).toContain("did not declare the elicitation capability");
    const connectionless = call({ serverId }, "roots");
    expect(sides(connectionless.others).toAgent).toEqual([]);
    expect(toolText(connectionless.result!)).toBe("no MCP connection: the connectionless form carries no requests to the client");
  });

  it("list_changed goes to the connections of the session; the client's notifications reach the proxy", async () => {
    const { p, connectionId, serverId } = await connected({ roots: { listChanged: true } });
    const fromAgent = ProxyUnderTest.fromAgent;
    p.deliver(fromAgent({ method: "mcp/message", params: { connectionId, method: "notifications/initialized" } }));
    p.deliver(fromAgent({ method: "mcp/message", params: { connectionId, method: "notifications/roots/list_changed" } }));
    const grow = mcpRequest(p, { connectionId }, "tools/call", { name: "grow", arguments: {} });
    expect(toolText(grow.result!)).toBe("told 1");
    expect(sides(grow.others).toAgent).toEqual([
      { jsonrpc: "2.0", method: "mcp/message", params: { connectionId, method: "notifications/tools/list_changed" } },
    ]);
    expect(mcpRequest(p, { serverId }, "tools/list", {}).result!.tools.map((t: Json) => t.name)).toContain("grown6");
    expect(toolText(mcpRequest(p, { connectionId }, "tools/call", { name: "notes", arguments: {} }).result!)).toBe(
      "notifications/initialized\nnotifications/roots/list_changed",
    );
  });
});
