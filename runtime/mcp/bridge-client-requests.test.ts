/**
 * A server's requests to the agent's MCP client, and notifications both ways, through Cordon's
 * bridge for an agent that speaks plain MCP: the MCP TypeScript SDK's own `Client` (declaring
 * `roots`, `sampling` and `elicitation`, with its request handlers) over loopback HTTP and over a
 * stdio `cordon mcp-bridge` process, the bridge in its default form choice, and a real SDK proxy
 * (`mcp-asker.wasm`, in the testing kit's host) wired in process (test/helpers/bridged-sdk-proxy.ts).
 * The bridge speaks the connection form to it (the SDK answers `mcp/connect`): the only
 * MCP-over-ACP form that carries a server's requests and its notifications outside a request.
 * The grants these requests need are the conductor's (runtime/routing/rules/mcp-client.ts); here
 * there is no conductor, so none is checked.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Json, loadFixture } from "../../sdk-as/test/harness.js";
import { bridgedProxy } from "../../test/helpers/bridged-sdk-proxy.js";
import type { LoadedComponent } from "../sandbox/component-loader.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadFixture("mcp-asker");
}, 180_000);

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** The transport the agent would open for the bridge's rewritten declaration. */
function transportFor(declaration: Json): Transport {
  if (declaration.type === "http") {
    return new StreamableHTTPClientTransport(new URL(declaration.url), {
      requestInit: { headers: Object.fromEntries(declaration.headers.map((h: Json) => [h.name, h.value])) },
    });
  }
  return new StdioClientTransport({
    command: declaration.command,
    args: declaration.args,
    env: { ...(process.env as Record<string, string>), ...Object.fromEntries(declaration.env.map((v: Json) => [v.name, v.value])) },
    stderr: "ignore",
  });
}

const text = (result: unknown) => ((result as CallToolResult).content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("\n");

describe.each([
  ["loopback HTTP", { http: true }],
  ["a stdio cordon mcp-bridge", {}],
])("the MCP SDK's Client ↔ Cordon's bridge over %s ↔ an SDK proxy", (_name, agentMcp) => {
  it("the server's roots/list, sampling, elicitation and ping reach the client's handlers; list_changed both ways", async () => {
    const { bridge, declaration } = await bridgedProxy(component, agentMcp);
    closing.push(() => bridge.close());
    const asker = await declaration("asker");
    expect(asker.type ?? "stdio").toBe("http" in agentMcp ? "http" : "stdio");

    const client = new Client(
      { name: "agent-client", version: "1.0.0" },
      { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} } },
    );
    const sampled: Json[] = [];
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: "file:///home/u/project", name: "project" }] }));
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      sampled.push(request.params);
      return { role: "assistant", content: { type: "text", text: "the model's words" }, model: "agent-model", stopReason: "endTurn" };
    });
    client.setRequestHandler(ElicitRequestSchema, (request) => ({
      action: "accept",
      content: { name: `Ada (asked: ${(request.params as Json).message})` },
    }));
    await client.connect(transportFor(asker));
    closing.push(() => client.close());
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: true } });

    expect(text(await client.callTool({ name: "roots", arguments: {} }))).toBe(
      'roots/list in sess-H: {"roots":[{"uri":"file:///home/u/project","name":"project"}]}',
    );
    const sample = await client.callTool({ name: "sample", arguments: { text: "Summarise the plan" } });
    const said = text(sample);
    const colon = said.indexOf(": ");
    expect([said.slice(0, colon), JSON.parse(said.slice(colon + 2))]).toEqual([
      "sampling/createMessage in sess-H",
      { role: "assistant", content: { type: "text", text: "the model's words" }, model: "agent-model", stopReason: "endTurn" },
    ]);
    expect(sampled).toEqual([{ messages: [{ role: "user", content: { type: "text", text: "Summarise the plan" } }], maxTokens: 64 }]);
    expect(text(await client.callTool({ name: "elicit", arguments: { question: "Your name?" } }))).toBe(
      'elicitation/create in sess-H: {"action":"accept","content":{"name":"Ada (asked: Your name?)"}}',
    );
    expect(text(await client.callTool({ name: "ping", arguments: {} }))).toBe("ping in sess-H: {}");

    // The server's list_changed, outside any request of the client's.
    const changed = new Promise<string>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => resolve(n.method)),
    );
    expect(text(await client.callTool({ name: "grow", arguments: {} }))).toBe("told 1");
    expect(await changed).toBe("notifications/tools/list_changed");
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("grown6");
    // The client's notifications reach the server.
    await client.sendRootsListChanged();
    expect(text(await client.callTool({ name: "notes", arguments: {} }))).toBe(
      "notifications/initialized\nnotifications/roots/list_changed",
    );
  }, 60_000);

  it("a client that declared no sampling is sent none: the tool says why", async () => {
    const { bridge, declaration } = await bridgedProxy(component, agentMcp);
    closing.push(() => bridge.close());
    const client = new Client({ name: "plain-client", version: "1.0.0" }, { capabilities: {} });
    await client.connect(transportFor(await declaration("asker")));
    closing.push(() => client.close());
    const sample = (await client.callTool({ name: "sample", arguments: { text: "x" } })) as CallToolResult;
    expect(sample.isError).toBe(true);
    expect(text(sample)).toBe(
      "the agent's MCP client did not declare the sampling capability in initialize, so it cannot be sent sampling/createMessage",
    );
  }, 60_000);
});
