import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { agentUpdate, clientUpdate, INIT_PARAMS, INIT_RESULT, type Json, loadFixture, ProxyUnderTest, proxyUnderTest } from "./harness.js";

let plain: LoadedComponent;
let hooks: LoadedComponent;
beforeAll(async () => {
  // one after the other: asc is single-threaded, and vitest runs other files alongside
  plain = await loadFixture("plain");
  hooks = await loadFixture("hooks");
});

const fromAgent = ProxyUnderTest.fromAgent;

describe("ids and routing", () => {
  it("issues its own unique numeric ids on both sides and maps every answer back to the original id text", async () => {
    const p = await proxyUnderTest(plain);
    const conductorIds = ["5", 5, "5x", 12345678901234567890n, -3, 0, "", "ü 😀"];
    const sent: { ours: number; original: unknown; fromClient: boolean }[] = [];
    for (const [i, original] of conductorIds.entries()) {
      const fromClient = i % 2 === 0;
      const idJson = typeof original === "bigint" ? original.toString() : JSON.stringify(original);
      const inner = '{"sessionId":"s"}';
      const text = fromClient
        ? `{"jsonrpc":"2.0","id":${idJson},"method":"_x/req","params":${inner}}`
        : `{"jsonrpc":"2.0","id":${idJson},"method":"proxy/successor","params":{"method":"_x/req","params":${inner}}}`;
      const [out] = p.deliverRaw(text);
      const msg = JSON.parse(out);
      expect(Number.isInteger(msg.id) && msg.id > 0).toBe(true);
      expect(out).toBe(
        fromClient
          ? `{"jsonrpc":"2.0","id":${msg.id},"method":"proxy/successor","params":{"method":"_x/req","params":${inner}}}`
          : `{"jsonrpc":"2.0","id":${msg.id},"method":"_x/req","params":${inner}}`,
      );
      sent.push({ ours: msg.id, original: idJson, fromClient });
    }
    expect(new Set(sent.map((s) => s.ours)).size).toBe(sent.length);
    // answer in reverse order; each answer goes back under the conductor's id, exactly as it was written
    for (const s of [...sent].reverse()) {
      expect(p.deliverRaw(`{"jsonrpc":"2.0","id":${s.ours},"result":{"for":${s.original}}}`)).toEqual([
        `{"jsonrpc":"2.0","id":${s.original},"result":{"for":${s.original}}}`,
      ]);
    }
  });

  it("maps a request-scoped elicitation's requestId from its own id back to the id it received the request under", async () => {
    const p = await proxyUnderTest(plain);
    const [forwarded] = p.deliver({ jsonrpc: "2.0", id: "client-auth-9", method: "authenticate", params: { methodId: "x" } });
    const ours = forwarded.id;
    const [up] = p.deliver(
      fromAgent({ method: "elicitation/create", params: { requestId: ours, message: "key?", mode: "form", requestedSchema: {} } }, 41),
    );
    expect(up.method).toBe("elicitation/create");
    expect(up.params).toEqual({ requestId: "client-auth-9", message: "key?", mode: "form", requestedSchema: {} });
    // An id that is not one of its own forwarded requests is left alone.
    const [other] = p.deliver(fromAgent({ method: "elicitation/create", params: { requestId: 999, message: "m" } }, 42));
    expect(other.params).toEqual({ requestId: 999, message: "m" });
  });

  it("treats the same conductor id on the two sides as two requests", async () => {
    const p = await proxyUnderTest(plain);
    const [a] = p.deliver({ jsonrpc: "2.0", id: 7, method: "session/new", params: {} });
    const [b] = p.deliver(fromAgent({ method: "fs/read_text_file", params: {} }, 7));
    const cancelA = { jsonrpc: "2.0", method: "proxy/successor", params: { method: "$/cancel_request", params: { requestId: a.id } } };
    expect(p.deliver({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 7 } })).toEqual([cancelA]);
    expect(p.deliver({ jsonrpc: "2.0", id: b.id, result: "b" })).toEqual([{ jsonrpc: "2.0", id: 7, result: "b" }]);
    // b is done; the client's 7 is still open and still cancellable
    expect(p.deliver({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 7 } })).toEqual([cancelA]);
    expect(p.deliver(fromAgent({ method: "$/cancel_request", params: { requestId: 7 } }))).toEqual([]);
    expect(p.deliver({ jsonrpc: "2.0", id: a.id, result: "a" })).toEqual([{ jsonrpc: "2.0", id: 7, result: "a" }]);
  });

  it("drops answers that are not to its own outstanding ids (unknown, string-typed, already answered) with a warning", async () => {
    const p = await proxyUnderTest(plain);
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 1, method: "session/new", params: {} });
    expect(p.deliver({ jsonrpc: "2.0", id: String(fwd.id), result: {} })).toEqual([]);
    expect(p.deliver({ jsonrpc: "2.0", id: 424242, result: {} })).toEqual([]);
    expect(p.deliver({ jsonrpc: "2.0", id: fwd.id, result: {} })).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
    expect(p.deliver({ jsonrpc: "2.0", id: fwd.id, result: {} })).toEqual([]);
    expect(p.logs.map((l) => l.message)).toEqual([
      `dropped a response to unknown request id "${fwd.id}"`,
      "dropped a response to unknown request id 424242",
      `dropped a response to unknown request id ${fwd.id}`,
    ]);
  });

  it("answers malformed requests instead of leaving them open, and survives junk", async () => {
    const p = await proxyUnderTest(plain);
    expect(p.deliver({ jsonrpc: "2.0", id: 1, method: 42 })).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32600, message: "method is not a string" } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: 2, method: "proxy/successor" })).toEqual([
      { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "proxy/successor needs params {method, params}" } },
    ]);
    expect(p.deliver("[1,2]")).toEqual([]);
    expect(p.deliver({ jsonrpc: "2.0" })).toEqual([]);
    expect(p.logs.map((l) => l.level)).toEqual(["error", "warn"]);
    // still alive
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 3, method: "session/new", params: {} });
    expect(fwd.params.method).toBe("session/new");
  });
});

describe("cancellation", () => {
  it("translates the conductor's $/cancel_request to its own id for forwarded requests, both directions", async () => {
    const p = await proxyUnderTest(hooks);
    const [toAgent] = p.deliver({ jsonrpc: "2.0", id: "c1", method: "session/prompt", params: { sessionId: "s", prompt: [] } });
    const [toClient] = p.deliver(fromAgent({ method: "terminal/wait_for_exit", params: { sessionId: "s", terminalId: "t" } }, "a1"));
    expect(p.deliver({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: "c1" } })).toEqual([
      { jsonrpc: "2.0", method: "proxy/successor", params: { method: "$/cancel_request", params: { requestId: toAgent.id } } },
    ]);
    expect(p.deliver(fromAgent({ method: "$/cancel_request", params: { requestId: "a1" } }))).toEqual([
      { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: toClient.id } },
    ]);
    expect(p.logs.slice(-2).map((l) => l.message)).toEqual([
      'cancel session/prompt "c1" forwarded=true',
      'cancel terminal/wait_for_exit "a1" forwarded=true',
    ]);
    // answers still flow back after a cancel (the spec requires an answer either way)
    expect(p.deliver({ jsonrpc: "2.0", id: toAgent.id, result: { stopReason: "cancelled" } })).toEqual([
      { jsonrpc: "2.0", id: "c1", result: { stopReason: "cancelled" } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: toClient.id, error: { code: -32800, message: "Request cancelled" } })).toEqual([
      { jsonrpc: "2.0", id: "a1", error: { code: -32800, message: "Request cancelled" } },
    ]);
  });

  it("lets the proxy answer a cancelled request it holds itself", async () => {
    const p = await proxyUnderTest(hooks);
    expect(p.deliver({ jsonrpc: "2.0", id: 9, method: "_test/hold", params: {} })).toEqual([]);
    expect(p.deliver({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 9 } })).toEqual([
      { jsonrpc: "2.0", id: 9, error: { code: -32800, message: "cancelled" } },
    ]);
    // answered: a second cancel is ignored
    expect(p.deliver({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 9 } })).toEqual([]);
  });

  it("cancels its own requests with the id it used, inside an envelope when they went to the agent", async () => {
    const p = await proxyUnderTest(hooks);
    const out = p.deliver({ jsonrpc: "2.0", id: 1, method: "_test/cancel-own", params: {} });
    expect(out).toHaveLength(3);
    const ownId = out[0].id;
    expect(out).toEqual([
      { jsonrpc: "2.0", id: ownId, method: "proxy/successor", params: { method: "_test/slow", params: {} } },
      { jsonrpc: "2.0", method: "proxy/successor", params: { method: "$/cancel_request", params: { requestId: ownId } } },
      { jsonrpc: "2.0", id: 1, result: ownId },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: ownId, error: { code: -32800, message: "cancelled" } })).toEqual([]);
    expect(p.logs.at(-1)!.message).toBe('reply for slow: {"code":-32800,"message":"cancelled"}');
  });
});

describe("initialize", () => {
  it("forwards initialize with edited params and relays the edited InitializeResponse", () => {
    const p = new ProxyUnderTest(hooks);
    p.configure({}, "hooks-1");
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: "init", method: "proxy/initialize", params: INIT_PARAMS });
    expect(fwd).toEqual({
      jsonrpc: "2.0",
      id: fwd.id,
      method: "proxy/successor",
      params: { method: "initialize", params: { ...INIT_PARAMS, fixtureNote: "added by hooks" } },
    });
    expect(p.deliver({ jsonrpc: "2.0", id: fwd.id, result: INIT_RESULT })).toEqual([
      {
        jsonrpc: "2.0",
        id: "init",
        result: { ...INIT_RESULT, agentCapabilities: { ...INIT_RESULT.agentCapabilities, loadSession: true, _meta: { by: "hooks-1" } } },
      },
    ]);
    expect(p.logs.map((l) => l.message).slice(1)).toEqual(["initialize v1 caps=true", "agent speaks v1"]);
  });

  it("relays an initialize error from the agent unchanged", () => {
    const p = new ProxyUnderTest(plain);
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 1, method: "proxy/initialize", params: INIT_PARAMS });
    expect(p.deliver({ jsonrpc: "2.0", id: fwd.id, error: { code: -32603, message: "agent failed to start" } })).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "agent failed to start" } },
    ]);
  });
});

describe("configuration and logs", () => {
  it("reads _cordon/configure into this.config and its getters, and logs through _cordon/log", () => {
    const p = new ProxyUnderTest(hooks);
    expect(p.configure({ text: "hi", flag: true, n: 1.5, i: 42.9, list: ["a", "b", 3, null], nested: { x: 1 } }, "chain-name")).toEqual([]);
    expect(p.logs).toEqual([
      {
        level: "debug",
        message: "configured name=chain-name text=hi flag=true n=1.5 i=42 list=a|b single=hi missing=dflt has=true nested=true json=true",
      },
    ]);
    const q = new ProxyUnderTest(hooks);
    q.configure({ text: 7, flag: "yes" }, "");
    expect(q.logs[0].message).toBe(
      "configured name= text= flag=false n=0.0 i=0 list= single= missing=dflt has=true nested=false json=true",
    );
    expect(q.wire[0]).toBe(
      `{"jsonrpc":"2.0","method":"_cordon/log","params":{"level":"debug","message":${JSON.stringify(q.logs[0].message)}}}`,
    );
  });

  it("never forwards _cordon/configure", () => {
    const p = new ProxyUnderTest(plain);
    expect(p.deliverRaw({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "x", config: { a: 1 } } })).toEqual([]);
    expect(p.wire).toEqual([]);
  });
});

describe("hooks and helpers", () => {
  it("relays answers to its own requests to the agent and to the client through onReply", async () => {
    const p = await proxyUnderTest(hooks);
    const [probe] = p.deliver({ jsonrpc: "2.0", id: "q1", method: "_test/ask", params: {} });
    expect(probe).toEqual({ jsonrpc: "2.0", id: probe.id, method: "proxy/successor", params: { method: "_test/probe", params: { q: 1 } } });
    expect(p.deliver({ jsonrpc: "2.0", id: probe.id, result: { a: [1, 2.5] } })).toEqual([
      { jsonrpc: "2.0", id: "q1", result: { probe: { a: [1, 2.5] }, method: "_test/probe" } },
    ]);
    const [ask] = p.deliver({ jsonrpc: "2.0", id: "q2", method: "_test/ask-client", params: {} });
    expect(ask).toEqual({ jsonrpc: "2.0", id: ask.id, method: "_test/client-probe", params: { question: "ok?" } });
    expect(p.deliver({ jsonrpc: "2.0", id: ask.id, error: { code: -32601, message: "Method not found" } })).toEqual([
      { jsonrpc: "2.0", id: "q2", error: { code: -32601, message: "Method not found" } },
    ]);
  });

  it("answers with respond/respondError, refuses to answer twice, and sends notifications both ways", async () => {
    const p = await proxyUnderTest(hooks);
    expect(p.deliver({ jsonrpc: "2.0", id: 1, method: "_test/fail", params: {} })).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32001, message: "nope", data: { why: "test" } } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: 2, method: "_test/twice", params: {} })).toEqual([{ jsonrpc: "2.0", id: 2, result: 1 }]);
    expect(p.logs.slice(-2).map((l) => l.message)).toEqual([
      "request 2 (_test/twice) was already answered",
      "request 2 (_test/twice) was already answered; not forwarding it again",
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: 3, method: "_test/notify", params: {} })).toEqual([
      { jsonrpc: "2.0", method: "_test/note", params: { to: "client" } },
      { jsonrpc: "2.0", method: "proxy/successor", params: { method: "_test/note", params: { to: "agent" } } },
      { jsonrpc: "2.0", id: 3, result: null },
    ]);
  });

  it("holds a request and answers it later; open and pending counts return to zero", async () => {
    const p = await proxyUnderTest(hooks);
    expect(p.deliver({ jsonrpc: "2.0", id: "h", method: "_test/hold", params: {} })).toEqual([]);
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: "f", method: "session/new", params: {} });
    expect(p.deliver({ jsonrpc: "2.0", id: "s1", method: "_test/stats", params: {} })).toEqual([
      { jsonrpc: "2.0", id: "s1", result: { pending: 1, open: 3 } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: "r", method: "_test/release", params: {} })).toEqual([
      { jsonrpc: "2.0", id: "h", result: { released: true } },
      { jsonrpc: "2.0", id: "r", result: {} },
    ]);
    p.deliver({ jsonrpc: "2.0", id: fwd.id, result: { sessionId: "S" } });
    expect(p.deliver({ jsonrpc: "2.0", id: "s2", method: "_test/stats", params: {} })).toEqual([
      { jsonrpc: "2.0", id: "s2", result: { pending: 0, open: 1 } },
    ]);
  });

  it("edits a forwarded request's answer in onResponse and reports errors from either side", async () => {
    const p = await proxyUnderTest(hooks);
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/", mcpServers: [] } });
    expect(p.deliver({ jsonrpc: "2.0", id: fwd.id, result: { sessionId: "S", modes: null } })).toEqual([
      { jsonrpc: "2.0", id: 1, result: { sessionId: "S", modes: null, fixture: "seen" } },
    ]);
    const [perm] = p.deliver(
      fromAgent(
        {
          method: "session/request_permission",
          params: {
            sessionId: "S",
            toolCall: { toolCallId: "t", kind: "edit", rawInput: { p: "/a" } },
            options: [{ optionId: "y", name: "Yes", kind: "allow_once" }],
          },
        },
        2,
      ),
    );
    expect(p.logs.at(-1)!.message).toBe('permission t kind=edit input={"p":"/a"} allow=y options=1');
    p.deliver({ jsonrpc: "2.0", id: perm.id, error: { code: -32603, message: "boom" } });
    expect(p.logs.at(-1)!.message).toBe("error -32603 boom from client");
  });

  it("edits prompts through content block views and leaves untouched prompts byte-identical", async () => {
    const p = await proxyUnderTest(hooks);
    const [appended] = p.deliver({
      jsonrpc: "2.0",
      id: 1,
      method: "session/prompt",
      params: { sessionId: "s", prompt: [{ type: "text", text: "append" }] },
    });
    expect(appended.params.params.prompt).toEqual([
      { type: "text", text: "first" },
      { type: "text", text: "append" },
      { type: "resource_link", uri: "file:///notes.md", name: "notes.md" },
    ]);
    const [shouted] = p.deliver({
      jsonrpc: "2.0",
      id: 2,
      method: "session/prompt",
      params: {
        sessionId: "s",
        prompt: [
          { type: "text", text: "shout", annotations: { priority: 1 } },
          { type: "image", data: "AA", mimeType: "image/png" },
        ],
      },
    });
    expect(shouted.params.params.prompt).toEqual([
      { type: "text", text: "SHOUT", annotations: { priority: 1 } },
      { type: "image", data: "AA", mimeType: "image/png" },
    ]);
    const params = '{"sessionId":"s","prompt":[{"type":"text","text":"quiet \\u00e9"}],"_meta":{"n":1.0}}';
    const [same] = p.deliverRaw(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":${params}}`);
    expect(same).toContain(`"params":${params}}}`);
    expect(p.logs.slice(-3).map((l) => l.message)).toEqual([
      "prompt in s: 1 blocks, text=append",
      "prompt in s: 2 blocks, text=shout",
      "prompt in s: 1 blocks, text=quiet é",
    ]);
  });

  it("edits a chunk's text twice (a raw splice, then the parsed object) and reads it back", async () => {
    const p = await proxyUnderTest(hooks);
    const params =
      '{"sessionId":"s 1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"twice","annotations":{"n":1.50}},"_meta":{"x":[1]}}}';
    const [out] = p.deliver(`{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":${params}}}`);
    expect(out).toEqual({
      jsonrpc: "2.0",
      method: "session/update",
      params: {
        ...JSON.parse(params),
        update: { ...JSON.parse(params).update, content: { type: "text", text: "one+two", annotations: { n: 1.5 } } },
      },
    });
    expect(p.logs.at(-1)!.message).toBe("after edits: kind=agent_message_chunk session=s 1 text=one+two");
  });

  it("inserts prompt blocks into empty and oddly spaced prompt arrays", async () => {
    const p = await proxyUnderTest(hooks);
    // the fixture appends (a raw splice) then prepends (through the parsed object)
    for (const prompt of [
      "[]",
      "[ ]",
      " [\n] ",
      '[ {"type":"text","text":"x"} ]',
      '[{"type":"text","text":"x"},{"type":"text","text":"y"}]',
    ]) {
      const out = p.deliver(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"append","prompt" : ${prompt}}}`);
      const blocks = JSON.parse(prompt);
      expect(out[0].params.params.prompt).toEqual([
        { type: "text", text: "first" },
        ...blocks,
        { type: "resource_link", uri: "file:///notes.md", name: "notes.md" },
      ]);
    }
  });

  it("handles agent requests and notifications itself when it wants to", async () => {
    const p = await proxyUnderTest(hooks);
    expect(p.deliver(fromAgent({ method: "fs/read_text_file", params: { sessionId: "s", path: "/x", fixture: true } }, "r1"))).toEqual([
      { jsonrpc: "2.0", id: "r1", result: { content: "from fixture" } },
    ]);
    expect(p.deliver(fromAgent({ method: "_test/swallow", params: {} }))).toEqual([]);
    expect(p.deliver(agentUpdate({ sessionUpdate: "plan", entries: [] }, "S9"))).toEqual([
      { jsonrpc: "2.0", method: "_test/seen-plan", params: { sessionId: "S9" } },
      clientUpdate({ sessionUpdate: "plan", entries: [] }, "S9"),
    ]);
  });

  it("sees tool calls and the hop-local envelope _meta, and can rename a tool call", async () => {
    const p = await proxyUnderTest(hooks);
    const update: Json = {
      sessionUpdate: "tool_call",
      toolCallId: "t1",
      title: "rename me",
      content: [
        { type: "content", content: { type: "text", text: "x" } },
        { type: "diff", path: "/a", newText: "" },
      ],
    };
    const out = p.deliver(fromAgent({ method: "session/update", params: { sessionId: "s", update } }, undefined, { hop: 1 }));
    expect(out).toEqual([clientUpdate({ ...update, title: "renamed" }, "s")]);
    expect(p.logs.slice(-2).map((l) => l.message)).toEqual(['envelope meta {"hop":1}', 'tool call t1 "rename me" with 1 text blocks']);
  });

  it("replaces params wholesale and logs client notifications", async () => {
    const p = await proxyUnderTest(hooks);
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 1, method: "_test/replace-params", params: { a: 1 } });
    expect(fwd.params).toEqual({ method: "_test/replace-params", params: { replaced: '{"a":1}' } });
    expect(p.deliver({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } })).toEqual([
      { jsonrpc: "2.0", method: "proxy/successor", params: { method: "session/cancel", params: { sessionId: "s" } } },
    ]);
    expect(p.logs.at(-1)!.message).toBe('client notification session/cancel params={"sessionId":"s"}');
  });
});
