import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { configProblems } from "../../runtime/sandbox/manifest.js";
import { exampleManifest, INIT_PARAMS, INIT_RESULT, type Json, loadExampleProxy, ProxyUnderTest } from "../../sdk-as/test/harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadExampleProxy("passthrough");
});

function started(): ProxyUnderTest {
  const p = new ProxyUnderTest(component);
  expect(p.configure({})).toEqual([]);
  return p;
}

// Payloads written the way no serializer would write them: if any of it comes out different, the
// proxy re-serialized something it should have passed through.
const ODD_PROMPT_PARAMS =
  '{ "sessionId" : "sess-1", "prompt": [ {"type":"text", "text":"caf\\u00e9 \\"q\\" \\n 😀", "annotations": {"priority": 1.50}} ],' +
  ' "_meta": {"traceparent":"00-abc-01", "n": 1.5e3, "big": 12345678901234567890}, "futureField": [true, null, -0] }';
const ODD_UPDATE_PARAMS =
  '{"sessionId":"sess-1","update":{"sessionUpdate":"quantum_flux_update","flux":{"level":  7 ,"unit":"\\u00b5"},"_meta":{"k":[1,2.0]}}}';

describe("passthrough proxy", () => {
  it("answers proxy/initialize by forwarding initialize and relaying the result exactly", () => {
    const p = started();
    const initParams = JSON.stringify(INIT_PARAMS);
    const out = p.deliverRaw(`{"jsonrpc":"2.0","id":"c-1","method":"proxy/initialize","params":${initParams}}`);
    expect(out).toHaveLength(1);
    const fwd = JSON.parse(out[0]);
    expect(typeof fwd.id).toBe("number");
    expect(out[0]).toBe(
      `{"jsonrpc":"2.0","id":${fwd.id},"method":"proxy/successor","params":{"method":"initialize","params":${initParams}}}`,
    );
    const result = JSON.stringify(INIT_RESULT);
    expect(p.deliverRaw(`{"jsonrpc":"2.0","id":${fwd.id},"result":${result}}`)).toEqual([
      `{"jsonrpc":"2.0","id":"c-1","result":${result}}`,
    ]);
  });

  it("forwards a client request with unknown fields, _meta and odd formatting byte-for-byte, and routes the answer back", () => {
    const p = started();
    p.initialize();
    const out = p.deliverRaw(`{"jsonrpc":"2.0","id":17,"method":"session/prompt","params":${ODD_PROMPT_PARAMS}}`);
    expect(out).toHaveLength(1);
    const ourId = JSON.parse(out[0]).id;
    expect(out[0]).toBe(
      `{"jsonrpc":"2.0","id":${ourId},"method":"proxy/successor","params":{"method":"session/prompt","params":${ODD_PROMPT_PARAMS}}}`,
    );
    const result = '{"stopReason":"end_turn","_meta":{"usage":{"n":1.0}}}';
    expect(p.deliverRaw(`{"jsonrpc":"2.0","id":${ourId},"result":${result}}`)).toEqual([`{"jsonrpc":"2.0","id":17,"result":${result}}`]);
  });

  it("unwraps agent notifications, keeps unknown sessionUpdate variants verbatim and drops the hop-local envelope _meta", () => {
    const p = started();
    p.initialize();
    const out = p.deliverRaw(
      `{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":${ODD_UPDATE_PARAMS},"_meta":{"hop":"local"}}}`,
    );
    expect(out).toEqual([`{"jsonrpc":"2.0","method":"session/update","params":${ODD_UPDATE_PARAMS}}`]);
  });

  it("passes _-prefixed extension requests and notifications both ways", () => {
    const p = started();
    p.initialize();
    // client → agent, request with a string id
    const [req] = p.deliver({ jsonrpc: "2.0", id: "ext-1", method: "_ext/method", params: { a: [1, { b: null }] } });
    expect(req).toEqual({
      jsonrpc: "2.0",
      id: req.id,
      method: "proxy/successor",
      params: { method: "_ext/method", params: { a: [1, { b: null }] } },
    });
    expect(p.deliver({ jsonrpc: "2.0", id: req.id, result: { ok: true } })).toEqual([
      { jsonrpc: "2.0", id: "ext-1", result: { ok: true } },
    ]);
    // client → agent notification
    expect(p.deliver({ jsonrpc: "2.0", method: "_ext/notice", params: { x: 1 } })).toEqual([
      { jsonrpc: "2.0", method: "proxy/successor", params: { method: "_ext/notice", params: { x: 1 } } },
    ]);
    // agent → client request, numeric id, and a notification without params
    const [back] = p.deliver(ProxyUnderTest.fromAgent({ method: "_zed.dev/buffers", params: { q: "?" } }, 55));
    expect(back).toEqual({ jsonrpc: "2.0", id: back.id, method: "_zed.dev/buffers", params: { q: "?" } });
    expect(p.deliver({ jsonrpc: "2.0", id: back.id, result: [1, 2] })).toEqual([{ jsonrpc: "2.0", id: 55, result: [1, 2] }]);
    expect(p.deliver(ProxyUnderTest.fromAgent({ method: "_ext/ping" }))).toEqual([{ jsonrpc: "2.0", method: "_ext/ping" }]);
  });

  it("routes interleaved answers in both directions to the right requesters, string and numeric ids alike", () => {
    const p = started();
    p.initialize();
    const [toAgentA] = p.deliver({ jsonrpc: "2.0", id: 5, method: "session/new", params: { cwd: "/a", mcpServers: [] } });
    const [toClientB] = p.deliver(ProxyUnderTest.fromAgent({ method: "fs/read_text_file", params: { sessionId: "s", path: "/x" } }, 5));
    const [toAgentC] = p.deliver({ jsonrpc: "2.0", id: "5", method: "session/prompt", params: { sessionId: "s", prompt: [] } });
    const [toClientD] = p.deliver(
      ProxyUnderTest.fromAgent({ method: "terminal/create", params: { sessionId: "s", command: "ls" } }, "abc"),
    );
    const ours = [toAgentA.id, toClientB.id, toAgentC.id, toClientD.id];
    expect(new Set(ours).size).toBe(4);
    expect(toClientB).toEqual({ jsonrpc: "2.0", id: toClientB.id, method: "fs/read_text_file", params: { sessionId: "s", path: "/x" } });
    // answers arrive out of order
    expect(p.deliver({ jsonrpc: "2.0", id: toAgentC.id, result: { stopReason: "end_turn" } })).toEqual([
      { jsonrpc: "2.0", id: "5", result: { stopReason: "end_turn" } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: toClientD.id, result: { terminalId: "t1" } })).toEqual([
      { jsonrpc: "2.0", id: "abc", result: { terminalId: "t1" } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: toAgentA.id, result: { sessionId: "s" } })).toEqual([
      { jsonrpc: "2.0", id: 5, result: { sessionId: "s" } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: toClientB.id, result: { content: "hi" } })).toEqual([
      { jsonrpc: "2.0", id: 5, result: { content: "hi" } },
    ]);
    // a second answer to the same id is not ours any more
    expect(p.deliver({ jsonrpc: "2.0", id: toClientB.id, result: {} })).toEqual([]);
    expect(p.logs.at(-1)).toEqual({ level: "warn", message: `dropped a response to unknown request id ${toClientB.id}` });
  });

  it("relays error responses unchanged", () => {
    const p = started();
    p.initialize();
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 9, method: "session/load", params: { sessionId: "gone" } });
    const error = '{"code":-32002,"message":"Resource not found","data":{"uri":"file:///gone","n":1.0}}';
    expect(p.deliverRaw(`{"jsonrpc":"2.0","id":${fwd.id},"error":${error}}`)).toEqual([`{"jsonrpc":"2.0","id":9,"error":${error}}`]);
    const [perm] = p.deliver(
      ProxyUnderTest.fromAgent({ method: "session/request_permission", params: { sessionId: "s", toolCall: {}, options: [] } }, "p1"),
    );
    expect(p.deliver({ jsonrpc: "2.0", id: perm.id, error: { code: -32603, message: "client crashed" } })).toEqual([
      { jsonrpc: "2.0", id: "p1", error: { code: -32603, message: "client crashed" } },
    ]);
  });

  it("translates $/cancel_request to its own ids in both directions and ignores unknown ones", () => {
    const p = started();
    p.initialize();
    const [prompt] = p.deliver({ jsonrpc: "2.0", id: 21, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
    expect(p.deliver({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 21 } })).toEqual([
      { jsonrpc: "2.0", method: "proxy/successor", params: { method: "$/cancel_request", params: { requestId: prompt.id } } },
    ]);
    const [perm] = p.deliver(ProxyUnderTest.fromAgent({ method: "session/request_permission", params: { sessionId: "s" } }, "u-7"));
    expect(p.deliver(ProxyUnderTest.fromAgent({ method: "$/cancel_request", params: { requestId: "u-7" } }))).toEqual([
      { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: perm.id } },
    ]);
    // unknown id, and a client-side cancel naming an agent-side id: both ignored
    expect(p.deliver({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 999 } })).toEqual([]);
    expect(p.deliver({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: "u-7" } })).toEqual([]);
    // the cancelled requests are still answered, with the original ids
    expect(p.deliver({ jsonrpc: "2.0", id: perm.id, result: { outcome: { outcome: "cancelled" } } })).toEqual([
      { jsonrpc: "2.0", id: "u-7", result: { outcome: { outcome: "cancelled" } } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: prompt.id, result: { stopReason: "cancelled" } })).toEqual([
      { jsonrpc: "2.0", id: 21, result: { stopReason: "cancelled" } },
    ]);
    // after the answer the id is forgotten: a late cancel goes nowhere
    expect(p.deliver({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 21 } })).toEqual([]);
  });

  it("accepts the Rust SDK spellings _proxy/initialize, _proxy/successor and meta", () => {
    const p = started();
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 1, method: "_proxy/initialize", params: INIT_PARAMS });
    expect(fwd.params).toEqual({ method: "initialize", params: INIT_PARAMS });
    expect(p.deliver({ jsonrpc: "2.0", id: fwd.id, result: INIT_RESULT })).toEqual([{ jsonrpc: "2.0", id: 1, result: INIT_RESULT }]);
    const update: Json = { sessionId: "s", update: { sessionUpdate: "plan", entries: [] } };
    expect(
      p.deliver({ jsonrpc: "2.0", method: "_proxy/successor", params: { method: "session/update", params: update, meta: { x: 1 } } }),
    ).toEqual([{ jsonrpc: "2.0", method: "session/update", params: update }]);
  });

  it("answers a malformed proxy/successor request with an error instead of leaving it open", () => {
    const p = started();
    expect(p.deliver({ jsonrpc: "2.0", id: "bad", method: "proxy/successor", params: { notMethod: 1 } })).toEqual([
      { jsonrpc: "2.0", id: "bad", error: { code: -32602, message: "proxy/successor needs params {method, params}" } },
    ]);
  });

  it("keeps a 100 KB prompt intact and does not leak memory over many messages", () => {
    const p = started();
    p.initialize();
    const text = 'ünïcödé "quotes" \\ 😀\n'.repeat(4_500);
    const params = JSON.stringify({ sessionId: "s", prompt: [{ type: "text", text }] });
    expect(params.length).toBeGreaterThan(100_000);
    let before = 0;
    for (let i = 0; i < 300; i++) {
      const [fwd] = p.deliverRaw(`{"jsonrpc":"2.0","id":${i},"method":"session/prompt","params":${params}}`);
      const id = JSON.parse(fwd).id;
      expect(fwd).toBe(`{"jsonrpc":"2.0","id":${id},"method":"proxy/successor","params":{"method":"session/prompt","params":${params}}}`);
      expect(p.deliverRaw(`{"jsonrpc":"2.0","id":${id},"result":{"stopReason":"end_turn"}}`)).toEqual([
        `{"jsonrpc":"2.0","id":${i},"result":{"stopReason":"end_turn"}}`,
      ]);
      if (i === 50) before = p.host.memoryBytes;
    }
    // the incremental GC keeps up: memory after 250 more round trips is what it was after 50
    expect(p.host.memoryBytes).toBeLessThanOrEqual(before * 1.5);
  });

  it("embeds a manifest whose config schema accepts its config and refuses mistakes", async () => {
    const manifest = exampleManifest("passthrough");
    expect(manifest?.name).toBe("passthrough");
    expect(manifest?.description).toBeTruthy();
    expect(await configProblems(manifest, {})).toEqual([]);
    expect(await configProblems(manifest, { anything: 1 })).not.toEqual([]);
  });
});
