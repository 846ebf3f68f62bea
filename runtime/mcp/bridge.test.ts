/**
 * The MCP bridge peer in process: what it sends the conductor for what it is sent, exactly.
 * (End to end through real chains: test/mcp-bridge.test.ts.)
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { socketLines } from "../../test/helpers/socket-lines.js";
import { createLogger } from "../log.js";
import { McpBridgePeer } from "./bridge.js";

type Json = Record<string, any>;

const bridges: McpBridgePeer[] = [];
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((b) => b.close()));
});

async function harness(mcpForm: "auto" | "connection" = "connection") {
  const bridge = new McpBridgePeer({
    log: createLogger("error"),
    bridgeCommand: { command: "/usr/bin/node", args: ["/opt/cordon/bin/cordon.js", "mcp-bridge"] },
    mcpForm,
  });
  bridges.push(bridge);
  const out: Json[] = [];
  await bridge.open({ message: (m) => out.push(m as Json), malformed: () => {}, closed: () => {} });
  const settle = () => new Promise((r) => setImmediate(r));
  /** Delivers messages in one routing batch, as the conductor does when they arrive together. */
  const send = async (...ms: Json[]) => {
    for (const m of ms) bridge.send({ jsonrpc: "2.0", ...m } as never);
    await settle();
  };
  /** Takes every message the bridge sent since the last take. */
  const take = async (): Promise<Json[]> => {
    await settle();
    return out.splice(0);
  };
  /** Waits for the next message the bridge sends that passes `test`, and takes it. */
  const next = async (test: (m: Json) => boolean = () => true): Promise<Json> => {
    for (let i = 0; i < 500; i++) {
      const at = out.findIndex(test);
      if (at >= 0) return out.splice(at, 1)[0];
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`nothing matched; sent: ${JSON.stringify(out)}`);
  };
  /** proxy/initialize, answered by the agent with these mcpCapabilities; resolves with the bridge's answer. */
  const initialize = async (mcpCapabilities: Json): Promise<Json> => {
    await send({ id: "c1", method: "proxy/initialize", params: { protocolVersion: 1 } });
    const [forwarded] = await take();
    expect(forwarded).toEqual({
      jsonrpc: "2.0",
      id: forwarded.id,
      method: "proxy/successor",
      params: { method: "initialize", params: { protocolVersion: 1 } },
    });
    await send({
      id: forwarded.id,
      result: { protocolVersion: 1, agentCapabilities: { loadSession: true, mcpCapabilities }, authMethods: [] },
    });
    return next((m) => m.id === "c1");
  };
  return { bridge, send, take, next, initialize };
}

const ACP = { type: "acp", name: "tools", serverId: "srv-1" };
const STDIO = { name: "files", command: "/bin/mcp-files", args: [], env: [] };

describe("MCP bridge peer", () => {
  it("stays out of the way of an agent that speaks MCP-over-ACP itself", async () => {
    const h = await harness();
    const init = await h.initialize({ http: true, acp: true });
    expect(init.result.agentCapabilities).toEqual({ loadSession: true, mcpCapabilities: { http: true, acp: true } });
    const params = { cwd: "/w", mcpServers: [ACP, STDIO] };
    await h.send({ id: "c2", method: "session/new", params });
    const [forwarded] = await h.take();
    expect(forwarded).toEqual({ jsonrpc: "2.0", id: forwarded.id, method: "proxy/successor", params: { method: "session/new", params } });
  });

  it("advertises acp and rewrites acp declarations to the loopback HTTP endpoint for an http agent", async () => {
    const h = await harness();
    const init = await h.initialize({ http: true, sse: false });
    expect(init.result.agentCapabilities.mcpCapabilities).toEqual({ http: true, sse: false, acp: true });
    await h.send({ id: "c2", method: "session/new", params: { cwd: "/w", mcpServers: [STDIO, { ...ACP, _meta: { x: 1 } }] } });
    // Held until the HTTP listener is up (its module loads on this first use): waited for, not taken.
    const forwarded = await h.next();
    const servers = forwarded.params.params.mcpServers;
    expect(servers[0]).toEqual(STDIO);
    expect(servers[1]).toEqual({
      type: "http",
      name: "tools",
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/[0-9a-f-]{36}$/),
      headers: [{ name: "Authorization", value: expect.stringMatching(/^Bearer /) }],
      _meta: { x: 1 },
    });
    const { url } = servers[1];
    const auth = { authorization: servers[1].headers[0].value, "content-type": "application/json" };
    const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } });

    // The agent's MCP client opens a session: mcp/connect, then the initialize as mcp/message.
    const reply = fetch(url, { method: "POST", headers: auth, body: initialize });
    const connect = await h.next((m) => m.method === "mcp/connect");
    expect(connect).toEqual({ jsonrpc: "2.0", id: connect.id, method: "mcp/connect", params: { serverId: "srv-1" } });
    await h.send({ id: connect.id, result: { connectionId: "k1" } });
    const message = await h.next((m) => m.method === "mcp/message");
    expect(message).toEqual({
      jsonrpc: "2.0",
      id: message.id,
      method: "mcp/message",
      params: { connectionId: "k1", method: "initialize", params: { protocolVersion: "2025-06-18" } },
    });
    await h.send({ id: message.id, result: { protocolVersion: "2025-06-18", capabilities: {} } });
    const response = await reply;
    expect(response.status).toBe(200);
    const mcpSession = response.headers.get("mcp-session-id")!;
    expect(await response.json()).toEqual({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18", capabilities: {} } });

    // An MCP error of the proxy is an outer error of mcp/message, and the agent's client gets it as its error.
    const call = fetch(url, {
      method: "POST",
      headers: { ...auth, "mcp-session-id": mcpSession },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x" } }),
    });
    const m2 = await h.next((m) => m.method === "mcp/message");
    await h.send({ id: m2.id, error: { code: -32602, message: "Unknown tool: x" } });
    expect(await (await call).json()).toEqual({ jsonrpc: "2.0", id: 2, error: { code: -32602, message: "Unknown tool: x" } });

    // mcp/message for a connection that is not the bridge's passes through to the agent.
    await h.send({ id: "c9", method: "mcp/message", params: { connectionId: "someone-else", method: "ping" } });
    expect(await h.take()).toEqual([
      {
        jsonrpc: "2.0",
        id: expect.any(String),
        method: "proxy/successor",
        params: { method: "mcp/message", params: { connectionId: "someone-else", method: "ping" } },
      },
    ]);
  });

  it("drops the endpoints of a failed setup and of a closed session (with mcp/disconnect)", async () => {
    const h = await harness();
    await h.initialize({ http: true });
    await h.send({ id: "c2", method: "session/new", params: { cwd: "/w", mcpServers: [ACP] } });
    const failed = await h.next(); // held until the HTTP listener is up
    await h.send({ id: failed.id, error: { code: -32602, message: "no" } });
    expect((await h.next((m) => m.id === "c2")).error.message).toBe("no");
    const dead = failed.params.params.mcpServers[0];
    const post = (server: Json, extra: Record<string, string> = {}) =>
      fetch(server.url, {
        method: "POST",
        headers: { authorization: server.headers[0].value, "content-type": "application/json", ...extra },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
      });
    expect((await post(dead)).status).toBe(404);

    await h.send({ id: "c3", method: "session/new", params: { cwd: "/w", mcpServers: [ACP] } });
    const [ok] = await h.take();
    await h.send({ id: ok.id, result: { sessionId: "s1" } });
    await h.next((m) => m.id === "c3");
    const live = ok.params.params.mcpServers[0];
    const opening = post(live);
    const connect = await h.next((m) => m.method === "mcp/connect");
    await h.send({ id: connect.id, result: { connectionId: "k1" } });
    const init = await h.next((m) => m.method === "mcp/message");
    await h.send({ id: init.id, result: {} });
    const mcpSession = (await opening).headers.get("mcp-session-id")!;

    await h.send({ id: "c4", method: "session/close", params: { sessionId: "s1" } });
    const [close] = await h.take();
    await h.send({ id: close.id, result: {} });
    const disconnect = await h.next((m) => m.method === "mcp/disconnect");
    expect(disconnect.params).toEqual({ connectionId: "k1" });
    expect((await post(live, { "mcp-session-id": mcpSession })).status).toBe(404);
  });

  it("answers the agent's initialize with the connect error when no proxy owns the server", async () => {
    const h = await harness();
    await h.initialize({ http: true });
    await h.send({ id: "c2", method: "session/new", params: { cwd: "/w", mcpServers: [ACP] } });
    const setup = await h.next(); // held until the HTTP listener is up
    await h.send({ id: setup.id, result: { sessionId: "s1" } });
    const server = setup.params.params.mcpServers[0];
    const reply = fetch(server.url, {
      method: "POST",
      headers: { authorization: server.headers[0].value },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
    });
    const connect = await h.next((m) => m.method === "mcp/connect");
    await h.send({ id: connect.id, error: { code: -32601, message: "Method not found" } });
    const response = await reply;
    expect(response.headers.get("mcp-session-id")).toBeNull();
    expect(await response.json()).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found" } });
  });

  it("gives an agent without acp or http a stdio bridge command with the secret in its environment", async () => {
    const h = await harness();
    const init = await h.initialize({ http: false, sse: false });
    expect(init.result.agentCapabilities.mcpCapabilities).toEqual({ http: false, sse: false, acp: true });
    await h.send({ id: "c2", method: "session/load", params: { sessionId: "s1", cwd: "/w", mcpServers: [ACP] } });
    const [forwarded] = await h.take();
    expect(forwarded.params.params.mcpServers).toEqual([
      {
        name: "tools",
        command: "/usr/bin/node",
        args: [
          "/opt/cordon/bin/cordon.js",
          "mcp-bridge",
          "--port",
          expect.stringMatching(/^\d+$/),
          "--endpoint",
          expect.stringMatching(/^[0-9a-f-]{36}$/),
        ],
        env: [{ name: "CORDON_BRIDGE_TOKEN", value: expect.stringMatching(/^\S{40,}$/) }],
      },
    ]);
  });

  it("relays a stdio bridge connection in order: an answer and the notification after it, a message right after mcp/connect", async () => {
    const h = await harness();
    await h.initialize({});
    await h.send({ id: "c2", method: "session/new", params: { cwd: "/w", mcpServers: [ACP] } });
    const [setup] = await h.take();
    await h.send({ id: setup.id, result: { sessionId: "s1" } });
    const { args, env } = setup.params.params.mcpServers[0];
    const socket = connect({ host: "127.0.0.1", port: Number(args[3]) });
    const reader = socketLines(socket);
    const lines: Json[] = [];
    /** The first `n` lines the bridge sent. */
    const line = async (n: number) => {
      while (lines.length < n) lines.push(await reader.next());
      return lines.slice(0, n);
    };
    socket.write(JSON.stringify({ cordonBridge: 1, endpoint: args[5], token: env[0].value }) + "\n");
    expect(await line(1)).toEqual([{ cordonBridge: "ok" }]);
    socket.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }) + "\n");
    const connectRequest = await h.next((m) => m.method === "mcp/connect");
    // The proxy answers mcp/connect and at once sends a message on the new connection.
    await h.send(
      { id: connectRequest.id, result: { connectionId: "k1" } },
      { method: "mcp/message", params: { connectionId: "k1", method: "notifications/message", params: { level: "info", data: "hi" } } },
    );
    const init = await h.next((m) => m.method === "mcp/message");
    await h.send(
      { id: init.id, result: { capabilities: {} } },
      { method: "mcp/message", params: { connectionId: "k1", method: "notifications/tools/list_changed" } },
    );
    expect(await line(4)).toEqual([
      { cordonBridge: "ok" },
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hi" } },
      { jsonrpc: "2.0", id: 1, result: { capabilities: {} } },
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    ]);
    // A server → client request gets a bridge-local id; the client's answer goes back as the answer to mcp/message.
    await h.send({ id: "c7", method: "mcp/message", params: { connectionId: "k1", method: "ping" } });
    const [, , , , ping] = await line(5);
    expect(ping).toEqual({ jsonrpc: "2.0", id: expect.stringMatching(/^cordon-/), method: "ping" });
    socket.write(JSON.stringify({ jsonrpc: "2.0", id: ping.id, result: {} }) + "\n");
    expect(await h.next((m) => m.id === "c7")).toEqual({ jsonrpc: "2.0", id: "c7", result: {} });
    // The connection drops: mcp/disconnect.
    socket.destroy();
    expect((await h.next((m) => m.method === "mcp/disconnect")).params).toEqual({ connectionId: "k1" });
  });

  it("starts its listener only when a session declares an acp server; what follows the setup waits for it, in order", async () => {
    const h = await harness();
    await h.initialize({ http: true });
    await h.send({ id: "c2", method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    expect((await h.take()).map((m) => m.params.params.mcpServers)).toEqual([[]]);
    expect((h.bridge as unknown as { http: unknown }).http).toBeNull();
    await h.send(
      { id: "c3", method: "session/new", params: { cwd: "/w", mcpServers: [ACP] } },
      { id: "c4", method: "session/prompt", params: { sessionId: "s0", prompt: [] } },
      { method: "$/cancel_request", params: { requestId: "c4" } },
    );
    const cancel = await h.next((m) => m.params?.method === "$/cancel_request");
    const [setup, prompt] = await h.take();
    expect(cancel.params.params.requestId).toBe(prompt.id);
    expect(setup.params.params.mcpServers[0].type).toBe("http");
    expect(prompt.params.method).toBe("session/prompt");
  });

  it("holds the client side's messages until the agent's initialize answer decided how to bridge", async () => {
    const h = await harness();
    await h.send({ id: "c1", method: "proxy/initialize", params: {} });
    const [init] = await h.take();
    await h.send({ id: "c2", method: "session/new", params: { cwd: "/w", mcpServers: [ACP] } });
    expect(await h.take()).toEqual([]);
    await h.send({ id: init.id, result: { agentCapabilities: { mcpCapabilities: { http: true } } } });
    const setup = await h.next((m) => m.params?.method === "session/new");
    expect(setup.params.params.mcpServers[0].type).toBe("http");
  });

  it("re-issues ids and $/cancel_request per hop in both directions, and maps request-scoped elicitations", async () => {
    const h = await harness();
    await h.initialize({ acp: true });
    // Client side → agent.
    await h.send({ id: 7, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
    const [prompt] = await h.take();
    expect(prompt.method).toBe("proxy/successor");
    await h.send({ method: "$/cancel_request", params: { requestId: 7 } });
    expect(await h.take()).toEqual([
      { jsonrpc: "2.0", method: "proxy/successor", params: { method: "$/cancel_request", params: { requestId: prompt.id } } },
    ]);
    // Agent → client side, scoped to the prompt.
    await h.send({
      id: 40,
      method: "proxy/successor",
      params: { method: "elicitation/create", params: { requestId: prompt.id, message: "?" } },
    });
    const [elicit] = await h.take();
    expect(elicit).toEqual({ jsonrpc: "2.0", id: elicit.id, method: "elicitation/create", params: { requestId: 7, message: "?" } });
    await h.send({ method: "proxy/successor", params: { method: "$/cancel_request", params: { requestId: 40 } } });
    expect(await h.take()).toEqual([{ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: elicit.id } }]);
    await h.send({ id: elicit.id, result: { action: "cancel" } });
    expect(await h.take()).toEqual([{ jsonrpc: "2.0", id: 40, result: { action: "cancel" } }]);
    await h.send({ id: prompt.id, result: { stopReason: "cancelled" } });
    expect(await h.take()).toEqual([{ jsonrpc: "2.0", id: 7, result: { stopReason: "cancelled" } }]);
  });
});

describe("MCP bridge peer, auto form: the connection form first, the connectionless form for providers without mcp/connect", () => {
  /** Sets up a session declaring `server`; returns how to open stdio bridge connections to its endpoint. */
  async function bridged(h: Awaited<ReturnType<typeof harness>>, sessionId = "s1", server: Json = ACP) {
    await h.send({ id: `setup-${sessionId}`, method: "session/new", params: { cwd: "/w", mcpServers: [server] } });
    const setup = await h.next((m) => m.params?.method === "session/new");
    await h.send({ id: setup.id, result: { sessionId } });
    await h.next((m) => m.id === `setup-${sessionId}`);
    const { args, env } = setup.params.params.mcpServers[0];
    const open = async () => {
      const socket = connect({ host: "127.0.0.1", port: Number(args[3]) });
      const reader = socketLines(socket);
      const write = (m: Json) => socket.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
      socket.write(JSON.stringify({ cordonBridge: 1, endpoint: args[5], token: env[0].value }) + "\n");
      expect(await reader.next()).toEqual({ cordonBridge: "ok" });
      return { socket, write, line: reader.next, unread: reader.unread };
    };
    return { ...(await open()), open };
  }
  const META = (extra: Json = {}) => ({
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { roots: {} },
    "io.modelcontextprotocol/clientInfo": { name: "agent", version: "1" },
    ...extra,
  });
  const INIT = { protocolVersion: "2025-11-25", capabilities: { roots: {} }, clientInfo: { name: "agent", version: "1" } };
  /** The link opens with mcp/connect; a provider that knows only the connectionless form refuses it. */
  const refuseConnect = async (h: Awaited<ReturnType<typeof harness>>, serverId = "srv-1") => {
    const connect = await h.next((m) => m.method === "mcp/connect");
    expect(connect.params).toEqual({ serverId });
    await h.send({ id: connect.id, error: { code: -32601, message: "Method not found: mcp/connect" } });
  };

  it("sends each MCP request as mcp/message {serverId, requestId, method, params} with MCP metadata, and unwraps {result} / {error}", async () => {
    const h = await harness("auto");
    await h.initialize({});
    const c = await bridged(h);
    c.write({ id: 1, method: "initialize", params: INIT });
    await refuseConnect(h);
    const init = await h.next((m) => m.method === "mcp/message");
    expect(init).toEqual({
      jsonrpc: "2.0",
      id: init.id,
      method: "mcp/message",
      params: {
        serverId: "srv-1",
        requestId: expect.stringMatching(/^cordon:[0-9a-f-]{36}$/),
        method: "initialize",
        params: { ...INIT, _meta: META() },
      },
    });
    await h.send({
      id: init.id,
      result: { result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "t", version: "1" } } },
    });
    expect(await c.line()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "t", version: "1" } },
    });
    // Client notifications have no place in the connectionless form.
    c.write({ method: "notifications/initialized" });
    // An inner MCP error is the client's error; a caller's own _meta is kept.
    c.write({ id: 2, method: "tools/call", params: { name: "x", _meta: { progressToken: 5 } } });
    const call = await h.next((m) => m.method === "mcp/message");
    expect(call.params).toEqual({
      serverId: "srv-1",
      requestId: expect.any(String),
      method: "tools/call",
      params: { name: "x", _meta: META({ progressToken: 5 }) },
    });
    expect(call.params.requestId).not.toBe(init.params.requestId);
    // The provider's notification for the request in flight reaches the client before the answer.
    await h.send(
      {
        method: "mcp/message",
        params: {
          serverId: "srv-1",
          requestId: call.params.requestId,
          method: "notifications/progress",
          params: { progressToken: 5, progress: 1 },
        },
      },
      { id: call.id, result: { error: { code: -32602, message: "Unknown tool: x" } } },
    );
    expect(await c.line()).toEqual({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 5, progress: 1 } });
    expect(await c.line()).toEqual({ jsonrpc: "2.0", id: 2, error: { code: -32602, message: "Unknown tool: x" } });
    // An outer error (a binding failure) too.
    c.write({ id: 3, method: "tools/list" });
    const list = await h.next((m) => m.method === "mcp/message");
    expect(list.params.params).toEqual({ _meta: META() });
    await h.send({ id: list.id, error: { code: -33001, message: "MCP server registration unavailable" } });
    expect(await c.line()).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -33001, message: "MCP server registration unavailable" } });
    // Once the form is known, a malformed carrier is an error (no fallback); notifications after the answer are not delivered.
    c.write({ id: 4, method: "ping" });
    const ping = await h.next((m) => m.method === "mcp/message");
    await h.send(
      { id: ping.id, result: {} },
      { method: "mcp/message", params: { serverId: "srv-1", requestId: ping.params.requestId, method: "notifications/late" } },
    );
    expect(await c.line()).toMatchObject({ id: 4, error: { code: -32603 } });
    // notifications/cancelled for a call in flight withdraws the outer request.
    c.write({ id: 5, method: "tools/call", params: { name: "slow" } });
    const slow = await h.next((m) => m.method === "mcp/message");
    c.write({ method: "notifications/cancelled", params: { requestId: 5 } });
    expect(await h.next((m) => m.method === "$/cancel_request")).toEqual({
      jsonrpc: "2.0",
      method: "$/cancel_request",
      params: { requestId: slow.id },
    });
    await h.send({ id: slow.id, error: { code: -32800, message: "Request cancelled" } });
    expect(await c.line()).toEqual({ jsonrpc: "2.0", id: 5, error: { code: -32800, message: "Request cancelled" } });
    // Nothing else went upstream (no mcp/connect, no notification), nothing else reached the client.
    expect((await h.take()).filter((m) => m.method !== undefined)).toEqual([]);
    expect(c.unread()).toEqual([]);
    // The connection closes: in-flight calls are withdrawn; no mcp/disconnect in this form.
    c.write({ id: 6, method: "tools/call", params: { name: "slow" } });
    const pending = await h.next((m) => m.method === "mcp/message");
    c.socket.destroy();
    expect(await h.next((m) => m.method === "$/cancel_request")).toMatchObject({ params: { requestId: pending.id } });
    expect((await h.take()).filter((m) => m.method === "mcp/disconnect")).toEqual([]);
  });

  it("speaks the connection form to a provider that answers mcp/connect, both ways, and remembers that per server", async () => {
    const h = await harness("auto");
    await h.initialize({});
    const c = await bridged(h);
    c.write({ id: 1, method: "initialize", params: INIT });
    const connect = await h.next((m) => m.method === "mcp/connect");
    expect(connect.params).toEqual({ serverId: "srv-1" });
    await h.send({ id: connect.id, result: { connectionId: "k1" } });
    const init = await h.next((m) => m.method === "mcp/message");
    expect(init.params).toEqual({ connectionId: "k1", method: "initialize", params: INIT });
    await h.send({ id: init.id, result: { capabilities: {} } });
    expect(await c.line()).toEqual({ jsonrpc: "2.0", id: 1, result: { capabilities: {} } });
    c.write({ method: "notifications/initialized" });
    expect((await h.next((m) => m.method === "mcp/message")).params).toEqual({ connectionId: "k1", method: "notifications/initialized" });
    // The server's own request reaches the client under a bridge-local id; the answer goes back as the answer to mcp/message.
    await h.send({ id: 70, method: "mcp/message", params: { connectionId: "k1", method: "roots/list", params: {} } });
    const asked = await c.line();
    expect(asked).toEqual({ jsonrpc: "2.0", id: asked.id, method: "roots/list", params: {} });
    c.write({ id: asked.id, result: { roots: [{ uri: "file:///w" }] } });
    expect(await h.next((m) => m.id === 70)).toEqual({ jsonrpc: "2.0", id: 70, result: { roots: [{ uri: "file:///w" }] } });
    // And its notification, outside any request.
    await h.send({ method: "mcp/message", params: { connectionId: "k1", method: "notifications/tools/list_changed" } });
    expect(await c.line()).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    // A second MCP session on the same server connects at once.
    const again = await c.open();
    again.write({ id: 1, method: "initialize", params: INIT });
    const second = await h.next((m) => m.method === "mcp/connect" || m.method === "mcp/message");
    expect(second).toMatchObject({ method: "mcp/connect", params: { serverId: "srv-1" } });
    await h.send({ id: second.id, result: { connectionId: "k2" } });
    expect((await h.next((m) => m.method === "mcp/message")).params).toEqual({ connectionId: "k2", method: "initialize", params: INIT });
    again.socket.destroy();
    expect((await h.next((m) => m.method === "mcp/disconnect")).params).toEqual({ connectionId: "k2" });
  });

  it("answers initialize itself for a provider without MCP's handshake (MCP 2026-07-28: initialize is method-not-found)", async () => {
    const h = await harness("auto");
    await h.initialize({});
    const c = await bridged(h);
    c.write({ id: 1, method: "initialize", params: INIT });
    await refuseConnect(h);
    const init = await h.next((m) => m.method === "mcp/message");
    await h.send({ id: init.id, result: { error: { code: -32601, message: "Method not found" } } });
    // It asks the server what it serves: one list of each kind; a kind is advertised when its list is answered.
    const probes = [];
    for (let i = 0; i < 3; i++) probes.push(await h.next((m) => m.method === "mcp/message"));
    expect(probes.map((m) => m.params.method).sort()).toEqual(["prompts/list", "resources/list", "tools/list"]);
    for (const m of probes)
      expect(m.params).toMatchObject({ serverId: "srv-1", requestId: expect.stringMatching(/^cordon:/), params: { _meta: META() } });
    const answers: Record<string, Json> = {
      "tools/list": { result: { tools: [] } },
      "resources/list": { result: { resources: [] } },
      "prompts/list": { error: { code: -32601, message: "Method not found" } },
    };
    await h.send(...probes.map((m) => ({ id: m.id, result: answers[m.params.method] })));
    expect(await c.line()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {}, resources: {} },
        serverInfo: { name: "tools", version: "0.0.0" },
      },
    });
    c.write({ id: 2, method: "tools/list", params: {} });
    const list = await h.next((m) => m.method === "mcp/message");
    expect(list.params).toMatchObject({ serverId: "srv-1", method: "tools/list", params: { _meta: META() } });
    await h.send({ id: list.id, result: { result: { tools: [] } } });
    expect(await c.line()).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: [] } });
    // Any other method-not-found is the client's error.
    c.write({ id: 3, method: "prompts/list", params: {} });
    const prompts = await h.next((m) => m.method === "mcp/message");
    await h.send({ id: prompts.id, result: { error: { code: -32601, message: "Method not found" } } });
    expect(await c.line()).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32601, message: "Method not found" } });
  });

  it("remembers a provider without mcp/connect (no second probe); answers with the connectionless error when no one owns the server", async () => {
    const h = await harness("auto");
    await h.initialize({});
    const c = await bridged(h);
    c.write({ id: 1, method: "initialize", params: INIT });
    await refuseConnect(h);
    const init = await h.next((m) => m.method === "mcp/message");
    expect(init.params.serverId).toBe("srv-1");
    await h.send({ id: init.id, result: { result: { capabilities: {} } } });
    expect(await c.line()).toEqual({ jsonrpc: "2.0", id: 1, result: { capabilities: {} } });
    const again = await c.open();
    again.write({ id: 1, method: "initialize", params: INIT });
    expect((await h.next((m) => m.method === "mcp/connect" || m.method === "mcp/message")).params).toMatchObject({
      serverId: "srv-1",
      method: "initialize",
    });

    const ghost = await bridged(h, "s2", { type: "acp", name: "ghost", serverId: "ghost-1" });
    ghost.write({ id: 1, method: "initialize", params: INIT });
    await refuseConnect(h, "ghost-1");
    const asked = await h.next((m) => m.method === "mcp/message");
    expect(asked.params.serverId).toBe("ghost-1");
    await h.send({ id: asked.id, error: { code: -32601, message: "Method not found: mcp/message" } });
    expect(await ghost.line()).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found: mcp/message" } });
    ghost.write({ id: 2, method: "tools/list" });
    const retried = await h.next((m) => m.method === "mcp/connect" || m.method === "mcp/message");
    expect(retried.method).toBe("mcp/message"); // nothing learned of ghost-1, but this link has chosen its form
  });
});

describe("routing past the bridge (Peer.passes, whenIdle)", () => {
  const call = (method: string) => ({ jsonrpc: "2.0" as const, id: 9, method, params: {} });

  it("passes nothing until the agent's initialize answer; then what it would forward untouched", async () => {
    const { bridge, initialize } = await harness();
    expect(bridge.passes(call("session/prompt"), false)).toBe(false); // pending
    await initialize({ http: true });
    expect(bridge.passes(call("session/prompt"), false)).toBe(true);
    expect(bridge.passes(call("_vendor/thing"), false)).toBe(true);
    expect(bridge.passes(call("session/update"), true)).toBe(true);
    for (const method of [
      "session/new",
      "session/load",
      "session/resume",
      "session/fork",
      "session/close",
      "session/delete",
      "mcp/message",
    ]) {
      expect(bridge.passes(call(method), false), method).toBe(false);
    }
  });

  it("passes everything once the agent speaks MCP-over-ACP itself", async () => {
    const { bridge, initialize } = await harness();
    await initialize({ acp: true });
    expect(bridge.passes(call("session/new"), false)).toBe(true);
    expect(bridge.passes(call("mcp/message"), false)).toBe(true);
  });

  it("passes nothing and answers wait while it has messages queued", async () => {
    const { bridge, initialize } = await harness();
    await initialize({ acp: true });
    bridge.send(call("session/prompt"));
    expect(bridge.passes(call("session/prompt"), false)).toBe(false);
    let ran = false;
    bridge.whenIdle(() => (ran = true));
    expect(ran).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(true);
    expect(bridge.passes(call("session/prompt"), false)).toBe(true);
  });
});
