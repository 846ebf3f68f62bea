/**
 * Testing a proxy's MCP servers: the test plays the agent's MCP client (or the conductor's bridge)
 * calling them over MCP-over-ACP, in both forms (connection and connectionless).
 *
 * ```ts
 * const p = await mcpProxyUnderTest("dist/my-tools.wasm");      // a path, or a LoadedComponent
 * const [server] = newSession(p, "s1");                          // its {type: "acp", name, serverId}
 * const connectionless = mcpRequest(p, { serverId: server.serverId }, "tools/call", { name: "echo", arguments: {} });
 * const connectionId = mcpConnect(p, server.serverId);
 * const viaConnection = mcpRequest(p, { connectionId }, "tools/call", { name: "echo", arguments: {} });
 * // One shape in both forms: { result } or { error }, plus the raw answer and what else was sent.
 * assert.equal(toolText(connectionless.result), toolText(viaConnection.result));
 * ```
 */
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import type { Id, Json } from "./messages.js";
import { INIT_RESULT_MCP, type LoadProxyOptions, ProxyUnderTest, sides } from "./proxy-under-test.js";

/**
 * A proxy loaded (from a path, or an already loaded component), configured with `config` and
 * initialized with an agent side that advertises `mcpCapabilities.acp` — the same as
 * `ProxyUnderTest.start(wasm, config, { mcp: true })`.
 */
export function mcpProxyUnderTest(
  proxy: string | LoadedComponent,
  config: Json = {},
  options: LoadProxyOptions & { name?: string; initParams?: Json } = {},
): Promise<ProxyUnderTest> {
  return ProxyUnderTest.start(proxy, config, { ...options, agentResult: INIT_RESULT_MCP });
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
 * A request from the successor (the agent, or the conductor's MCP bridge acting for it), under `id`
 * (default: a fresh one); returns the proxy's answer to it (`{jsonrpc, id, result}` or `{…, error}`;
 * `{missing: true}` when it did not answer at once), and everything else it sent meanwhile in `others`.
 */
export function agentRequest(p: ProxyUnderTest, method: string, params?: Json, id: Id = `agent-${p.nextId()}`): Json & { others: Json[] } {
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

/** An MCP (or JSON-RPC) error: `{code, message, data?}`. */
export interface McpError {
  code: number;
  message: string;
  data?: Json;
}

/**
 * The outcome of one MCP request, the same in both forms: `result` (the MCP result) or `error`
 * (the MCP error — or, in either form, the JSON-RPC error refusing the `mcp/message` itself, such
 * as `-33001 unknown MCP server`; `answer` tells them apart), plus the raw answer to the
 * `mcp/message` request and what else the proxy sent meanwhile.
 */
export interface McpAnswer {
  result?: Json;
  error?: McpError;
  /** The proxy's answer to `mcp/message` as sent: the connectionless form wraps `{result}` / `{error}` in a successful response. */
  answer: Json;
  others: Json[];
}

/**
 * One MCP request: over a connection (`{connectionId}`, the connection form) or straight to a
 * server (`{serverId}`, the connectionless form, under `requestId` — a string, default a fresh
 * `p.nextMcpRequestId()`). Returns {@link McpAnswer}, whichever the form.
 */
export function mcpRequest(
  p: ProxyUnderTest,
  target: { connectionId: string } | { serverId: string; requestId?: string },
  method: string,
  params?: Json,
): McpAnswer {
  let envelope: Json;
  if ("serverId" in target) {
    const requestId = target.requestId ?? p.nextMcpRequestId();
    if (typeof requestId !== "string")
      throw new TypeError(
        `an MCP requestId is a string (the schema's McpRequestId), not ${JSON.stringify(requestId)}: use p.nextMcpRequestId()`,
      );
    envelope = { serverId: target.serverId, requestId, method };
  } else envelope = { connectionId: target.connectionId, method };
  if (params !== undefined) envelope.params = params;
  const { others, ...answer } = agentRequest(p, "mcp/message", envelope);
  const outcome = answer.error === undefined && "serverId" in target ? answer.result : answer;
  return {
    ...(outcome?.error !== undefined ? { error: outcome.error } : { result: outcome?.result }),
    answer,
    others,
  };
}

/** A server's request to the agent's MCP client, as the proxy sent it toward the agent. */
export interface McpClientAsk {
  /** The proxy's id for the `mcp/message` request (answer it with {@link answerMcpClient}). */
  id: Id;
  connectionId: string;
  method: string;
  params?: Json;
}

/**
 * The requests to the agent's MCP client among what a proxy sent (an `McpAnswer`'s `others`, or a
 * delivery's output): its `mcp/message {connectionId, method, params?}` requests toward the agent.
 */
export function mcpClientAsks(out: Json[]): McpClientAsk[] {
  return sides(out)
    .toAgent.filter((m) => m.method === "mcp/message" && "id" in m && typeof m.params?.connectionId === "string")
    .map((m) => ({
      id: m.id,
      connectionId: m.params.connectionId,
      method: m.params.method,
      ...(m.params.params !== undefined ? { params: m.params.params } : {}),
    }));
}

/**
 * Answers a server's request to the agent's MCP client as the client would (`{result}`), or as it
 * or Cordon would refuse it (`{error}`: a Cordon refusal carries `data.cordon.grant`); returns what
 * the proxy sent then (the held tool call's answer, say).
 */
export function answerMcpClient(p: ProxyUnderTest, ask: McpClientAsk, outcome: { result: unknown } | { error: Json }): Json[] {
  return p.deliver({ jsonrpc: "2.0", id: ask.id, ...outcome });
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
    const result = answer.result;
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
