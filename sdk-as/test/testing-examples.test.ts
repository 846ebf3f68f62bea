// The testing kit's shipped examples (sdk-as/testing/examples/), run against real proxies, and the
// MCP helpers' contract: a path or a loaded component, one answer shape, string MCP request ids.
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { checkToolInBothForms } from "../testing/examples/mcp-server.js";
import { loadExampleProxy, mcpConnect, mcpProxyUnderTest, mcpRequest, newSession, ProxyUnderTest, ROOT } from "./harness.js";

const WORKSPACE_TOOLS = join(ROOT, "proxies", "dist", "workspace-tools.wasm");
let component: LoadedComponent;
beforeAll(async () => {
  component = await loadExampleProxy("workspace-tools"); // builds it when stale
});

describe("the testing kit's MCP helpers", () => {
  it("the shipped example passes on workspace-tools", async () => {
    const text = await checkToolInBothForms(WORKSPACE_TOOLS, { server: "workspace", tool: "recall", arguments: { query: "anything" } });
    expect(typeof text).toBe("string");
  });

  it("mcpProxyUnderTest and ProxyUnderTest.start take a path or a loaded component alike", async () => {
    for (const p of [
      await mcpProxyUnderTest(WORKSPACE_TOOLS),
      await mcpProxyUnderTest(component),
      await ProxyUnderTest.start(WORKSPACE_TOOLS, {}, { mcp: true }),
      await ProxyUnderTest.start(component, {}, { mcp: true }),
    ]) {
      expect(newSession(p, "s1").map((d) => d.name)).toEqual(["workspace"]);
    }
  });

  it("mcpRequest answers one shape in both forms, with the raw answer beside it", async () => {
    const p = await mcpProxyUnderTest(component);
    const [decl] = newSession(p, "s1");
    const connectionId = mcpConnect(p, decl.serverId);
    const viaConnection = mcpRequest(p, { connectionId }, "tools/call", { name: "nope" });
    const connectionless = mcpRequest(p, { serverId: decl.serverId, requestId: "mine-1" }, "tools/call", { name: "nope" });
    expect(connectionless.error).toEqual(viaConnection.error);
    expect(connectionless.error).toMatchObject({ code: -32602 });
    // On the wire the forms differ: a JSON-RPC error, or an MCP error inside a successful answer.
    expect(viaConnection.answer.error).toEqual(viaConnection.error);
    expect(connectionless.answer.result).toEqual({ error: connectionless.error });
    expect(mcpRequest(p, { connectionId }, "ping")).toMatchObject({ result: {} });
    expect(mcpRequest(p, { serverId: decl.serverId }, "ping")).toMatchObject({ result: {} });
  });

  it("a connectionless requestId must be a string: a number is refused in words, p.nextMcpRequestId() gives one", async () => {
    const p = await mcpProxyUnderTest(component);
    const [decl] = newSession(p, "s1");
    const numeric = { serverId: decl.serverId, requestId: p.nextId() as unknown as string };
    expect(() => mcpRequest(p, numeric, "ping")).toThrow(/an MCP requestId is a string .*use p\.nextMcpRequestId\(\)/);
    expect(p.nextMcpRequestId()).toMatch(/^mcp-request:\d+$/);
  });
});
