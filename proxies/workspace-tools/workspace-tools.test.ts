import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { configProblems } from "../../runtime/sandbox/manifest.js";
import {
  agentUpdate,
  clientUpdate,
  exampleManifest,
  INIT_PARAMS,
  type Json,
  loadExampleProxy,
  mcpConnect,
  mcpProxyUnderTest,
  mcpRequest,
  newSession,
  ProxyUnderTest,
  setupSession,
  textChunk,
  toolText,
} from "../../sdk-as/test/harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadExampleProxy("workspace-tools");
});

/** One prompt turn: the prompt goes to the agent, the agent streams `answer` in chunks, the turn ends. */
function turn(p: ProxyUnderTest, sessionId: string, prompt: string, answer: string[]): void {
  const id = p.nextId();
  const [fwd] = p.deliver({
    jsonrpc: "2.0",
    id,
    method: "session/prompt",
    params: { sessionId, prompt: [{ type: "text", text: prompt }] },
  });
  expect(fwd.params.params.prompt).toEqual([{ type: "text", text: prompt }]);
  for (const chunk of answer)
    expect(p.deliver(agentUpdate(textChunk(chunk), sessionId))).toEqual([clientUpdate(textChunk(chunk), sessionId)]);
  expect(p.deliver({ jsonrpc: "2.0", id: fwd.id, result: { stopReason: "end_turn" } })).toEqual([
    { jsonrpc: "2.0", id, result: { stopReason: "end_turn" } },
  ]);
}

/** Both MCP forms for one declared server: a tools/call through each, returning the two results. */
function callBoth(p: ProxyUnderTest, serverId: string, tool: string, args: Json): Json[] {
  const connectionId = mcpConnect(p, serverId);
  const viaConnection = mcpRequest(p, { connectionId }, "tools/call", { name: tool, arguments: args });
  const connectionless = mcpRequest(p, { serverId }, "tools/call", { name: tool, arguments: args });
  return [viaConnection.result, connectionless.result];
}

describe("workspace-tools: the MCP server", () => {
  it("declares `workspace` with recall and read_file, and lists them in both forms", async () => {
    const p = await mcpProxyUnderTest(component);
    const [decl] = newSession(p, "s1");
    expect(decl).toMatchObject({ type: "acp", name: "workspace" });
    const connectionId = mcpConnect(p, decl.serverId);
    for (const listed of [
      mcpRequest(p, { connectionId }, "tools/list").result,
      mcpRequest(p, { serverId: decl.serverId }, "tools/list").result,
    ]) {
      expect(listed.tools.map((t: Json) => t.name)).toEqual(["recall", "read_file"]);
      expect(listed.tools[0].inputSchema.required).toEqual(["query"]);
      expect(listed.tools[1].inputSchema.properties.path.type).toBe("string");
    }
    const renamed = await mcpProxyUnderTest(component, { serverName: "ws" });
    expect(newSession(renamed, "s1")[0].name).toBe("ws");
  });
});

describe("workspace-tools: recall", () => {
  it("finds earlier prompts and answers of this session, in both MCP forms", async () => {
    const p = await mcpProxyUnderTest(component);
    const [decl] = newSession(p, "s1");
    turn(p, "s1", "The deploy key lives in vault path secret/deploy", ["Noted: ", "the deploy key is in the vault."]);
    turn(p, "s1", "What is the capital of France?", ["Paris."]);
    for (const result of callBoth(p, decl.serverId, "recall", { query: "deploy vault" })) {
      expect(result.isError).toBeUndefined();
      expect(toolText(result)).toBe(
        [
          '2 earlier entries match "deploy vault" (showing 2):',
          "[turn 1, agent] Noted: the deploy key is in the vault.",
          "[turn 1, user] The deploy key lives in vault path secret/deploy",
        ].join("\n"),
      );
    }
    const [paris] = callBoth(p, decl.serverId, "recall", { query: "PARIS", limit: 1 });
    expect(toolText(paris)).toBe('1 earlier entry matches "PARIS" (showing 1):\n[turn 2, agent] Paris.');
    const [none] = callBoth(p, decl.serverId, "recall", { query: "kubernetes" });
    expect(toolText(none)).toBe('No earlier prompt or answer of this session mentions "kubernetes".');
    const [latest] = callBoth(p, decl.serverId, "recall", { query: "", limit: 2 });
    expect(toolText(latest)).toBe("The 2 latest entries:\n[turn 2, agent] Paris.\n[turn 2, user] What is the capital of France?");
  });

  it("two sessions never see each other's conversation", async () => {
    const p = await mcpProxyUnderTest(component);
    const [a] = newSession(p, "sess-a");
    const [b] = newSession(p, "sess-b");
    turn(p, "sess-a", "alpha project uses postgres", ["ok postgres"]);
    turn(p, "sess-b", "beta project uses sqlite", ["ok sqlite"]);
    for (const r of callBoth(p, a.serverId, "recall", { query: "project" })) {
      expect(toolText(r)).toContain("postgres");
      expect(toolText(r)).not.toContain("sqlite");
    }
    for (const r of callBoth(p, b.serverId, "recall", { query: "sqlite postgres" })) {
      const found = toolText(r).split("\n").slice(1).join("\n"); // the header repeats the query
      expect(found).toBe("[turn 1, agent] ok sqlite\n[turn 1, user] beta project uses sqlite");
    }
    const [fresh] = newSession(p, "sess-c");
    expect(toolText(callBoth(p, fresh.serverId, "recall", { query: "project" })[0])).toBe(
      'No earlier prompt or answer of this session mentions "project".',
    );
  });

  it("leaves out the turn that is still running (the prompt that asked for the recall)", async () => {
    const p = await mcpProxyUnderTest(component);
    const [decl] = newSession(p, "s");
    turn(p, "s", "remember: the codename is bluebird", ["ok"]);
    const [fwd] = p.deliver({
      jsonrpc: "2.0",
      id: 77,
      method: "session/prompt",
      params: { sessionId: "s", prompt: [{ type: "text", text: 'use tool workspace::recall {"query":"codename"}' }] },
    });
    p.deliver(agentUpdate(textChunk("looking up the codename…"), "s"));
    const [result] = callBoth(p, decl.serverId, "recall", { query: "codename" });
    expect(toolText(result)).toBe('1 earlier entry matches "codename" (showing 1):\n[turn 1, user] remember: the codename is bluebird');
    p.deliver({ jsonrpc: "2.0", id: fwd.id, result: { stopReason: "end_turn" } });
    expect(toolText(callBoth(p, decl.serverId, "recall", { query: "codename" })[0])).toContain("3 earlier entries match");
  });

  it("records the history session/load replays, and keeps each record bounded", async () => {
    const p = await mcpProxyUnderTest(component, { maxEntries: 3, maxEntryChars: 20 });
    const id = p.nextId();
    const [fwd] = p.deliver({ jsonrpc: "2.0", id, method: "session/load", params: { sessionId: "old", cwd: "/w", mcpServers: [] } });
    const decl = fwd.params.params.mcpServers[0];
    for (const [kind, text] of [
      ["user_message_chunk", "first question"],
      ["user_message_chunk", "second block"],
      ["agent_message_chunk", "first answer"],
      ["user_message_chunk", "another question that is rather long"],
      ["agent_message_chunk", "another answer"],
    ])
      p.deliver(agentUpdate(textChunk(text, kind), "old"));
    p.deliver({ jsonrpc: "2.0", id: fwd.id, result: {} });
    const [r] = callBoth(p, decl.serverId, "recall", { query: "", limit: 10 });
    expect(toolText(r)).toBe(
      [
        "The 3 latest entries:",
        "[turn 2, agent] another answer",
        "[turn 2, user] another question tha",
        "[turn 1, agent] first answer",
      ].join("\n"),
    );
    turn(p, "old", "x".repeat(50), ["y".repeat(15), "z".repeat(15)]);
    expect(toolText(callBoth(p, decl.serverId, "recall", { query: "", limit: 2 })[0])).toBe(
      `The 2 latest entries:\n[turn 3, agent] ${"y".repeat(15)}${"z".repeat(5)}\n[turn 3, user] ${"x".repeat(20)}`,
    );
  });

  it("forgets a closed session, and the least recently used one beyond maxSessions", async () => {
    const p = await mcpProxyUnderTest(component, { maxSessions: 2 });
    const [a] = newSession(p, "a");
    const [b] = newSession(p, "b");
    turn(p, "a", "apple", []);
    turn(p, "b", "banana", []);
    turn(p, "a", "apricot", []);
    const [c] = newSession(p, "c");
    turn(p, "c", "cherry", []); // b is the least recently used
    expect(toolText(callBoth(p, b.serverId, "recall", { query: "banana" })[0])).toBe("Nothing recorded in this session yet.");
    expect(toolText(callBoth(p, a.serverId, "recall", { query: "apple" })[0])).toContain("apple");
    const [close] = p.deliver({ jsonrpc: "2.0", id: 5, method: "session/close", params: { sessionId: "c" } });
    p.deliver({ jsonrpc: "2.0", id: close.id, result: {} });
    expect(mcpRequest(p, { serverId: c.serverId }, "ping").error?.code).toBe(-33001);
  });
});

describe("workspace-tools: read_file", () => {
  it("reads through fs/read_text_file toward the client, relative to the session's cwd, in both forms", async () => {
    const p = await mcpProxyUnderTest(component);
    const { declared } = setupSession(p, "session/new", { cwd: "/home/me/project", mcpServers: [] }, { sessionId: "s1" });
    const serverId = declared[0].serverId;
    const connectionId = mcpConnect(p, serverId);
    // connection form
    const first = p.deliver(
      ProxyUnderTest.fromAgent(
        {
          method: "mcp/message",
          params: { connectionId, method: "tools/call", params: { name: "read_file", arguments: { path: "src/a.ts", line: 3, limit: 2 } } },
        },
        "m1",
      ),
    );
    expect(first).toEqual([
      {
        jsonrpc: "2.0",
        id: first[0].id,
        method: "fs/read_text_file",
        params: { sessionId: "s1", path: "/home/me/project/src/a.ts", line: 3, limit: 2 },
      },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: first[0].id, result: { content: "line 3\nline 4" } })).toEqual([
      { jsonrpc: "2.0", id: "m1", result: { content: [{ type: "text", text: "line 3\nline 4" }] } },
    ]);
    // connectionless form, absolute path
    const second = p.deliver(
      ProxyUnderTest.fromAgent(
        {
          method: "mcp/message",
          params: { serverId, requestId: "r9", method: "tools/call", params: { name: "read_file", arguments: { path: "/etc/hostname" } } },
        },
        "m2",
      ),
    );
    expect(second[0].params).toEqual({ sessionId: "s1", path: "/etc/hostname" });
    expect(p.deliver({ jsonrpc: "2.0", id: second[0].id, result: { content: "box\n" } })).toEqual([
      { jsonrpc: "2.0", id: "m2", result: { result: { content: [{ type: "text", text: "box\n" }] } } },
    ]);
  });

  it("turns a refusal (no fs:read grant) or a client error into a tool error, and truncates big files", async () => {
    const p = await mcpProxyUnderTest(component, { maxFileChars: 10 });
    const [decl] = newSession(p, "s1");
    const ask = (path: string) =>
      p.deliver(
        ProxyUnderTest.fromAgent(
          {
            method: "mcp/message",
            params: { serverId: decl.serverId, requestId: path, method: "tools/call", params: { name: "read_file", arguments: { path } } },
          },
          `q-${path}`,
        ),
      )[0];
    const refused = ask("/a");
    expect(
      p.deliver({
        jsonrpc: "2.0",
        id: refused.id,
        error: { code: -32600, message: 'fs/read_text_file needs the "fs:read" grant, which this proxy does not have' },
      })[0].result.result,
    ).toEqual({
      content: [{ type: "text", text: 'could not read /a: fs/read_text_file needs the "fs:read" grant, which this proxy does not have' }],
      isError: true,
    });
    const missing = ask("/b");
    expect(
      toolText(p.deliver({ jsonrpc: "2.0", id: missing.id, error: { code: -32002, message: "Resource not found" } })[0].result.result),
    ).toBe("could not read /b: Resource not found");
    const big = ask("/c");
    expect(toolText(p.deliver({ jsonrpc: "2.0", id: big.id, result: { content: "0123456789abcdef" } })[0].result.result)).toBe(
      "0123456789\n[… truncated: 6 more characters]",
    );
    // a relative path when the cwd is unknown (the session was never set up through this proxy)
    const [r] = callBoth(p, decl.serverId, "read_file", { path: "" });
    expect(r).toEqual({ content: [{ type: "text", text: "read_file needs a path" }], isError: true });
  });

  it("is a tool error when the client does not offer fs.readTextFile", async () => {
    const p = await mcpProxyUnderTest(
      component,
      {},
      { initParams: { ...INIT_PARAMS, clientCapabilities: { fs: { readTextFile: false } } } },
    );
    const [decl] = newSession(p, "s1");
    for (const r of callBoth(p, decl.serverId, "read_file", { path: "/x" })) {
      expect(r).toEqual({
        content: [{ type: "text", text: "read_file is unavailable: the client did not advertise fs.readTextFile" }],
        isError: true,
      });
    }
  });

  it("cancelling the tool call cancels the client request", async () => {
    const p = await mcpProxyUnderTest(component);
    const [decl] = newSession(p, "s1");
    const connectionId = mcpConnect(p, decl.serverId);
    const [fs] = p.deliver(
      ProxyUnderTest.fromAgent(
        {
          method: "mcp/message",
          params: { connectionId, method: "tools/call", params: { name: "read_file", arguments: { path: "/slow" } } },
        },
        31,
      ),
    );
    expect(p.deliver(ProxyUnderTest.fromAgent({ method: "$/cancel_request", params: { requestId: 31 } }))).toEqual([
      { jsonrpc: "2.0", id: 31, error: { code: -32800, message: "Request cancelled" } },
      { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: fs.id } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: fs.id, error: { code: -32800, message: "cancelled" } })).toEqual([]);
  });
});

describe("workspace-tools: manifest", () => {
  it("asks for fs:read and validates its config", async () => {
    const manifest = exampleManifest("workspace-tools");
    expect(manifest?.name).toBe("workspace-tools");
    expect(manifest?.grants).toEqual(["fs:read"]);
    expect(await configProblems(manifest, { serverName: "ws", maxEntries: 10 })).toEqual([]);
    expect(await configProblems(manifest, { maxEntries: "ten" })).not.toEqual([]);
    expect(await configProblems(manifest, { servername: "typo" })).not.toEqual([]);
  });
});
