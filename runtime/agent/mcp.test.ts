/**
 * The reference agent's MCP client against MCP servers nobody here wrote: the official
 * `@modelcontextprotocol/sdk` server over stdio (a child process the agent launches) and over
 * streamable HTTP (answering with SSE streams), and an MCP-over-ACP server answered by the test's
 * own ACP client in the connectionless form. Plus the prompt grammar and what the agent accepts.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseLine } from "./commands.js";
import { parseMcpSupport } from "./mcp.js";

type Json = Record<string, any>;
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CORDON = join(ROOT, "bin", "cordon.js");
const STORE = mkdtempSync(join(tmpdir(), "cordon-agent-mcp-"));

/** A stdio MCP server built with the MCP SDK, run with `node -e` from the repository (so its imports resolve). */
const STDIO_SERVER = `
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
const server = new McpServer({ name: "sdk-stdio", version: "1.0.0" });
server.registerTool("add", { description: "adds", inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
server.registerTool("env", { description: "an env var" }, () => ({ content: [{ type: "text", text: process.env.GREETING ?? "unset" }] }));
server.registerResource("notes", "memo://notes", { description: "the notes", mimeType: "text/plain" }, (uri) => ({ contents: [{ uri: uri.href, text: "remember the milk" }] }));
server.registerPrompt("greet", { description: "greets", argsSchema: { who: z.string() } }, ({ who }) => ({ messages: [{ role: "user", content: { type: "text", text: "Hello " + who } }] }));
await server.connect(new StdioServerTransport());
`;

/** The agent on raw stdio: the test sees (and answers) every message. */
class Agent {
  readonly child: ChildProcessWithoutNullStreams;
  readonly received: Json[] = [];
  private waiters: { test: (m: Json) => boolean; resolve: (m: Json) => void }[] = [];
  private nextId = 1;
  onRequest: (m: Json) => Json = (m) => ({ error: { code: -32601, message: `no ${m.method}` } });

  constructor(mcp: string) {
    this.child = spawn(process.execPath, [CORDON, "reference-agent", "--store", STORE, "--mcp", mcp], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let buffer = "";
    this.child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const m = JSON.parse(buffer.slice(0, nl)) as Json;
        buffer = buffer.slice(nl + 1);
        this.received.push(m);
        if ("method" in m && "id" in m) this.send({ jsonrpc: "2.0", id: m.id, ...this.onRequest(m) });
        this.waiters = this.waiters.filter((w) => (w.test(m) ? (w.resolve(m), false) : true));
      }
    });
  }

  send(m: Json): void {
    this.child.stdin.write(JSON.stringify(m) + "\n");
  }

  async request(method: string, params: unknown): Promise<Json> {
    const id = this.nextId++;
    this.send({ jsonrpc: "2.0", id, method, params });
    const answer = await new Promise<Json>((resolve) => this.waiters.push({ test: (m) => m.id === id && !("method" in m), resolve }));
    return answer;
  }

  /** Runs a prompt; the final status and text of each tool call. */
  async tools(sessionId: string, text: string): Promise<{ title: string; status: string; text: string }[]> {
    const from = this.received.length;
    const answer = await this.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    expect(answer.result?.stopReason, JSON.stringify(answer)).toBe("end_turn");
    const calls = new Map<string, { title: string; status: string; text: string }>();
    for (const m of this.received.slice(from)) {
      const u = m.params?.update;
      if (m.method !== "session/update" || !u) continue;
      if (u.sessionUpdate === "tool_call") calls.set(u.toolCallId, { title: u.title, status: u.status, text: "" });
      else if (u.sessionUpdate === "tool_call_update") {
        const c = calls.get(u.toolCallId)!;
        c.status = u.status ?? c.status;
        if (u.content) c.text = u.content[0].content.text;
      }
    }
    return [...calls.values()];
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    await new Promise((resolve) => this.child.once("exit", resolve));
  }
}

const agents: Agent[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  for (const s of servers.splice(0)) s.close();
});

async function agentWith(mcp: string): Promise<Agent> {
  const agent = new Agent(mcp);
  agents.push(agent);
  const init = await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  expect(init.result.agentCapabilities.mcpCapabilities).toEqual({
    http: mcp.includes("http"),
    sse: false,
    ...(mcp.includes("acp") ? { acp: true } : {}),
  });
  return agent;
}

/** The MCP SDK's streamable HTTP server (stateful, SSE answers), one transport per MCP session. */
async function sdkHttpServer(): Promise<string> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const server = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => `s-${transports.size + 1}`,
        onsessioninitialized: (sid) => void transports.set(sid, transport!),
      });
      const mcp = new McpServer({ name: "sdk-http", version: "1.0.0" });
      mcp.registerTool("shout", { description: "upper-cases", inputSchema: { text: z.string() } }, ({ text }) => ({
        content: [{ type: "text" as const, text: text.toUpperCase() }],
      }));
      mcp.registerTool("header", { description: "the x-token header it got" }, (extra) => ({
        content: [{ type: "text" as const, text: String(extra.requestInfo?.headers["x-token"]) }],
      }));
      await mcp.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe("the reference agent's MCP client", () => {
  it("launches a stdio MCP server (MCP SDK) with its env, lists and calls its tools", async () => {
    const agent = await agentWith("stdio");
    const server = {
      name: "calc",
      command: process.execPath,
      args: ["--input-type=module", "-e", STDIO_SERVER],
      env: [{ name: "GREETING", value: "hello from env" }],
    };
    const { result } = await agent.request("session/new", { cwd: ROOT, mcpServers: [server] });
    const tools = await agent.tools(
      result.sessionId,
      'list tools calc\nuse tool calc::add {"a":2,"b":40}\nuse tool calc::env\nuse tool calc::add {"a":"x"}',
    );
    expect(tools.map((t) => [t.title, t.status])).toEqual([
      ["list tools calc", "completed"],
      ["calc::add", "completed"],
      ["calc::env", "completed"],
      ["calc::add", "failed"],
    ]);
    expect(tools[0].text).toBe("add: adds\nenv: an env var");
    expect(tools[1].text).toBe("42");
    expect(tools[2].text).toBe("hello from env");
  });

  it("lists and reads a stdio MCP server's resources and lists and gets its prompts (MCP SDK server)", async () => {
    const agent = await agentWith("stdio");
    const server = { name: "calc", command: process.execPath, args: ["--input-type=module", "-e", STDIO_SERVER], env: [] };
    const { result } = await agent.request("session/new", { cwd: ROOT, mcpServers: [server] });
    const tools = await agent.tools(
      result.sessionId,
      'resources calc\nresource calc memo://notes\nresource calc memo://nope\nprompts calc\nprompt calc::greet {"who":"Ada"}\nresources nobody',
    );
    expect(tools).toEqual([
      { title: "resources calc", status: "completed", text: "memo://notes notes: the notes" },
      { title: "resource memo://notes", status: "completed", text: "remember the milk" },
      {
        title: "resource memo://nope",
        status: "failed",
        text: expect.stringMatching(/^MCP error -32602: .*Resource memo:\/\/nope not found$/),
      }, // the MCP SDK server says -32602
      { title: "prompts calc", status: "completed", text: "greet: greets" },
      { title: "prompt calc::greet", status: "completed", text: "Hello Ada" },
      { title: "resources nobody", status: "failed", text: 'not run: no MCP server named "nobody" in this session (servers: calc)' },
    ]);
  });

  it("connects to a streamable HTTP MCP server (MCP SDK, SSE answers) with the declared headers", async () => {
    const agent = await agentWith("http");
    const url = await sdkHttpServer();
    const { result } = await agent.request("session/new", {
      cwd: ROOT,
      mcpServers: [{ type: "http", name: "web", url, headers: [{ name: "X-Token", value: "t-1" }] }],
    });
    const tools = await agent.tools(result.sessionId, 'use tool web::shout {"text":"hey"}\nuse tool web::header\nuse tool web::missing');
    expect(tools).toEqual([
      { title: "web::shout", status: "completed", text: "HEY" },
      { title: "web::header", status: "completed", text: "t-1" },
      { title: "web::missing", status: "failed", text: expect.stringMatching(/^MCP error -32602: .*missing/) },
    ]);
  });

  it("calls an MCP-over-ACP server through its ACP connection in the connectionless form", async () => {
    const agent = await agentWith("acp");
    const seen: Json[] = [];
    agent.onRequest = (m) => {
      if (m.method !== "mcp/message") return { error: { code: -32601, message: "no" } };
      seen.push(m.params);
      const { method, params } = m.params;
      if (method === "initialize")
        return {
          result: {
            result: {
              protocolVersion: params.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: "client-hosted", version: "1" },
            },
          },
        };
      if (method === "tools/list") return { result: { result: { tools: [{ name: "hello", inputSchema: { type: "object" } }] } } };
      if (method === "tools/call") return { result: { result: { content: [{ type: "text", text: `hello ${params.arguments.who}` }] } } };
      return { result: { error: { code: -32601, message: `no ${method}` } } };
    };
    const { result } = await agent.request("session/new", { cwd: ROOT, mcpServers: [{ type: "acp", name: "host", serverId: "srv-9" }] });
    const tools = await agent.tools(result.sessionId, 'list tools host\nuse tool host::hello {"who":"acp"}');
    expect(tools).toEqual([
      { title: "list tools host", status: "completed", text: "hello" },
      { title: "host::hello", status: "completed", text: "hello acp" },
    ]);
    expect(seen.map((p) => p.method)).toEqual(["initialize", "tools/list", "tools/call"]);
    for (const p of seen) {
      expect(p.serverId).toBe("srv-9");
      expect(typeof p.requestId).toBe("string");
      expect(p).not.toHaveProperty("connectionId");
    }
    expect(new Set(seen.map((p) => p.requestId)).size).toBe(3);
  });

  it("accepts exactly the transports it advertises", async () => {
    const plain = await agentWith("stdio");
    const http = { type: "http", name: "web", url: "http://127.0.0.1:1/mcp", headers: [] };
    const acpServer = { type: "acp", name: "tools", serverId: "s" };
    expect((await plain.request("session/new", { cwd: ROOT, mcpServers: [http] })).error.code).toBe(-32602);
    expect((await plain.request("session/new", { cwd: ROOT, mcpServers: [acpServer] })).error.code).toBe(-32602);
    const both = await agentWith("acp,http");
    expect((await both.request("session/new", { cwd: ROOT, mcpServers: [http, acpServer] })).result.sessionId).toMatch(/^sess-/);
    expect(
      (await both.request("session/new", { cwd: ROOT, mcpServers: [{ type: "sse", name: "old", url: "http://127.0.0.1:1", headers: [] }] }))
        .error.code,
    ).toBe(-32602);
    expect(() => parseMcpSupport("acp,ftp")).toThrow(/unknown transport "ftp"/);
  });

  it("parses use tool / list tools, and leaves other lines starting with those words alone", () => {
    expect(parseLine('use tool calc::add {"a":1}')).toEqual({ kind: "mcp-call", server: "calc", tool: "add", arguments: { a: 1 } });
    expect(parseLine("/use tool calc::add")).toEqual({ kind: "mcp-call", server: "calc", tool: "add", arguments: {} });
    expect(parseLine("list tools calc")).toEqual({ kind: "mcp-list", server: "calc" });
    expect(parseLine("use tool calc::add [1]")).toEqual({ kind: "usage", text: "usage: use tool <server>::<tool> [json arguments]" });
    expect(parseLine("use tool calc::add {oops")).toMatchObject({ kind: "usage" });
    expect(parseLine("use tool calc")).toMatchObject({ kind: "usage" });
    expect(parseLine("list tools")).toEqual({ kind: "usage", text: "usage: list tools <server>" });
    expect(parseLine("use the force")).toEqual({ kind: "echo", text: "use the force" });
    expect(parseLine("list files")).toEqual({ kind: "echo", text: "list files" });
  });

  it("parses the resource and prompt commands", () => {
    expect(parseLine("resources docs")).toEqual({ kind: "mcp-catalog", server: "docs", what: "resources" });
    expect(parseLine("/prompts docs")).toEqual({ kind: "mcp-catalog", server: "docs", what: "prompts" });
    expect(parseLine("resource docs skill://s/a b")).toEqual({ kind: "usage", text: "usage: resource <server> <uri>" });
    expect(parseLine("resource docs skill://s/a")).toEqual({ kind: "mcp-read", server: "docs", uri: "skill://s/a" });
    expect(parseLine('prompt docs::greet {"who":"Ada"}')).toEqual({
      kind: "mcp-prompt",
      server: "docs",
      name: "greet",
      arguments: { who: "Ada" },
    });
    expect(parseLine("prompt docs::greet")).toEqual({ kind: "mcp-prompt", server: "docs", name: "greet", arguments: {} });
    expect(parseLine('prompt docs::greet {"n":1}')).toEqual({ kind: "usage", text: "usage: prompt <server>::<name> [json arguments]" });
    expect(parseLine("prompts")).toEqual({ kind: "usage", text: "usage: prompts <server>" });
  });
});
