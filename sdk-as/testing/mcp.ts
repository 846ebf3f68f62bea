/**
 * Testing a proxy's MCP servers: the test plays the agent's MCP client (or the conductor's bridge)
 * calling them over MCP-over-ACP, in both forms (connection and connectionless).
 */
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import type { Json } from "./messages.js";
import { INIT_RESULT_MCP, ProxyUnderTest, proxyUnderTest } from "./proxy-under-test.js";

/** A proxy configured and initialized with an agent side that advertises `mcpCapabilities.acp`. */
export function mcpProxyUnderTest(
  component: LoadedComponent,
  config: Json = {},
  options: { grants?: string[]; initParams?: Json } = {},
): Promise<ProxyUnderTest> {
  return proxyUnderTest(component, config, { ...options, agentResult: INIT_RESULT_MCP });
}

/**
 * Runs one session setup request from the client side through the proxy: returns the params the
 * successor got, the `{"type":"acp"}` declarations the proxy added, and the answer the client got.
 */
export function setupSession(
  p: ProxyUnderTest,
  method: string,
  params: Json,
  result: Json,
): { forwarded: Json; declared: Json[]; answer: Json } {
  const id = p.nextId();
  const out = p.deliver({ jsonrpc: "2.0", id, method, params });
  if (out.length !== 1 || out[0].method !== "proxy/successor" || out[0].params.method !== method) {
    throw new Error(`expected ${method} forwarded to the successor, got ${JSON.stringify(out)}`);
  }
  const forwarded = out[0].params.params;
  const declared = (forwarded?.mcpServers ?? []).filter((s: Json) => s?.type === "acp");
  const answers = p.deliver({ jsonrpc: "2.0", id: out[0].id, result });
  if (answers.length !== 1 || answers[0].id !== id) throw new Error(`expected the ${method} answer, got ${JSON.stringify(answers)}`);
  return { forwarded, declared, answer: answers[0] };
}

/** `session/new` answered with `sessionId`: the proxy's declarations. */
export function newSession(p: ProxyUnderTest, sessionId: string, params: Json = { cwd: "/work", mcpServers: [] }): Json[] {
  return setupSession(p, "session/new", params, { sessionId }).declared;
}

/**
 * A request from the successor (the agent, or the conductor's MCP bridge acting for it); returns the
 * proxy's answer to it, and everything else it sent meanwhile in `others`.
 */
export function agentRequest(p: ProxyUnderTest, method: string, params?: Json): Json & { others: Json[] } {
  const id = `agent-${p.nextId()}`;
  const out = p.deliver(ProxyUnderTest.fromAgent({ method, params }, id));
  const answer = out.find((m) => m.id === id && !("method" in m));
  return { ...(answer ?? { missing: true }), others: out.filter((m) => m !== answer) };
}

/** `mcp/connect {serverId}` → the connectionId (throws when the proxy refuses). */
export function mcpConnect(p: ProxyUnderTest, serverId: string): string {
  const answer = agentRequest(p, "mcp/connect", { serverId });
  if (typeof answer.result?.connectionId !== "string") throw new Error(`mcp/connect refused: ${JSON.stringify(answer)}`);
  return answer.result.connectionId;
}

let mcpRequestIds = 0;

/**
 * One MCP request: over a connection (`{connectionId}`, the connection form) or straight to a
 * server (`{serverId}`, the connectionless form, with a fresh `requestId`). Returns the proxy's
 * answer to the `mcp/message` request.
 */
export function mcpRequest(
  p: ProxyUnderTest,
  target: { connectionId: string } | { serverId: string },
  method: string,
  params?: Json,
): Json {
  const envelope: Json =
    "serverId" in target
      ? { serverId: target.serverId, requestId: `mcp-request:${++mcpRequestIds}`, method }
      : { connectionId: target.connectionId, method };
  if (params !== undefined) envelope.params = params;
  return agentRequest(p, "mcp/message", envelope);
}

/** The text of a `CallToolResult` (its text blocks, one per line). */
export function toolText(result: Json): string {
  return (result?.content ?? [])
    .filter((b: Json) => b.type === "text")
    .map((b: Json) => b.text)
    .join("\n");
}

/**
 * Every item of a paged MCP list (`tools/list`, `resources/list`, `resources/templates/list`,
 * `prompts/list`) under `key`, following `nextCursor` page by page, in either form. Throws on an
 * error answer, or after `maxPages` pages.
 */
export function mcpListAll(
  p: ProxyUnderTest,
  target: { connectionId: string } | { serverId: string },
  method: string,
  key: string,
  maxPages = 100,
): Json[] {
  const items: Json[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const answer = mcpRequest(p, target, method, cursor === undefined ? {} : { cursor });
    const result = "serverId" in target ? answer.result?.result : answer.result;
    if (!Array.isArray(result?.[key])) throw new Error(`${method} failed: ${JSON.stringify(answer)}`);
    items.push(...result[key]);
    cursor = result.nextCursor;
    if (cursor === undefined) return items;
  }
  throw new Error(`${method}: more than ${maxPages} pages`);
}

/** The text of a `ReadResourceResult` (its text contents, one per line). */
export function resourceText(result: Json): string {
  return (result?.contents ?? [])
    .filter((c: Json) => typeof c.text === "string")
    .map((c: Json) => c.text)
    .join("\n");
}
