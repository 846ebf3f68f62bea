/**
 * Cordon's bridge between the MCP TypeScript SDK's own client (streamable HTTP) and a real SDK
 * proxy (`mcp-catalog.wasm`, in the testing kit's host), wired in process the way a chain routes
 * them (test/helpers/bridged-sdk-proxy.ts). The bridge speaks the connection form to the SDK proxy
 * (it answers `mcp/connect`), the MCP-over-ACP form that carries notifications both ways: the
 * client's `notifications/initialized` reaches the proxy's `onMcpNotification`, and the proxy's
 * `notifyListChanged` reaches the client as `notifications/resources/list_changed` on its SSE stream.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Json, loadFixture } from "../../sdk-as/test/harness.js";
import { bridgedProxy } from "../../test/helpers/bridged-sdk-proxy.js";
import type { LoadedComponent } from "../sandbox/component-loader.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadFixture("mcp-catalog");
}, 180_000);

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

describe("the MCP SDK's client ↔ Cordon's HTTP bridge (connection form) ↔ an SDK proxy", () => {
  it("serves resources, and carries notifications both ways: initialized to the proxy, list_changed to the client", async () => {
    const { bridge, toProxyFromClient, declaration } = await bridgedProxy(component, { http: true });
    closing.push(() => bridge.close());
    const docs = await declaration("docs");
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
