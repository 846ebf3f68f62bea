/**
 * Every message on every hop of real chains, checked against the ACP JSON schema that
 * `@agentclientprotocol/sdk` publishes (`schema.json`; `schema.unstable.json` for `proxy/*`,
 * `mcp/message` and the other unstable methods) with ajv — see `helpers/acp-schema-check.ts` for
 * how each message is rebuilt from the `--trace` file and which `$defs` entry it must satisfy.
 * Drift from the schema (Cordon's own messages, the reference agent's, the AssemblyScript SDK's)
 * fails here.
 *
 * Chains: the scripted seed-000 lifecycle (the official SDK client against the reference agent)
 * through 0 and 3 pass-through WASM proxies; MCP tool calls through `workspace-tools.wasm` with the
 * reference agent advertising `acp` (it speaks MCP-over-ACP itself, in the schema's connectionless
 * form), only `http` and neither (Cordon's bridge relays, in the connection form, which the SDK proxy
 * answers: the Rust schema's, checked against its shapes, see helpers/acp-schema-check.ts); a
 * client-side MCP server on the ACP SDK's strict `McpOverAcpProvider`, called by the bridged
 * reference agent (which refuses `mcp/connect`, and is then spoken to in the connectionless form).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import * as unstable from "@agentclientprotocol/sdk/unstable";
import { describe, expect, it } from "vitest";
import { type CheckResult, checkTrace, readTrace, report } from "./helpers/acp-schema-check.js";
import { LifecycleObserver, runLifecycle } from "./helpers/lifecycle.js";
import { CORDON, NODE, proxyWasm, ROOT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";

const DIR = mkdtempSync(join(tmpdir(), "cordon-conformance-"));
const tracePath = () => join(DIR, `trace-${Math.random().toString(36).slice(2)}.jsonl`);

/** Asserts a clean trace, and returns the result for coverage checks. */
function conforming(trace: string): CheckResult {
  const result = checkTrace(readTrace(trace));
  expect(result.violations, `messages that do not conform to the ACP schema:\n${report(result.violations)}`).toEqual([]);
  return result;
}

/** The lifecycle through `cordon run --trace` with these proxies; resolves when Cordon has exited. */
async function lifecycle(proxies: string[], trace: string): Promise<void> {
  const store = mkdtempSync(join(DIR, "store-"));
  const cwd = mkdtempSync(join(DIR, "cwd-"));
  const args = [
    CORDON,
    "run",
    "--trace",
    trace,
    ...proxies.flatMap((p) => ["--proxy", proxyWasm(p)]),
    "--",
    NODE,
    CORDON,
    "reference-agent",
  ];
  const child = spawn(NODE, args, {
    stdio: ["pipe", "pipe", "pipe"],
    // Filters off: every proxy (and the bridge) sees and re-sends every message, so every hop is checked.
    env: { ...process.env, CORDON_AGENT_STORE: store, CORDON_LOG: "warn", CORDON_INTEREST_FILTERS: "off" },
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const observer = new LifecycleObserver();
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const connection = observer.install(acp.client({ name: "schema-conformance" })).connect(observer.wrap(stream));
  try {
    await runLifecycle(connection.agent, { observer, cwd, timeoutMs: 20_000 });
  } catch (error) {
    throw new Error(`${(error as Error).message}\nstderr: ${stderr}`);
  } finally {
    connection.close();
    child.stdin.end();
    await exited;
  }
}

describe("the seed-000 lifecycle conforms to the ACP schema on every hop", () => {
  it.each([
    { name: "0 proxies", proxies: [] as string[] },
    { name: "3 pass-through WASM proxies", proxies: ["passthrough", "passthrough", "passthrough"] },
  ])(
    "through $name",
    async ({ proxies }) => {
      const trace = tracePath();
      await lifecycle(proxies, trace);
      const result = conforming(trace);
      // The run covered the lifecycle, and the proxy hops (envelopes, proxy/initialize) when there are proxies.
      for (const def of [
        "InitializeResponse",
        "NewSessionResponse",
        "PromptResponse",
        "SessionNotification",
        "RequestPermissionRequest",
        "ReadTextFileRequest",
        "CreateTerminalRequest",
        "LoadSessionResponse",
        "ResumeSessionResponse",
        "ForkSessionResponse",
        "ListSessionsResponse",
        "CloseSessionResponse",
        "DeleteSessionResponse",
        "SetSessionModeResponse",
        "SetSessionConfigOptionResponse",
        "CancelNotification",
        "Error",
      ]) {
        expect(result.byDef.get(def) ?? 0, def).toBeGreaterThan(0);
      }
      // The MCP bridge sits before the agent in every chain: it is a proxy on the trace.
      expect(result.byDef.get("InitializeProxyRequest")).toBe(proxies.length + 1);
      expect(result.byDef.get("ProxySuccessorRequest") ?? 0).toBeGreaterThan(0);
      // Notifications cross the bridge only while it is busy (mcp/bridge.ts `passes`), which is
      // timing: a chain of none but the bridge covers them only by chance (one loaded CI run had none).
      if (proxies.length > 0) expect(result.byDef.get("ProxySuccessorNotification") ?? 0).toBeGreaterThan(0);
    },
    90_000,
  );
});

describe.each(["acp", "http", "stdio"])("an MCP tool call through workspace-tools.wasm, agent --mcp %s, conforms on every hop", (mode) => {
  it("lists and calls recall and read_file; every mcp/message is in a form of the schema", async () => {
    const trace = tracePath();
    const config = join(DIR, `chain-${mode}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        proxies: [
          { name: "before", wasm: proxyWasm("passthrough") },
          { name: "workspace-tools", wasm: proxyWasm("workspace-tools"), grants: ["fs:read"] },
          { name: "after", wasm: proxyWasm("passthrough") },
        ],
      }),
    );
    const client = new RawClient(NODE, [
      CORDON,
      "run",
      "--trace",
      trace,
      "--config",
      config,
      "--",
      NODE,
      CORDON,
      "reference-agent",
      "--mcp",
      mode,
    ]);
    client.onRequest = (m) =>
      m.method === "fs/read_text_file"
        ? { result: { content: `contents of ${m.params.path}` } }
        : { error: { code: -32601, message: `client has no ${m.method}` } };
    try {
      const init = await client.request("initialize", {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } },
      });
      expect(init.error, client.stderr).toBeUndefined();
      const created = await client.request("session/new", { cwd: DIR, mcpServers: [] });
      expect(created.error, client.stderr).toBeUndefined();
      const sessionId: string = created.result.sessionId;
      const from = client.received.length;
      const turn = await client.request("session/prompt", {
        sessionId,
        prompt: [
          {
            type: "text",
            text: 'remember bluebird\nlist tools workspace\nuse tool workspace::recall {"query":"bluebird"}\nuse tool workspace::read_file {"path":"notes.txt"}',
          },
        ],
      });
      expect(turn.result?.stopReason, JSON.stringify(turn) + client.stderr).toBe("end_turn");
      const statuses = client.received
        .slice(from)
        .filter(
          (m: Json) => m.method === "session/update" && m.params.update.sessionUpdate === "tool_call_update" && m.params.update.status,
        )
        .map((m: Json) => m.params.update.status);
      expect(statuses.filter((s: string) => s === "completed")).toHaveLength(3);
    } finally {
      await client.close();
    }
    const result = conforming(trace);
    // MCP-over-ACP happened: connectionless from the agent itself, the connection form from the bridge.
    const [request, response] =
      mode === "acp"
        ? ["MessageMcpRequest", "MessageMcpResponse"]
        : ["ConnectionForm Request mcp/message", "ConnectionForm Response mcp/message"];
    expect(result.byDef.get(request) ?? 0).toBeGreaterThanOrEqual(3);
    expect(result.byDef.get(response) ?? 0).toBeGreaterThanOrEqual(3);
    if (mode !== "acp") expect(result.byDef.get("ConnectionForm Request mcp/connect") ?? 0).toBeGreaterThan(0); // the bridge → workspace-tools
    const setups = readTrace(trace).filter((e) => e.type === "request" && e.method === "session/new" && e.to === "agent");
    expect(setups[0].params.mcpServers[0]).toMatchObject(
      mode === "acp"
        ? { type: "acp", name: "workspace" }
        : mode === "http"
          ? { type: "http", name: "workspace" }
          : { name: "workspace", command: NODE },
    );
  }, 60_000);
});

describe.each(["acp", "http"])("a tool call cancelled mid-call (native tool proxy), agent --mcp %s, conforms on every hop", (mode) => {
  it("session/cancel during an MCP tool call; the next call works", async () => {
    const trace = tracePath();
    const tool = `"${NODE}" "${join(ROOT, "test/peers/mcp-tool-proxy.mjs")}"`;
    const client = new RawClient(NODE, [
      CORDON,
      "run",
      "--trace",
      trace,
      "--proxy",
      proxyWasm("passthrough"),
      "--proxy-cmd",
      tool,
      "--",
      NODE,
      CORDON,
      "reference-agent",
      "--mcp",
      mode,
    ]);
    try {
      expect((await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} })).error, client.stderr).toBeUndefined();
      const sessionId: string = (await client.request("session/new", { cwd: DIR, mcpServers: [] })).result.sessionId;
      // Connected first (MCP's initialize), so the cancel finds the tool call itself in flight.
      const warm = await client.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: 'use tool tools::echo {"text":"warm"}' }],
      });
      expect(warm.result?.stopReason, client.stderr).toBe("end_turn");
      const id = "slow-turn";
      client.send({
        jsonrpc: "2.0",
        id,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: 'use tool tools::slow {"ms":20000}' }] },
      });
      await client.waitFor((m) => m.method === "session/update" && m.params.update.status === "in_progress", 15_000);
      await new Promise((r) => setTimeout(r, 300));
      client.notify("session/cancel", { sessionId });
      expect((await client.waitFor((m) => m.id === id && !("method" in m), 15_000)).result?.stopReason).toBe("cancelled");
      const after = await client.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: 'use tool tools::echo {"text":"after"}' }],
      });
      expect(after.result?.stopReason, client.stderr).toBe("end_turn");
    } finally {
      await client.close();
    }
    const result = conforming(trace);
    // The withdrawn mcp/message was answered with an error on its way back (`$/cancel_request`
    // itself is not recorded in traces: the conductor translates it per hop without tracing it).
    expect(result.byDef.get("Error") ?? 0).toBeGreaterThan(0);
    expect(result.byDef.get(mode === "acp" ? "MessageMcpRequest" : "ConnectionForm Request mcp/message") ?? 0).toBeGreaterThan(0);
  }, 60_000);
});

/**
 * The client provides an MCP server itself, with the ACP SDK's strict `McpOverAcpProvider` (MCP
 * 2026-07-28: per-request metadata required, no `initialize`); the reference agent, bridged over
 * http or stdio, calls it through a pass-through proxy.
 */
describe.each(["http", "stdio"])("a client's MCP server on the ACP SDK's McpOverAcpProvider, agent --mcp %s through the bridge", (mode) => {
  it("lists and calls its tool; every hop conforms", async () => {
    const trace = tracePath();
    const child = spawn(
      NODE,
      [CORDON, "run", "--trace", trace, "--proxy", proxyWasm("passthrough"), "--", NODE, CORDON, "reference-agent", "--mcp", mode],
      // Filters off: the pass-through proxy sees (and re-sends) every message, so its hops are checked too.
      { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, CORDON_LOG: "warn", CORDON_INTEREST_FILTERS: "off" } },
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const provider = new unstable.McpOverAcpProvider();
    const updates: Json[] = [];
    const seen: string[] = [];
    const app = unstable
      .client({ name: "strict-provider" })
      .onRequest(unstable.methods.client.mcp.message, provider.handleRequest)
      .onNotification(unstable.methods.client.session.update, ({ params }: { params: Json }) => void updates.push(params.update));
    const stream = unstable.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    );
    const connection = app.connect(stream);
    const tools = provider.registerServer(connection.agent, {
      name: "tools",
      handler: async (cx: { method: string; params?: Json }) => {
        seen.push(cx.method);
        if (cx.method === "tools/list")
          return { result: { tools: [{ name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } }] } };
        if (cx.method === "tools/call") return { result: { content: [{ type: "text", text: `echo: ${cx.params?.arguments?.text}` }] } };
        return { error: { code: -32601, message: `Method not found: ${cx.method}` } };
      },
    });
    try {
      await connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = (await connection.agent.request("session/new", { cwd: DIR, mcpServers: [tools.declaration] })) as {
        sessionId: string;
      };
      const turn = (await connection.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: 'list tools tools\nuse tool tools::echo {"text":"strict"}' }],
      })) as Json;
      expect(turn.stopReason).toBe("end_turn");
    } catch (error) {
      throw new Error(`${(error as Error).message}\nstderr: ${stderr}`);
    } finally {
      connection.close();
      child.stdin.end();
      await exited;
    }
    const done = updates.filter((u) => u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"));
    expect(
      done.map((u) => u.status),
      JSON.stringify(updates),
    ).toEqual(["completed", "completed"]);
    expect(done[1].content[0].content.text).toBe("echo: strict");
    // The provider saw MCP's initialize (and refused it: the bridge answered it, after one list of
    // each kind to learn what the server serves), then the real requests.
    expect(seen).toEqual(["initialize", "tools/list", "resources/list", "prompts/list", "tools/list", "tools/call"]);
    const result = conforming(trace);
    expect(result.byDef.get("MessageMcpRequest")).toBe(6 * 2); // client ← passthrough ← bridge
    // First the connection form, which the client refuses (one mcp/connect per hop): then connectionless.
    expect(result.byDef.get("ConnectionForm Request mcp/connect")).toBe(2);
  }, 60_000);
});

describe("the conformance check", () => {
  /** A trace of a chain client → p → agent with these extra events after the initialize round trip. */
  const traceWith = (...extra: Json[]): Json[] => [
    { type: "request", from: "client", to: "p", id: 1, method: "initialize", params: { protocolVersion: 1 } },
    { type: "request", from: "p", to: "agent", id: 1, method: "initialize", params: { protocolVersion: 1 } },
    { type: "response", from: "agent", to: "p", id: 1, is_error: false, payload: { protocolVersion: 1 } },
    { type: "response", from: "p", to: "client", id: 1, is_error: false, payload: { protocolVersion: 1 } },
    ...extra,
  ];

  it("passes a conforming exchange, and names each kind of drift", () => {
    const ok = checkTrace(
      traceWith(
        {
          type: "request",
          from: "agent",
          to: "p",
          id: 2,
          method: "mcp/message",
          params: { serverId: "s", requestId: "r1", method: "tools/list", params: {} },
        },
        {
          type: "notification",
          from: "p",
          to: "agent",
          method: "mcp/message",
          params: { serverId: "s", requestId: "r1", method: "notifications/progress", params: { progress: 1 } },
        },
        { type: "response", from: "p", to: "agent", id: 2, is_error: false, payload: { result: { tools: [] } } },
        { type: "notification", from: "client", to: "p", method: "_vendor/ping", params: {} },
        // The connection form, both ways: the server's own request to the agent's MCP client.
        { type: "request", from: "agent", to: "p", id: 3, method: "mcp/connect", params: { serverId: "s" } },
        { type: "response", from: "p", to: "agent", id: 3, is_error: false, payload: { connectionId: "k" } },
        { type: "request", from: "p", to: "agent", id: 4, method: "mcp/message", params: { connectionId: "k", method: "roots/list" } },
        { type: "response", from: "agent", to: "p", id: 4, is_error: false, payload: { roots: [] } },
        {
          type: "notification",
          from: "agent",
          to: "p",
          method: "mcp/message",
          params: { connectionId: "k", method: "notifications/initialized" },
        },
      ),
    );
    expect(ok.violations).toEqual([]);
    expect(ok.exempt.get("_vendor/ping")).toBe(1);
    expect(ok.byDef.get("ConnectionForm Request mcp/message")).toBe(1);
    expect(ok.byDef.get("ConnectionForm Response mcp/connect")).toBe(1);

    const drift = checkTrace(
      traceWith(
        // The connection form (the Rust schema's): mcp/connect without its serverId, toward the agent.
        { type: "request", from: "agent", to: "p", id: 3, method: "mcp/connect", params: { server: "s" } },
        { type: "request", from: "p", to: "agent", id: 7, method: "mcp/connect", params: { serverId: "s" } },
        // The connectionless form without its requestId.
        { type: "request", from: "agent", to: "p", id: 4, method: "mcp/message", params: { serverId: "s", method: "tools/list" } },
        // A bare MCP result where the carrier {result} | {error} belongs.
        { type: "response", from: "p", to: "agent", id: 4, is_error: false, payload: "not an object" },
        // A session/new answer without its sessionId.
        { type: "request", from: "client", to: "p", id: 5, method: "session/new", params: { cwd: "/w", mcpServers: [] } },
        { type: "response", from: "p", to: "client", id: 5, is_error: false, payload: {} },
        // An agent-side method travelling toward the client.
        { type: "request", from: "p", to: "client", id: 6, method: "session/prompt", params: { sessionId: "x", prompt: [] } },
        // An error without a message.
        { type: "response", from: "client", to: "p", id: 6, is_error: true, payload: { code: -32603 } },
      ),
    );
    const against = drift.violations.map((v) => `${v.where} | ${v.against}`);
    expect(against).toEqual([
      expect.stringMatching(/^request mcp\/connect agent → p .*\| ConnectionForm Request mcp\/connect$/),
      expect.stringMatching(/^request mcp\/connect p → agent .*\| ConnectionForm Request mcp\/connect$/),
      expect.stringMatching(/^request mcp\/message agent → p .*\| MessageMcpRequest/),
      expect.stringMatching(/^response to mcp\/message p → agent .*\| MessageMcpResponse/),
      expect.stringMatching(/^response to session\/new p → client .*\| NewSessionResponse/),
      expect.stringMatching(/^request session\/prompt p → client .*\| PromptRequest \(x-side agent\)/),
      expect.stringMatching(/^response to session\/prompt client → p .*\| Error/),
    ]);
  });
});
