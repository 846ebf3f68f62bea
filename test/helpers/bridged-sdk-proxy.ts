/**
 * An SDK proxy (in the testing kit's host) and Cordon's MCP bridge wired in process the way a
 * chain routes them: proxy → bridge → the agent, played here (it answers `initialize` with the
 * given `mcpCapabilities` and `session/new`). The bridge speaks for an agent with plain MCP: over
 * loopback HTTP when the agent advertises `http`, else through a stdio `cordon mcp-bridge` command.
 */
import { createLogger } from "../../runtime/log.js";
import { type McpBridgeOptions, McpBridgePeer } from "../../runtime/mcp/bridge.js";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { type Json, mcpProxyUnderTest, type ProxyUnderTest, sides } from "../../sdk-as/test/harness.js";
import { CORDON, NODE } from "./paths.js";

export interface BridgedProxy {
  p: ProxyUnderTest;
  bridge: McpBridgePeer;
  /** Delivers a message to the proxy from the client side; returns the proxy's answers. */
  toProxyFromClient: (m: Json) => Json[];
  /** Opens a session (`session/new` through the proxy and the bridge); resolves with the declaration of server `name` the agent got. */
  declaration: (name: string, sessionId?: string) => Promise<Json>;
}

export async function bridgedProxy(
  component: LoadedComponent,
  agentMcp: Json,
  mcpForm: McpBridgeOptions["mcpForm"] = "auto",
): Promise<BridgedProxy> {
  const p = await mcpProxyUnderTest(component);
  // A stdio bridge is this checkout's built `cordon mcp-bridge` (the default resolves from dist/).
  const bridge = new McpBridgePeer({ log: createLogger("error"), mcpForm, bridgeCommand: { command: NODE, args: [CORDON, "mcp-bridge"] } });
  let sessionToGive = "sess-H";
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
        const inner = m.params;
        if (inner.method === "initialize")
          bridge.send({
            jsonrpc: "2.0",
            id: m.id,
            result: { protocolVersion: 1, agentCapabilities: { mcpCapabilities: agentMcp }, authMethods: [] },
          } as never);
        else if (inner.method === "session/new") {
          bridge.send({ jsonrpc: "2.0", id: m.id, result: { sessionId: sessionToGive } } as never);
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
  const declaration = (name: string, sessionId = "sess-H") =>
    new Promise<Json>((resolve) => {
      sessionToGive = sessionId;
      waiting = (params) => resolve(params.mcpServers.find((s: Json) => s.name === name));
      toProxyFromClient({ jsonrpc: "2.0", id: `new-${sessionId}`, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    });
  await new Promise((r) => setImmediate(r)); // the bridge handles what it is sent in microtasks
  return { p, bridge, toProxyFromClient, declaration };
}
