// MCP servers in the SDK: declaration in every session setup request, both MCP-over-ACP forms,
// tool calls with their ACP session, errors, cancellation — all through the real .wasm.
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import {
  agentRequest,
  INIT_RESULT,
  type Json,
  loadFixture,
  mcpConnect,
  mcpProxyUnderTest,
  mcpRequest,
  newSession,
  ProxyUnderTest,
  proxyUnderTest,
  setupSession,
  toolText,
} from "./harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadFixture("mcp-tools");
}, 180_000); // a build under load can take minutes

const fromAgent = ProxyUnderTest.fromAgent;

/** The declared serverId of server `name` among declarations. */
function idOf(declared: Json[], name: string): string {
  const d = declared.find((s) => s.name === name);
  if (!d) throw new Error(`no declaration of ${name} in ${JSON.stringify(declared)}`);
  return d.serverId;
}

describe("declaring the proxy's MCP servers", () => {
  it("appends {type: acp, name, serverId} for each server to every session setup request, with fresh serverIds", async () => {
    const p = await mcpProxyUnderTest(component);
    const other = { type: "http", name: "theirs", url: "http://127.0.0.1:1/mcp", headers: [] };
    const created = setupSession(p, "session/new", { cwd: "/w", mcpServers: [other] }, { sessionId: "s1" });
    expect(created.forwarded.mcpServers[0]).toEqual(other);
    expect(created.declared.map((d) => Object.keys(d).sort().join(","))).toEqual(["name,serverId,type", "name,serverId,type"]);
    expect(created.declared.map((d) => d.name)).toEqual(["alpha", "beta"]);
    expect(created.answer.result).toEqual({ sessionId: "s1" });

    const loaded = setupSession(p, "session/load", { sessionId: "s0", cwd: "/w", mcpServers: [] }, {});
    const resumed = setupSession(p, "session/resume", { sessionId: "s1", cwd: "/w" }, {}); // no mcpServers member
    const forked = setupSession(p, "session/fork", { sessionId: "s1", cwd: "/w", mcpServers: [] }, { sessionId: "s2" });
    for (const s of [loaded, resumed, forked]) expect(s.declared.map((d) => d.name)).toEqual(["alpha", "beta"]);
    expect(resumed.forwarded).toEqual({ mcpServers: resumed.declared, sessionId: "s1", cwd: "/w" });

    const ids = [created, loaded, resumed, forked].flatMap((s) => s.declared.map((d) => d.serverId));
    expect(new Set(ids).size).toBe(8);
    for (const id of ids) expect(id).toMatch(/^mcp:under-test:[0-9a-f]{8}:(alpha|beta)\/\d+$/);

    // every serverId knows its own session
    const sessionOf = (serverId: string) => toolText(mcpRequest(p, { serverId }, "tools/call", { name: "whoami" }).result);
    expect(sessionOf(idOf(created.declared, "beta"))).toContain("session=s1 known=s1");
    expect(sessionOf(idOf(loaded.declared, "beta"))).toContain("session=s0");
    expect(sessionOf(idOf(resumed.declared, "beta"))).toContain("session=s1");
    expect(sessionOf(idOf(forked.declared, "beta"))).toContain("session=s2");
    // s1 has two declarations of each server (new + resume)
    expect(sessionOf(idOf(created.declared, "beta"))).toContain("servers=4");
  });

  it("splices the declarations into the received text and adds mcpServers where it is missing", async () => {
    const p = await mcpProxyUnderTest(component);
    for (const [params, fill] of [
      ['{"cwd":"/w" , "mcpServers" : [ ] ,"n":1.50}', (d: string) => `{"cwd":"/w" , "mcpServers" : [ ${d}] ,"n":1.50}`],
      [
        '{"cwd":"/w","mcpServers":[{"name":"x","command":"x","args":[],"env":[]}],"_meta":{"a":1e3}}',
        (d: string) => `{"cwd":"/w","mcpServers":[{"name":"x","command":"x","args":[],"env":[]},${d}],"_meta":{"a":1e3}}`,
      ],
      ['{"sessionId":"s","cwd":"/w"}', (d: string) => `{"mcpServers":[${d}],"sessionId":"s","cwd":"/w"}`],
      ["{}", (d: string) => `{"mcpServers":[${d}]}`],
    ] as const) {
      const [out] = p.deliverRaw(`{"jsonrpc":"2.0","id":1,"method":"session/fork","params":${params}}`);
      const sent = JSON.parse(out);
      const decls = sent.params.params.mcpServers
        .filter((s: Json) => s.type === "acp")
        .map((s: Json) => JSON.stringify(s))
        .join(",");
      expect(out).toBe(
        `{"jsonrpc":"2.0","id":${sent.id},"method":"proxy/successor","params":{"method":"session/fork","params":${fill(decls)}}}`,
      );
      p.deliver({ jsonrpc: "2.0", id: sent.id, result: { sessionId: "f" } });
    }
  });

  it("replaces an mcpServers that is not an array (null) with one holding the declarations", async () => {
    const p = await mcpProxyUnderTest(component);
    const { forwarded, declared } = setupSession(p, "session/resume", { sessionId: "s", cwd: "/w", mcpServers: null, n: 1 }, {});
    expect(forwarded).toEqual({ sessionId: "s", cwd: "/w", mcpServers: declared, n: 1 });
    expect(declared).toHaveLength(2);
  });

  it("declares nothing (and warns once) when the agent side does not advertise mcpCapabilities.acp", async () => {
    const p = await proxyUnderTest(component, {}, { agentResult: INIT_RESULT });
    expect(newSession(p, "s1")).toEqual([]);
    expect(newSession(p, "s2")).toEqual([]);
    expect(p.logs.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([
      "the agent side does not advertise mcpCapabilities.acp; MCP server alpha is not declared",
    ]);
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 9, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    expect(fwd.params.params).toEqual({ cwd: "/w", mcpServers: [] });
  });

  it("uses the names set in onConfigure, and forgets serverIds of a failed setup and of a closed session", async () => {
    const p = await mcpProxyUnderTest(component, { rename: "gamma" });
    const id = p.nextId();
    const [fwd] = p.deliver({ jsonrpc: "2.0", id, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    const failed = fwd.params.params.mcpServers;
    expect(failed.map((d: Json) => d.name)).toEqual(["gamma", "beta"]);
    expect(p.deliver({ jsonrpc: "2.0", id: fwd.id, error: { code: -32602, message: "no" } })).toEqual([
      { jsonrpc: "2.0", id, error: { code: -32602, message: "no" } },
    ]);
    const gone = agentRequest(p, "mcp/connect", { serverId: failed[0].serverId });
    expect(gone.error).toEqual({ code: -33001, message: `unknown MCP server ${failed[0].serverId}` });

    const declared = newSession(p, "s1");
    const conn = mcpConnect(p, idOf(declared, "gamma"));
    const [close] = p.deliver({ jsonrpc: "2.0", id: 50, method: "session/close", params: { sessionId: "s1" } });
    p.deliver({ jsonrpc: "2.0", id: close.id, result: {} });
    expect(mcpRequest(p, { serverId: idOf(declared, "beta") }, "ping").error?.code).toBe(-33001);
    expect(mcpRequest(p, { connectionId: conn }, "ping").error).toEqual({ code: -32602, message: `unknown MCP connection ${conn}` });
  });
});

describe("the connection form", () => {
  it("connect, initialize, initialized, tools/list, tools/call, ping, disconnect", async () => {
    const p = await mcpProxyUnderTest(component);
    const declared = newSession(p, "sess-A");
    const serverId = idOf(declared, "alpha");
    const connectionId = mcpConnect(p, serverId);
    expect(connectionId.startsWith(`${serverId}#`)).toBe(true);
    expect(mcpConnect(p, serverId)).not.toBe(connectionId); // several connections to one server

    const init = mcpRequest(p, { connectionId }, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "c", version: "1" },
    });
    expect(init.result).toEqual({
      protocolVersion: "2025-06-18",
      capabilities: { tools: { listChanged: true } }, // a connection can carry list_changed
      serverInfo: { name: "alpha", version: "0.1.0" },
    });
    expect(mcpRequest(p, { connectionId }, "initialize", { protocolVersion: "1999-01-01" }).result.protocolVersion).toBe("2025-11-25");
    expect(p.deliver(fromAgent({ method: "mcp/message", params: { connectionId, method: "notifications/initialized" } }))).toEqual([]);

    const list = mcpRequest(p, { connectionId }, "tools/list", {});
    expect(list.result.tools.map((t: Json) => t.name)).toEqual(["echo", "fail", "later", "trap", "structured", "bad"]);
    expect(list.result.tools[0]).toEqual({
      name: "echo",
      description: "Echoes its arguments, the ACP session and the server",
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
    });
    expect(list.result.tools[1].inputSchema).toEqual({ type: "object", properties: {} });

    const call = mcpRequest(p, { connectionId }, "tools/call", { name: "echo", arguments: { text: 'hé "q"', n: 7 } });
    expect(call.result).toEqual({
      content: [{ type: "text", text: `alpha/echo in sess-A via connection: text=hé "q" n=7 args={"text":"hé \\"q\\"","n":7}` }],
    });
    expect(call.others).toEqual([]);
    expect(mcpRequest(p, { connectionId }, "ping").result).toEqual({});

    expect(agentRequest(p, "mcp/disconnect", { connectionId }).result).toEqual({});
    expect(mcpRequest(p, { connectionId }, "ping").error).toEqual({ code: -32602, message: `unknown MCP connection ${connectionId}` });
    expect(agentRequest(p, "mcp/disconnect", { connectionId }).error.code).toBe(-32602);
    // the notification spelling of disconnect (older dialect) is taken quietly
    const other = mcpConnect(p, serverId);
    expect(p.deliver(fromAgent({ method: "mcp/disconnect", params: { connectionId: other } }))).toEqual([]);
    expect(mcpRequest(p, { connectionId: other }, "ping").error?.code).toBe(-32602);
  });

  it("MCP errors are the outer error; tool errors are results with isError", async () => {
    const p = await mcpProxyUnderTest(component);
    const connectionId = mcpConnect(p, idOf(newSession(p, "s"), "alpha"));
    expect(mcpRequest(p, { connectionId }, "tools/call", { name: "fail", arguments: { why: "disk full" } }).result).toEqual({
      content: [{ type: "text", text: "it failed: disk full" }],
      isError: true,
    });
    expect(mcpRequest(p, { connectionId }, "tools/call", { name: "nope" }).error).toEqual({ code: -32602, message: "Unknown tool: nope" });
    expect(mcpRequest(p, { connectionId }, "resources/list", {}).error).toEqual({
      code: -32601,
      message: "Method not found: resources/list",
    });
    expect(mcpRequest(p, { connectionId }, "tools/call", { name: "structured" }).result).toEqual({
      content: [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ],
      structuredContent: { n: 2 },
    });
    expect(mcpRequest(p, { connectionId }, "tools/call", { name: "bad" }).error).toEqual({ code: -32602, message: "bad arguments" });
    expect(p.logs.map((l) => l.message)).toContain("tool call bad was already answered");
  });
});

describe("the connectionless form", () => {
  it("answers {result} or {error} inside a successful response, with the right session", async () => {
    const p = await mcpProxyUnderTest(component);
    const serverId = idOf(newSession(p, "sess-B"), "alpha");
    const init = mcpRequest(p, { serverId }, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "agent", version: "1" },
      _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
    });
    expect(init.result).toEqual({
      protocolVersion: "2025-11-25",
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: "alpha", version: "0.1.0" },
    });
    // The connectionless form carries the MCP outcome inside a successful answer; mcpRequest reads it out.
    expect(init.answer.result).toEqual({ result: init.result });
    expect(mcpRequest(p, { serverId }, "tools/list").result.tools).toHaveLength(6);
    const call = mcpRequest(p, { serverId }, "tools/call", { name: "echo", arguments: { text: "x" } });
    expect(toolText(call.result)).toBe('alpha/echo in sess-B via connectionless: text=x n=-1 args={"text":"x"}');
    expect(mcpRequest(p, { serverId }, "tools/call", { name: "fail" }).result).toEqual({
      content: [{ type: "text", text: "it failed: no reason" }],
      isError: true,
    });
    const nope = mcpRequest(p, { serverId }, "tools/call", { name: "nope" });
    expect(nope.error).toEqual({ code: -32602, message: "Unknown tool: nope" });
    expect(nope.answer.result).toEqual({ error: nope.error }); // an MCP error, inside a successful mcp/message answer
    expect(mcpRequest(p, { serverId }, "prompts/list").error).toEqual({ code: -32601, message: "Method not found: prompts/list" });
    expect(mcpRequest(p, { serverId }, "ping").result).toEqual({});
  });

  it("serves several servers, each with its own name, version and instructions", async () => {
    const p = await mcpProxyUnderTest(component);
    const declared = newSession(p, "s");
    const beta = idOf(declared, "beta");
    expect(mcpRequest(p, { serverId: beta }, "initialize", { protocolVersion: "2025-03-26" }).result).toEqual({
      protocolVersion: "2025-03-26",
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: "beta", version: "2.0.0" },
      instructions: "Beta tools.",
    });
    expect(mcpRequest(p, { serverId: beta }, "tools/list").result.tools.map((t: Json) => t.name)).toEqual(["whoami"]);
    expect(toolText(mcpRequest(p, { serverId: beta }, "tools/call", { name: "whoami" }).result)).toBe(
      `beta 2.0.0 ${beta} session=s known=s servers=2`,
    );
    expect(mcpRequest(p, { serverId: beta }, "tools/call", { name: "echo" }).error?.message).toBe("Unknown tool: echo");
  });
});

describe("traffic that is not the proxy's, and bad input", () => {
  it("forwards mcp/* for servers and connections it does not own unchanged, toward the client", async () => {
    const p = await mcpProxyUnderTest(component);
    newSession(p, "s");
    for (const params of [
      { serverId: "client-server:1" },
      { connectionId: "mcp-connection:9", method: "tools/list" },
      { serverId: "someone-else", requestId: "r1", method: "tools/call", params: { name: "x" } },
      { connectionId: "c" },
      { requestId: 1, method: "tools/list" }, // neither serverId nor connectionId
    ]) {
      for (const method of ["mcp/connect", "mcp/message", "mcp/disconnect"]) {
        const [out] = p.deliver(fromAgent({ method, params }, "f1"));
        expect(out).toEqual({ jsonrpc: "2.0", id: out.id, method, params });
        expect(p.deliver({ jsonrpc: "2.0", id: out.id, result: { from: "client" } })).toEqual([
          { jsonrpc: "2.0", id: "f1", result: { from: "client" } },
        ]);
        expect(p.deliver(fromAgent({ method, params }))).toEqual([{ jsonrpc: "2.0", method, params }]);
      }
    }
    // and before any session was set up, everything passes
    const fresh = await mcpProxyUnderTest(component);
    expect(fresh.deliver(fromAgent({ method: "mcp/connect", params: { serverId: "mcp:under-test:00000000:alpha/1" } }, 3))[0].method).toBe(
      "mcp/connect",
    );
  });

  it("refuses unknown ids under its own prefix and malformed MCP messages, and keeps serving", async () => {
    const p = await mcpProxyUnderTest(component);
    const serverId = idOf(newSession(p, "s"), "alpha");
    const prefix = serverId.slice(0, serverId.lastIndexOf(":") + 1);
    expect(agentRequest(p, "mcp/connect", { serverId: `${prefix}alpha/999` }).error).toEqual({
      code: -33001,
      message: `unknown MCP server ${prefix}alpha/999`,
    });
    expect(mcpRequest(p, { connectionId: `${serverId}#77` }, "ping").error).toEqual({
      code: -32602,
      message: `unknown MCP connection ${serverId}#77`,
    });
    expect(mcpRequest(p, { serverId: `${prefix}zeta/1` }, "ping").error?.code).toBe(-33001);
    expect(
      p.deliver(fromAgent({ method: "mcp/message", params: { connectionId: `${serverId}#77`, method: "notifications/initialized" } })),
    ).toEqual([]);

    const connectionId = mcpConnect(p, serverId);
    expect(agentRequest(p, "mcp/message", { connectionId, params: {} }).error).toEqual({
      code: -32602,
      message: "mcp/message needs params {connectionId, method, params?}",
    });
    expect(agentRequest(p, "mcp/message", { serverId, requestId: "r", method: 7 }).error).toEqual({
      code: -32602,
      message: "mcp/message needs params {serverId, requestId, method, params?}",
    });
    expect(mcpRequest(p, { connectionId }, "tools/call", [1, 2]).error).toEqual({ code: -32602, message: "MCP params must be an object" });
    expect(mcpRequest(p, { connectionId }, "tools/call", { arguments: {} }).error).toEqual({
      code: -32602,
      message: "tools/call needs params {name, arguments?}",
    });
    expect(mcpRequest(p, { connectionId }, "tools/call", { name: "echo", arguments: "x" }).error).toEqual({
      code: -32602,
      message: "tools/call arguments must be an object",
    });
    expect(mcpRequest(p, { serverId }, "tools/call", { name: "echo", arguments: null }).result.content[0].text).toContain("args={}");
    expect(toolText(mcpRequest(p, { connectionId }, "tools/call", { name: "echo" }).result)).toContain("text=-");
  });

  it("a tool that traps kills the instance (the conductor answers what was inside it)", async () => {
    const p = await mcpProxyUnderTest(component);
    const serverId = idOf(newSession(p, "s"), "alpha");
    expect(() => mcpRequest(p, { serverId }, "tools/call", { name: "trap" })).toThrow(/unreachable/);
    expect(() => mcpRequest(p, { serverId }, "ping")).toThrow();
  });
});

describe("calls answered later, cancelled calls, sessions that do not cross", () => {
  it("a held call is answered later under the mcp/message id", async () => {
    const p = await mcpProxyUnderTest(component);
    const serverId = idOf(newSession(p, "sess-L"), "alpha");
    const id = "held-1";
    expect(
      p.deliver(
        fromAgent({ method: "mcp/message", params: { serverId, requestId: "r5", method: "tools/call", params: { name: "later" } } }, id),
      ),
    ).toEqual([]);
    const out = p.deliver({ jsonrpc: "2.0", id: 1, method: "_x/finish", params: {} });
    expect(out).toEqual([
      { jsonrpc: "2.0", id, result: { result: { content: [{ type: "text", text: "finally sess-L" }] } } },
      { jsonrpc: "2.0", id: 1, result: { had: true, cancelled: "", available: true } },
    ]);
  });

  it("$/cancel_request for a held call answers it cancelled, tells the proxy, and drops the late answer", async () => {
    const p = await mcpProxyUnderTest(component);
    const connectionId = mcpConnect(p, idOf(newSession(p, "s"), "alpha"));
    expect(
      p.deliver(fromAgent({ method: "mcp/message", params: { connectionId, method: "tools/call", params: { name: "later" } } }, 41)),
    ).toEqual([]);
    expect(p.deliver(fromAgent({ method: "$/cancel_request", params: { requestId: 41 } }))).toEqual([
      { jsonrpc: "2.0", id: 41, error: { code: -32800, message: "Request cancelled" } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: 2, method: "_x/finish" })).toEqual([
      { jsonrpc: "2.0", id: 2, result: { had: false, cancelled: "later", available: true } },
    ]);
    // cancelling an answered call does nothing
    mcpRequest(p, { connectionId }, "ping");
    expect(p.deliver(fromAgent({ method: "$/cancel_request", params: { requestId: 41 } }))).toEqual([]);
  });

  it("calls of two sessions, interleaved, each see their own session", async () => {
    const p = await mcpProxyUnderTest(component);
    const a = idOf(newSession(p, "sess-1"), "alpha");
    const b = idOf(newSession(p, "sess-2"), "alpha");
    const ca = mcpConnect(p, a);
    const cb = mcpConnect(p, b);
    for (let i = 0; i < 3; i++) {
      expect(toolText(mcpRequest(p, { connectionId: cb }, "tools/call", { name: "echo" }).result)).toContain("in sess-2 via connection");
      expect(toolText(mcpRequest(p, { serverId: a }, "tools/call", { name: "echo" }).result)).toContain("in sess-1 via connectionless");
      expect(toolText(mcpRequest(p, { connectionId: ca }, "tools/call", { name: "echo" }).result)).toContain("in sess-1 via connection");
      expect(toolText(mcpRequest(p, { serverId: b }, "tools/call", { name: "echo" }).result)).toContain("in sess-2 via connectionless");
    }
  });
});
