// MCP resources, resource templates and prompts in the SDK; pagination of every list; the checked
// subset of a tool's input schema; list_changed and client notifications — through the real .wasm.
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { type Json, loadFixture, mcpConnect, mcpListAll, mcpProxyUnderTest, mcpRequest, newSession, ProxyUnderTest } from "./harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadFixture("mcp-catalog");
}, 180_000); // a build under load can take minutes

async function started(sessionId = "s1"): Promise<{ p: ProxyUnderTest; docs: string; toolless: string }> {
  const p = await mcpProxyUnderTest(component);
  const declared = newSession(p, sessionId);
  const id = (name: string) => declared.find((d) => d.name === name)!.serverId;
  return { p, docs: id("docs"), toolless: id("toolless") };
}

/** Every page of a list, following nextCursor (connectionless form). */
function allPages(p: ProxyUnderTest, serverId: string, method: string, key: string): { items: Json[]; pages: number } {
  const items: Json[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const answer = mcpRequest(p, { serverId }, method, cursor === undefined ? {} : { cursor }).result;
    items.push(...answer[key]);
    cursor = answer.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { items, pages };
}

describe("initialize advertises exactly what a server serves", () => {
  it("tools, resources and prompts for docs; resources only for a server without tools or prompts", async () => {
    const { p, docs, toolless } = await started();
    expect(mcpRequest(p, { serverId: docs }, "initialize", { protocolVersion: "2025-11-25" }).result.capabilities).toEqual({
      tools: { listChanged: false },
      resources: { listChanged: false },
      prompts: { listChanged: false },
    });
    const connectionId = mcpConnect(p, toolless);
    expect(mcpRequest(p, { connectionId }, "initialize", { protocolVersion: "2025-11-25" }).result.capabilities).toEqual({
      resources: { listChanged: true },
    });
    // what is not advertised is not served
    for (const method of ["tools/list", "tools/call", "prompts/list", "prompts/get"]) {
      expect(mcpRequest(p, { connectionId }, method, { name: "x" }).error).toEqual({
        code: -32601,
        message: `Method not found: ${method}`,
      });
    }
  });
});

describe("resources", () => {
  it("lists declared and per-session resources two to a page, and templates", async () => {
    const { p, docs } = await started("sess-A");
    const first = mcpRequest(p, { serverId: docs }, "resources/list", {}).result;
    expect(first.resources).toEqual([
      { uri: "doc://readme", name: "readme", description: "The readme", mimeType: "text/markdown" },
      { uri: "doc://empty", name: "empty", description: "Answered by the proxy", mimeType: "text/plain" },
    ]);
    expect(typeof first.nextCursor).toBe("string");
    const { items, pages } = allPages(p, docs, "resources/list", "resources");
    expect(pages).toBe(2);
    expect(items.map((r) => r.uri)).toEqual(["doc://readme", "doc://empty", "doc://third", "doc://session/sess-A"]);
    // the testing kit's helper follows the cursors too, in the connection form here
    expect(mcpListAll(p, { connectionId: mcpConnect(p, docs) }, "resources/list", "resources")).toEqual(items);
    expect(mcpRequest(p, { serverId: docs }, "resources/templates/list").result).toEqual({
      resourceTemplates: [
        { uriTemplate: "doc://session/{name}", name: "session-doc", description: "A document of this session", mimeType: "text/plain" },
      ],
    });
  });

  it("reads a declared text, a text the proxy writes, and refuses another session's resource", async () => {
    const { p, docs } = await started("sess-A");
    const other = newSession(p, "sess-B").find((d) => d.name === "docs")!.serverId;
    expect(mcpRequest(p, { serverId: docs }, "resources/read", { uri: "doc://readme" }).result).toEqual({
      contents: [{ uri: "doc://readme", mimeType: "text/markdown", text: '# Read me\nhé "q" ✓' }],
    });
    const connectionId = mcpConnect(p, docs);
    expect(mcpRequest(p, { connectionId }, "resources/read", { uri: "doc://empty" }).result.contents[0].text).toBe(
      "read in sess-A via connection",
    );
    expect(mcpRequest(p, { serverId: docs }, "resources/read", { uri: "doc://session/sess-A" }).result.contents[0].text).toBe(
      "private to sess-A",
    );
    // session B's connection asks for session A's document: refused
    expect(mcpRequest(p, { serverId: other }, "resources/read", { uri: "doc://session/sess-A" }).error).toEqual({
      code: -32002,
      message: "Resource not found: doc://session/sess-A is not in session sess-B",
    });
    expect(mcpRequest(p, { serverId: docs }, "resources/read", { uri: "doc://nope" }).error).toEqual({
      code: -32002,
      message: "Resource not found: doc://nope",
    });
    expect(mcpRequest(p, { serverId: docs }, "resources/read", {}).error).toEqual({
      code: -32602,
      message: "resources/read needs params {uri}",
    });
  });
});

describe("prompts", () => {
  it("lists prompts with their arguments and gets them, checking required arguments", async () => {
    const { p, docs } = await started("sess-P");
    expect(mcpRequest(p, { serverId: docs }, "prompts/list").result).toEqual({
      prompts: [
        {
          name: "greet",
          description: "Greets someone",
          arguments: [{ name: "who", description: "Whom to greet", required: true }, { name: "tone" }],
        },
        { name: "fixed", description: "A fixed text" },
      ],
    });
    expect(mcpRequest(p, { serverId: docs }, "prompts/get", { name: "greet", arguments: { who: "Ada", tone: "warm" } }).result).toEqual({
      description: "A greeting",
      messages: [{ role: "user", content: { type: "text", text: "Hello Ada (warm) in sess-P" } }],
    });
    expect(mcpRequest(p, { serverId: docs }, "prompts/get", { name: "fixed" }).result).toEqual({
      description: "A fixed text",
      messages: [{ role: "user", content: { type: "text", text: "Say hello." } }],
    });
    expect(mcpRequest(p, { serverId: docs }, "prompts/get", { name: "greet", arguments: {} }).error).toEqual({
      code: -32602,
      message: 'Invalid arguments for prompt greet: missing required argument "who"',
    });
    expect(mcpRequest(p, { serverId: docs }, "prompts/get", { name: "nope" }).error?.message).toBe("Unknown prompt: nope");
  });
});

describe("pagination of tools/list and bad cursors", () => {
  it("pages tools two at a time and refuses cursors it did not make", async () => {
    const { p, docs } = await started();
    const { items, pages } = allPages(p, docs, "tools/list", "tools");
    expect(pages).toBe(2);
    expect(items.map((t) => t.name)).toEqual(["typed", "plain", "third"]);
    for (const cursor of ["nope", "page:", "page:99", "page:-1", "page:1x"]) {
      expect(mcpRequest(p, { serverId: docs }, "tools/list", { cursor }).error).toEqual({
        code: -32602,
        message: `invalid cursor ${JSON.stringify(cursor)}`,
      });
    }
    expect(mcpRequest(p, { serverId: docs }, "tools/list", { cursor: 5 }).error?.message).toBe("cursor must be a string");
    expect(mcpRequest(p, { serverId: docs }, "tools/list", { cursor: null }).result.tools).toHaveLength(2);
  });
});

describe("tool arguments are checked against the declared schema before the hook", () => {
  const call = (p: ProxyUnderTest, serverId: string, name: string, args: unknown) =>
    mcpRequest(p, { serverId }, "tools/call", { name, arguments: args });

  it("passes arguments that fit, including escaped strings, 1.0 as an integer and null where allowed", async () => {
    const { p, docs } = await started();
    const args = { text: 'a "b" \u00e9', n: 1.0, x: null, mode: "slow", flag: false, deep: { a: 7 }, extra: [1] };
    expect(call(p, docs, "typed", args).result.content[0].text).toBe(`typed ${JSON.stringify(args)}`);
    expect(call(p, docs, "typed", { text: "\u0066ast", mode: "\u0066ast" }).result.content[0].text).toContain('"mode":"fast"');
    expect(call(p, docs, "plain", { anything: 1 }).result.content[0].text).toBe('plain {"anything":1}');
  });

  it("refuses what does not fit, naming the argument", async () => {
    const { p, docs } = await started();
    const refused = (args: unknown) => call(p, docs, "typed", args).error;
    expect(refused({})).toEqual({ code: -32602, message: 'Invalid arguments for tool typed: missing required argument "text"' });
    expect(refused({ text: 3 })?.message).toBe('Invalid arguments for tool typed: argument "text" must be string, not number');
    expect(refused({ text: "t", n: 1.5 })?.message).toBe('Invalid arguments for tool typed: argument "n" must be integer, not number');
    expect(refused({ text: "t", n: "1" })?.message).toBe('Invalid arguments for tool typed: argument "n" must be integer, not string');
    expect(refused({ text: "t", x: "1" })?.message).toBe(
      'Invalid arguments for tool typed: argument "x" must be one of number, null, not string',
    );
    expect(refused({ text: "t", mode: "medium" })?.message).toBe(
      'Invalid arguments for tool typed: argument "mode" must be one of "fast", "slow"',
    );
    expect(refused({ text: "t", flag: "yes" })?.message).toBe(
      'Invalid arguments for tool typed: argument "flag" must be boolean, not string',
    );
    expect(refused({ text: "t", deep: [] })?.message).toBe('Invalid arguments for tool typed: argument "deep" must be object, not array');
    // the connection form: the MCP error is the outer error
    const connectionId = mcpConnect(p, docs);
    expect(mcpRequest(p, { connectionId }, "tools/call", { name: "typed", arguments: { text: null } }).error).toEqual({
      code: -32602,
      message: 'Invalid arguments for tool typed: argument "text" must be string, not null',
    });
  });
});

describe("notifications both ways", () => {
  it("client notifications reach the proxy; list_changed goes over each open connection of the session", async () => {
    const { p, docs } = await started("sess-N");
    const c1 = mcpConnect(p, docs);
    const c2 = mcpConnect(p, docs);
    const otherDocs = newSession(p, "sess-M").find((d) => d.name === "docs")!.serverId;
    mcpConnect(p, otherDocs);
    const fromAgent = ProxyUnderTest.fromAgent;
    expect(p.deliver(fromAgent({ method: "mcp/message", params: { connectionId: c1, method: "notifications/initialized" } }))).toEqual([]);
    expect(
      p.deliver(
        fromAgent({ method: "mcp/message", params: { serverId: docs, method: "notifications/roots/list_changed", params: { a: 1 } } }),
      ),
    ).toEqual([]);
    // toward the agent side, whose MCP client the connection is
    const out = p.send({ jsonrpc: "2.0", id: 7, method: "_x/changed", params: { sessionId: "sess-N" } });
    expect(out.toAgent).toEqual([
      { jsonrpc: "2.0", method: "mcp/message", params: { connectionId: c1, method: "notifications/resources/list_changed" } },
      { jsonrpc: "2.0", method: "mcp/message", params: { connectionId: c2, method: "notifications/resources/list_changed" } },
    ]);
    expect(out.answers[0]).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: {
        told: 2,
        notes: `notifications/initialized sess-N connection \nnotifications/roots/list_changed sess-N connectionless {"a":1}`,
      },
    });
  });
});
