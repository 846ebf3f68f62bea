/**
 * Faithful forwarding, on the wire: a raw client → `cordon run` with 0, 1 and 3 pass-through WASM
 * proxies → a raw scripted agent. What arrives must deep-equal what was sent — unknown fields,
 * `_meta`, unknown update variants, extension methods, error objects — and arrive in order.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, SCRIPTED_AGENT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";

const clients: RawClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const pass = ["--proxy", proxyWasm("passthrough")];
const nested = (...inner: string[]) => ["--proxy-cmd", [NODE, CORDON, "proxy", ...inner].map((w) => JSON.stringify(w)).join(" ")];

/** `cordon run` flags for each topology under test; every one must be transparent. */
const TOPOLOGIES: Record<string, string[]> = {
  "0 proxies": [],
  "1 pass-through proxy": pass,
  "3 pass-through proxies": [...pass, ...pass, ...pass],
  "a nested conductor (2 proxies) and an empty one between pass-throughs": [...pass, ...nested(...pass, ...pass), ...nested(), ...pass],
  // Unconfigured, context and tool-guard hand every request on unchanged; their manifests watch
  // no answers (`watches.answers: []`), so the answers to the prompts and permission requests
  // they forward, and the cancellations of those, go past their guests (interest-filter.ts).
  "proxies whose answers pass them (context, tool-guard) and a pass-through": [
    ...["--proxy", proxyWasm("context"), "--proxy", proxyWasm("tool-guard")],
    ...pass,
  ],
};

async function chain(topology: string, env: Record<string, string> = {}): Promise<RawClient> {
  const client = new RawClient(NODE, [CORDON, "run", ...TOPOLOGIES[topology], "--", ...SCRIPTED_AGENT], env);
  clients.push(client);
  const init = await client.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true } },
    _meta: { trace: "t1" },
  });
  expect(init.result.agentInfo).toEqual({ name: "scripted-agent", version: "1.0.0" });
  return client;
}

/** Opens a session on `client` (no MCP servers) and returns its id. */
async function newSession(client: RawClient): Promise<string> {
  const { result } = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
  return result.sessionId;
}

const script = (steps: unknown[]) => [{ type: "text", text: JSON.stringify(steps) }];

describe.each(Object.keys(TOPOLOGIES))("through %s", (n) => {
  it("initialize reaches the agent as plain initialize with every field intact", async () => {
    const client = await chain(n);
    const init = client.received.find((m) => m.id === 1)!;
    expect(init.result._meta["test/received"]).toEqual({
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true } },
      _meta: { trace: "t1" },
    });
  });

  it("keeps unknown fields and _meta on requests and responses", async () => {
    const client = await chain(n);
    const params = {
      cwd: "/tmp",
      mcpServers: [],
      futureField: { nested: [1, "two", null, true, 1.5] },
      _meta: { traceparent: "00-abc-01" },
    };
    const res = await client.request("session/new", params);
    expect(res.result).toEqual({ sessionId: "sess-1", _meta: { received: params } });
  });

  it("passes extension requests and notifications both ways, unchanged", async () => {
    const client = await chain(n);
    const params = { deep: { list: [{ a: 1 }, "ü😀"] }, _meta: { x: 1 } };
    const res = await client.request("_vendor.example/ping", params, "str-id");
    expect(res).toEqual({ jsonrpc: "2.0", id: "str-id", result: { echo: { jsonrpc: "2.0", method: "_vendor.example/ping", params } } });
    client.notify("_vendor.example/note", { k: [1, 2, 3] });
    const seen = await client.waitFor((m) => m.method === "_test/seen");
    expect(seen.params.message).toEqual({ jsonrpc: "2.0", method: "_vendor.example/note", params: { k: [1, 2, 3] } });
  });

  it("delivers a turn's updates, in order, before its response — unknown variants included", async () => {
    const client = await chain(n);
    const sessionId = await newSession(client);
    const updates: Json[] = [];
    for (let i = 0; i < 40; i++) {
      updates.push({
        jsonrpc: "2.0",
        method: "session/update",
        params: {
          sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `chunk ${i}` }, _meta: { i } },
        },
      });
    }
    updates.push({
      jsonrpc: "2.0",
      method: "session/update",
      params: { sessionId, update: { sessionUpdate: "future_variant_v9", payload: { a: [1] } } },
    });
    const start = client.received.length;
    const res = await client.request("session/prompt", { sessionId, prompt: script(updates.map((u) => ({ send: u }))) }, 99);
    expect(res.result).toEqual({ stopReason: "end_turn" });
    const arrived = client.received.slice(start);
    expect(arrived.slice(0, -1)).toEqual(updates);
    expect(arrived.at(-1)).toEqual(res);
  });

  it("carries agent→client requests back through every proxy and the answers forward", async () => {
    const client = await chain(n);
    const sessionId = await newSession(client);
    const permission = {
      method: "session/request_permission",
      params: {
        sessionId,
        toolCall: { toolCallId: "t1", title: "Write file", kind: "edit", rawInput: { path: "/tmp/x" } },
        options: [
          { optionId: "ok", name: "Allow", kind: "allow_once" },
          { optionId: "no", name: "Reject", kind: "reject_once" },
        ],
        _meta: { why: "test" },
      },
    };
    const read = { method: "fs/read_text_file", params: { sessionId, path: "/tmp/x", line: 1, limit: 2 } };
    client.onRequest = (m) =>
      m.method === "fs/read_text_file"
        ? { error: { code: -32002, message: "Resource not found", data: { path: m.params.path } } }
        : { result: { outcome: { outcome: "selected", optionId: "ok" }, _meta: { extra: true } } };
    const res = await client.request("session/prompt", {
      sessionId,
      prompt: script([{ ask: permission }, { ask: read }, { report: true }]),
    });
    expect(res.result).toEqual({ stopReason: "end_turn" });
    const asked = client.received.filter((m) => m.method === permission.method || m.method === read.method);
    expect(asked.map(({ id: _id, jsonrpc: _j, ...rest }) => rest)).toEqual([permission, read]);
    const report = await client.waitFor((m) => m.method === "_test/answers");
    expect(report.params.answers.map(({ id: _id, ...rest }: Json) => rest)).toEqual([
      { jsonrpc: "2.0", result: { outcome: { outcome: "selected", optionId: "ok" }, _meta: { extra: true } } },
      { jsonrpc: "2.0", error: { code: -32002, message: "Resource not found", data: { path: "/tmp/x" } } },
    ]);
  });

  it("passes the agent's error responses through unchanged", async () => {
    const client = await chain(n);
    const sessionId = await newSession(client);
    const error = { code: -32000, message: "Authentication required", data: { methods: ["oauth"], nested: { n: 1 } } };
    const res = await client.request("session/prompt", { sessionId, prompt: script([{ fail: error }]) });
    expect(res.error).toEqual(error);
  });

  it("re-issues $/cancel_request per hop and the cancelled prompt still gets its answer", async () => {
    const client = await chain(n);
    const sessionId = await newSession(client);
    const pending = client.request("session/prompt", { sessionId, prompt: script([{ waitCancel: true }]) }, "p1");
    client.notify("$/cancel_request", { requestId: "p1" });
    client.notify("$/cancel_request", { requestId: "never-sent" }); // unknown ids are ignored
    // The agent saw a cancel for *its* id of the prompt, never the client's.
    const seen = await client.waitFor((m) => m.method === "_test/seen" && m.params.message.method === "$/cancel_request");
    expect(seen.params.message.params.requestId).not.toBe("p1");
    expect(typeof seen.params.message.params.requestId).toBe("number");
    client.notify("session/cancel", { sessionId });
    expect((await pending).result).toEqual({ stopReason: "cancelled" });
    expect(client.received.filter((m) => m.method === "_test/seen" && m.params.message.params.requestId === "never-sent")).toEqual([]);
  });
});

describe.each([
  "1 pass-through proxy",
  "a nested conductor (2 proxies) and an empty one between pass-throughs",
  "proxies whose answers pass them (context, tool-guard) and a pass-through",
])("cancellation and the capability contract, through %s", (topology) => {
  it("session/cancel answers the permission request the chain still holds with cancelled", async () => {
    const client = await chain(topology);
    const sessionId = await newSession(client);
    const permission = {
      method: "session/request_permission",
      params: {
        sessionId,
        toolCall: { toolCallId: "t9", title: "Deploy" },
        options: [{ optionId: "ok", name: "Allow", kind: "allow_once" }],
      },
    };
    let asked: Json | null = null;
    client.onRequest = (m) => {
      asked = m;
      return new Promise(() => {}); // the user never answers
    };
    const turn = client.request("session/prompt", { sessionId, prompt: script([{ ask: permission }, { report: true }]) });
    await expect.poll(() => asked).not.toBeNull();
    client.notify("session/cancel", { sessionId });
    const report = await client.waitFor((m) => m.method === "_test/answers");
    expect(report.params.answers.map((a: Json) => a.result)).toEqual([{ outcome: { outcome: "cancelled" } }]);
    // The client is told the request it holds is void, with the id it knows it by.
    const cancel = await client.waitFor((m) => m.method === "$/cancel_request");
    expect(cancel.params.requestId).toBe(asked!.id);
    expect((await turn).result).toEqual({ stopReason: "end_turn" });
  });

  it("rejects prompt content the agent did not advertise, before any of it is sent", async () => {
    const client = await chain(topology, { SCRIPTED_CAPS: JSON.stringify({ promptCapabilities: { image: true } }) });
    const sessionId = await newSession(client);
    const image = { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" };
    const audio = { type: "audio", data: "UklGRg==", mimeType: "audio/wav" };
    const ok = await client.request("session/prompt", {
      sessionId,
      prompt: [image, { type: "resource_link", uri: "file:///a", name: "a" }],
    });
    expect(ok.result).toEqual({ stopReason: "end_turn" });
    const refused = await client.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "hi" }, audio],
    });
    expect(refused.error).toEqual({
      code: -32602,
      message: "prompt block 1 is an audio, but the agent did not advertise promptCapabilities.audio; nothing was sent",
    });
    const resource = await client.request("session/prompt", {
      sessionId,
      prompt: [{ type: "resource", resource: { uri: "file:///x", text: "x" } }],
    });
    expect(resource.error.message).toMatch(/block 0 is an embedded resource, .*promptCapabilities\.embeddedContext/);
  });
});

describe("bad input", () => {
  it("answers a malformed line with a parse error and keeps going", async () => {
    const client = await chain("1 pass-through proxy");
    client.send("{not json");
    const err = await client.waitFor((m) => m.error?.code === -32700);
    expect(err.id).toBeNull();
    client.send(JSON.stringify([{ jsonrpc: "2.0", id: 5, method: "session/new" }]));
    expect((await client.waitFor((m) => m.error?.code === -32600)).error.message).toMatch(/batches are not supported/);
    const res = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
    expect(res.result.sessionId).toBe("sess-1");
  });

  it("refuses requests before initialize, and proxy-only methods from the client", async () => {
    const client = new RawClient(NODE, [CORDON, "run", ...pass, "--", ...SCRIPTED_AGENT]);
    clients.push(client);
    const early = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
    expect(early.error).toEqual({ code: -32600, message: 'expected "initialize" before "session/new"' });
    await client.request("initialize", { protocolVersion: 1 });
    const forged = await client.request("proxy/successor", { method: "session/new", params: {} });
    expect(forged.error.code).toBe(-32600);
    expect(forged.error.message).toMatch(/only sent by a conductor/);
  });

  it("answers every pending request when the agent dies, names it, and exits non-zero", async () => {
    const client = await chain("3 pass-through proxies");
    const sessionId = await newSession(client);
    const waiting = client.request("session/prompt", { sessionId, prompt: script([{ waitCancel: true }]) });
    const dying = client.request("session/prompt", { sessionId: "sess-x", prompt: script([{ exit: 7 }]) });
    const [a, b] = await Promise.all([waiting, dying]);
    for (const res of [a, b]) {
      expect(res.error.code).toBe(-32603);
      expect(res.error.message).toMatch(/agent ".*scripted-agent\.mjs" exited with code 7; stderr: scripted agent exiting with 7 as asked/);
    }
    expect((await client.exited).code).toBe(1);
  });
});
