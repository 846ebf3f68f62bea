/**
 * Cordon's bridge between the MCP TypeScript SDK's own client (streamable HTTP) and a real SDK
 * proxy (`mcp-catalog.wasm`, in the testing kit's host), wired in process the way a chain routes
 * them: proxy → bridge → the agent (played here: it answers `initialize` and `session/new`). The
 * bridge speaks the connection form here (`mcpForm: "connection"`), the one MCP-over-ACP form
 * that carries notifications both ways: the client's `notifications/initialized` reaches the
 * proxy's `onMcpNotification`, and the proxy's `notifyListChanged` reaches the client as
 * `notifications/resources/list_changed` on its SSE stream.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Json, loadFixture, mcpProxyUnderTest, type ProxyUnderTest, sides } from "../../sdk-as/test/harness.js";
import { createLogger } from "../log.js";
import type { LoadedComponent } from "../sandbox/component-loader.js";
import { McpBridgePeer } from "./bridge.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadFixture("mcp-catalog");
}, 180_000);

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** The proxy and the bridge wired together, with the test as the agent behind the bridge. */
async function wired(): Promise<{ p: ProxyUnderTest; toProxyFromClient: (m: Json) => Json[]; declaration: () => Promise<Json> }> {
  const p = await mcpProxyUnderTest(component);
  const bridge = new McpBridgePeer({ log: createLogger("error"), mcpForm: "connection" });
  closing.push(() => bridge.close());
  const fromBridgeToAgent: Json[] = [];
  let waiting: ((m: Json) => void) | null = null;
  /** What the proxy sends toward the agent goes into the bridge (plain, as the conductor delivers it). */
  const intoBridge = (out: Json[]) => {
    const s = sides(out);
    for (const m of [...s.toAgent, ...s.answers]) bridge.send(m as never);
  };
  await bridge.open({
    message: (value) => {
      const m = value as Json;
      if (m.method === "proxy/successor") {
        // toward the agent: answer initialize and session/new as an http-capable agent would
        const inner = m.params;
        if (inner.method === "initialize")
          bridge.send({
            jsonrpc: "2.0",
            id: m.id,
            result: { protocolVersion: 1, agentCapabilities: { mcpCapabilities: { http: true } }, authMethods: [] },
          } as never);
        else if (inner.method === "session/new") {
          fromBridgeToAgent.push(inner.params);
          bridge.send({ jsonrpc: "2.0", id: m.id, result: { sessionId: "sess-H" } } as never);
          waiting?.(inner.params);
        }
        return;
      }
      // toward the proxy, as if from its successor: requests and notifications enveloped, answers as they are
      if ("method" in m)
        intoBridge(
          p.deliver({
            jsonrpc: "2.0",
            ...(m.id !== undefined ? { id: m.id } : {}),
            method: "proxy/successor",
            params: { method: m.method, params: m.params },
          }),
        );
      else intoBridge(p.deliver(m));
    },
    malformed: () => {},
    closed: () => {},
  });
  bridge.send({ jsonrpc: "2.0", id: "i1", method: "proxy/initialize", params: { protocolVersion: 1 } } as never);
  const toProxyFromClient = (m: Json) => {
    const out = p.deliver(m);
    intoBridge(out);
    return sides(out).answers;
  };
  const declaration = () =>
    new Promise<Json>((resolve) => {
      waiting = (params) => resolve(params.mcpServers.find((s: Json) => s.name === "docs"));
      toProxyFromClient({ jsonrpc: "2.0", id: "new-1", method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    });
  await new Promise((r) => setImmediate(r)); // the bridge handles what it is sent in microtasks
  return { p, toProxyFromClient, declaration };
}

describe("the MCP SDK's client ↔ Cordon's HTTP bridge (connection form) ↔ an SDK proxy", () => {
  it("serves resources, and carries notifications both ways: initialized to the proxy, list_changed to the client", async () => {
    const { toProxyFromClient, declaration } = await wired();
    const docs = await declaration();
    expect(docs.type).toBe("http");
    const client = new Client({ name: "sdk-client", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(docs.url), {
      requestInit: { headers: Object.fromEntries(docs.headers.map((h: Json) => [h.name, h.value])) },
    });
    await client.connect(transport);
    closing.push(() => client.close());
    expect(client.getServerCapabilities()).toEqual({
      tools: { listChanged: true },
      resources: { listChanged: true },
      prompts: { listChanged: true },
    });
    const first = await client.listResources();
    expect(first.resources.map((r) => r.uri)).toEqual(["doc://readme", "doc://empty"]);
    const rest = await client.listResources({ cursor: first.nextCursor });
    expect(rest.resources.map((r) => r.uri)).toEqual(["doc://third", "doc://session/sess-H"]);
    expect((await client.readResource({ uri: "doc://empty" })).contents[0]).toMatchObject({ text: "read in sess-H via connection" });

    const changed = new Promise<string>((resolve) =>
      client.setNotificationHandler(ResourceListChangedNotificationSchema, (n) => resolve(n.method)),
    );
    // sent at once: the bridge keeps it until the client's SSE stream is open
    const [answer] = toProxyFromClient({ jsonrpc: "2.0", id: "x1", method: "_x/changed", params: { sessionId: "sess-H" } });
    expect(answer.result.told).toBe(1);
    expect(answer.result.notes).toBe("notifications/initialized sess-H connection ");
    expect(await changed).toBe("notifications/resources/list_changed");
  });
});
