/**
 * A worked example of testing a proxy's MCP server with the kit, shipped with the package
 * (compiled beside the kit, `dist/sdk-as/testing/examples/`) and run in Cordon's CI against
 * `proxies/dist/workspace-tools.wasm` (sdk-as/test/testing-examples.test.ts). It uses only
 * `node:assert`, so it reads the same under any test runner; in your project, import from
 * `@cordon/sdk-as/testing` instead of `../index.js`.
 *
 * What it shows: start a proxy from its path with an agent side that speaks MCP-over-ACP, find
 * its declaration in a session, and call a tool in both MCP forms — `mcpRequest` answers the
 * same `{result}` / `{error}` shape whichever form is used.
 */
import assert from "node:assert/strict";
import { type Json, mcpConnect, mcpProxyUnderTest, mcpRequest, newSession, toolText } from "../index.js";

export interface ToolExample {
  /** The MCP server's name in the proxy's declarations (`{type: "acp", name, serverId}`). */
  server: string;
  tool: string;
  arguments?: Json;
  /** The proxy's config (`_cordon/configure`). */
  config?: Json;
}

/**
 * Checks that the proxy at `wasm` declares `example.server` in a new session, lists
 * `example.tool` and answers a call to it identically over a connection and connectionless, and
 * refuses an unknown tool the same way in both forms. Returns the tool's text.
 */
export async function checkToolInBothForms(wasm: string, example: ToolExample): Promise<string> {
  const p = await mcpProxyUnderTest(wasm, example.config ?? {});
  const declared = newSession(p, "example-session");
  const server = declared.find((d) => d.name === example.server);
  assert.ok(server, `the proxy declares no MCP server ${example.server}: ${JSON.stringify(declared)}`);

  const connectionId = mcpConnect(p, server.serverId);
  const forms = [{ connectionId }, { serverId: server.serverId }];
  for (const target of forms) {
    const listed = mcpRequest(p, target, "tools/list");
    assert.equal(listed.error, undefined, JSON.stringify(listed.answer));
    assert.ok(
      listed.result.tools.some((t: Json) => t.name === example.tool),
      `${example.tool} is not listed: ${JSON.stringify(listed.result)}`,
    );
  }

  const [viaConnection, connectionless] = forms.map((target) =>
    mcpRequest(p, target, "tools/call", { name: example.tool, arguments: example.arguments ?? {} }),
  );
  assert.deepEqual(viaConnection.result, connectionless.result);

  const unknown = forms.map((target) => mcpRequest(p, target, "tools/call", { name: "no-such-tool" }).error?.code);
  assert.deepEqual(unknown, [-32602, -32602]); // invalid params, in either form
  return toolText(connectionless.result);
}
