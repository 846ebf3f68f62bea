/**
 * Interest filters: a message a proxy does not watch leaves it exactly as its SDK would have
 * forwarded it (same shape, ids re-issued and mapped back, cancellations translated), and in its
 * turn behind the guest's queued output — under both sandboxes.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { proxyWasm } from "../../test/helpers/paths.js";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { parseLine } from "../protocol/parse-line.js";
import { attachRaw } from "../protocol/raw-json.js";
import { type Isolation, sandboxFactory } from "../sandbox/sandbox-factory.js";
import { FILTER_ID_PREFIX, INTEREST_FILTERS_ENV, InterestFilter, interestOf } from "./interest-filter.js";
import { WasmProxyPeer } from "./wasm-proxy.js";

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const cacheDir = mkdtempSync(join(tmpdir(), "cordon-filter-test-"));
const msg = (m: Json): JsonRpcMessage => {
  const text = JSON.stringify(m);
  return attachRaw(JSON.parse(text), text);
};
const update = (kind: string, extra: Json = {}) => ({
  jsonrpc: "2.0",
  method: "proxy/successor",
  params: { method: "session/update", params: { sessionId: "s", update: { sessionUpdate: kind, ...extra } } },
});
const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

/** A proxy peer over `proxies/dist/<name>.wasm`, its output collected; `filters: false` forces its filter off. */
async function openPeer(name: string, filters: boolean, isolation: Isolation = "thread") {
  const saved = process.env[INTEREST_FILTERS_ENV];
  if (!filters) process.env[INTEREST_FILTERS_ENV] = "off";
  const peer = new WasmProxyPeer({ name, path: proxyWasm(name), config: {} }, { cacheDir }, sandboxFactory(isolation));
  const out: Json[] = [];
  try {
    await peer.open({
      message: (m) => out.push(JSON.parse(JSON.stringify(m))),
      malformed: (d) => out.push({ malformed: d }),
      closed: (reason) => out.push({ closed: reason }),
    });
  } finally {
    if (saved === undefined) delete process.env[INTEREST_FILTERS_ENV];
    else process.env[INTEREST_FILTERS_ENV] = saved;
  }
  return { peer, out, send: (m: Json) => peer.send(msg(m)) };
}

/** Replaces the ids a proxy minted (they differ: the SDK's numbers, the filter's strings) with their order of appearance. */
function normalise(messages: Json[], minted: Set<unknown>): Json[] {
  const names = new Map<unknown, string>();
  const name = (id: unknown) => {
    if (!names.has(id)) names.set(id, `#${names.size + 1}`);
    return names.get(id);
  };
  const walk = (m: Json): Json => {
    if (Array.isArray(m)) return m.map(walk);
    if (typeof m !== "object" || m === null) return m;
    const copy: Json = {};
    for (const [k, v] of Object.entries(m)) copy[k] = (k === "id" || k === "requestId") && minted.has(v) ? name(v) : walk(v);
    return copy;
  };
  return messages.map(walk);
}

/**
 * One conversation, as the conductor would hold it with the proxy: its own requests from both
 * sides, answers to what the proxy forwarded, a cancellation of each kind, updates and extension
 * notifications. Returns what the proxy sent, with its minted ids normalised.
 */
async function conversation(filters: boolean, isolation: Isolation): Promise<Json[]> {
  // The conductor's ids are 1xx, apart from the small numbers the SDK mints.
  const { peer, out, send } = await openPeer("passthrough", filters, isolation);
  const minted = new Set<unknown>();
  const mintedBy = (i: number) => {
    minted.add(out[i].id);
    return out[i].id;
  };
  send({ jsonrpc: "2.0", id: 101, method: "proxy/initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
  await settle();
  send({ jsonrpc: "2.0", id: mintedBy(0), result: { protocolVersion: 1, agentCapabilities: { loadSession: true } } });
  await settle();
  send({ jsonrpc: "2.0", id: 102, method: "session/new", params: { cwd: "/w", mcpServers: [], _meta: { x: 1 } } });
  send({ jsonrpc: "2.0", method: "_ext/hello", params: { n: 1.5 } });
  send(update("agent_message_chunk", { content: { type: "text", text: "hi" } }));
  send(update("tool_call", { toolCallId: "t", title: "x" }));
  send({
    jsonrpc: "2.0",
    id: 107,
    method: "proxy/successor",
    params: { method: "session/request_permission", params: { sessionId: "s", options: [] } },
  });
  send({ jsonrpc: "2.0", id: 108, method: "proxy/successor", params: { method: "fs/read_text_file", params: { path: "/a" } } });
  await settle();
  const newId = mintedBy(2); // session/new, forwarded to the successor
  const permissionId = mintedBy(6);
  const readId = mintedBy(7);
  send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 102 } });
  send({ jsonrpc: "2.0", method: "proxy/successor", params: { method: "$/cancel_request", params: { requestId: 108 } } });
  send({ jsonrpc: "2.0", id: newId, result: { sessionId: "s" } });
  send({ jsonrpc: "2.0", id: permissionId, result: { outcome: { outcome: "cancelled" } } });
  send({ jsonrpc: "2.0", id: readId, error: { code: -32800, message: "cancelled" } });
  send({ jsonrpc: "2.0", id: 999, result: {} }); // an answer to nothing: the guest drops it (with a log line)
  await settle();
  await peer.close();
  return normalise(out, minted);
}

describe("interest filter: a proxy that watches nothing", () => {
  for (const isolation of ["thread", "worker"] as const) {
    it(`sends exactly what the same proxy sends with its filter off (${isolation})`, async () => {
      const off = await conversation(false, isolation);
      const on = await conversation(true, isolation);
      // The guest's own bookkeeping shows only when it sees the message: its log line about the unknown answer.
      expect(on).toEqual(off);
      expect(on.length).toBeGreaterThan(10);
    });
  }

  it("mints ids of its own and maps the answers back", () => {
    const filter = new InterestFilter(interestOf({ watches: {} }, {})!);
    const out = filter.pass(msg({ jsonrpc: "2.0", id: 5, method: "session/load", params: {} })) as Json;
    expect(out.method).toBe("proxy/successor");
    expect(out.id).toBe(`${FILTER_ID_PREFIX}1`);
    expect(out.params).toEqual({ method: "session/load", params: {} });
    expect(filter.inFlight).toBe(1);
    expect(filter.pass(msg({ jsonrpc: "2.0", id: out.id, result: null }))).toEqual({ jsonrpc: "2.0", id: 5, result: null });
    expect(filter.inFlight).toBe(0);
    // The guest's own answers, the host's messages and initialize always reach the guest.
    expect(filter.pass(msg({ jsonrpc: "2.0", id: 1, result: null }))).toBeNull();
    expect(filter.pass(msg({ jsonrpc: "2.0", method: "_cordon/configure", params: {} }))).toBeNull();
    expect(filter.pass(msg({ jsonrpc: "2.0", id: 9, method: "proxy/initialize", params: {} }))).toBeNull();
    expect(filter.pass(msg({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 77 } }))).toBeNull();
  });

  it("is off without a declaration, or when CORDON_INTEREST_FILTERS=off", () => {
    expect(interestOf(null, {})).toBeNull();
    expect(interestOf({ name: "x" }, {})).toBeNull();
    expect(interestOf({ watches: { methods: [] } }, { [INTEREST_FILTERS_ENV]: "off" })).toBeNull();
    expect(interestOf({ watches: { methods: ["session/update"] } }, {})!.updates).toBeNull();
  });

  it("renames a request-scoped elicitation of a passed request, and leaves one of the guest's to the guest", () => {
    const filter = new InterestFilter(interestOf({ watches: {} }, {})!);
    const prompt = filter.pass(msg({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: {} })) as Json;
    const scoped = filter.pass(
      msg({
        jsonrpc: "2.0",
        id: 4,
        method: "proxy/successor",
        params: { method: "elicitation/create", params: { requestId: prompt.id, message: "?" } },
      }),
    ) as Json;
    expect(scoped.params.requestId).toBe(3);
    expect(scoped.id).toMatch(FILTER_ID_PREFIX);
    expect(
      filter.pass(
        msg({ jsonrpc: "2.0", id: 5, method: "proxy/successor", params: { method: "elicitation/create", params: { requestId: 1 } } }),
      ),
    ).toBeNull();
  });
});

describe("interest filter: a request handed on with its answer passing the guest", () => {
  it("offers the pass only when the manifest declares `answers`", () => {
    expect(new InterestFilter(interestOf({ watches: { methods: ["session/prompt"] } }, {})!).answersPass).toBe(false);
    expect(new InterestFilter(interestOf({ watches: { methods: ["session/prompt"], answers: [] } }, {})!).answersPass).toBe(true);
  });

  it("re-issues the guest's forward under an id of its own; the answer and a cancellation then pass the guest, both ways", () => {
    const filter = new InterestFilter(interestOf({ watches: { methods: ["session/prompt", "fs/read_text_file"], answers: [] } }, {})!);
    // From the client side: the conductor delivered prompt 3, the guest forwarded it in an envelope as its 41.
    const prompt = msg({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: "s" } });
    const handed = filter.handOnPassing(
      prompt,
      msg({ jsonrpc: "2.0", id: 41, method: "proxy/successor", params: { method: "session/prompt", params: { sessionId: "s" } } }),
    ) as Json;
    expect(handed).toEqual({
      jsonrpc: "2.0",
      id: `${FILTER_ID_PREFIX}1`,
      method: "proxy/successor",
      params: { method: "session/prompt", params: { sessionId: "s" } },
    });
    expect(filter.inFlight).toBe(1);
    // The conductor's cancel of 3 goes on to where the prompt went, by the filter's id, in an envelope.
    expect(filter.pass(msg({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 3 } }))).toEqual({
      jsonrpc: "2.0",
      method: "proxy/successor",
      params: { method: "$/cancel_request", params: { requestId: handed.id } },
    });
    // The answer goes back under the conductor's id, and the request is done.
    expect(filter.pass(msg({ jsonrpc: "2.0", id: handed.id, result: { stopReason: "cancelled" } }))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { stopReason: "cancelled" },
    });
    expect(filter.inFlight).toBe(0);
    expect(filter.pass(msg({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 3 } }))).toBeNull();
    // From the agent side: an envelope's request, handed on unwrapped toward the predecessor.
    const read = msg({ jsonrpc: "2.0", id: 8, method: "proxy/successor", params: { method: "fs/read_text_file", params: { path: "/p" } } });
    const up = filter.handOnPassing(read, msg({ jsonrpc: "2.0", id: 42, method: "fs/read_text_file", params: { path: "/p" } })) as Json;
    expect(up.id).toBe(`${FILTER_ID_PREFIX}2`);
    expect(filter.pass(msg({ ...update("x"), params: { method: "$/cancel_request", params: { requestId: 8 } } }))).toEqual({
      jsonrpc: "2.0",
      method: "$/cancel_request",
      params: { requestId: up.id },
    });
    expect(filter.pass(msg({ jsonrpc: "2.0", id: up.id, result: { content: "x" } }))).toEqual({
      jsonrpc: "2.0",
      id: 8,
      result: { content: "x" },
    });
    // A notification handed on is left as it is.
    const note = msg({ jsonrpc: "2.0", method: "proxy/successor", params: { method: "session/cancel", params: {} } });
    expect(filter.handOnPassing(msg({ jsonrpc: "2.0", method: "session/cancel", params: {} }), note)).toBe(note);
  });
});

describe("interest filter: what the conductor may route past the proxy (ignores)", () => {
  const call = (m: Json) => msg({ jsonrpc: "2.0", ...m }) as Json;

  it("what it does not watch, but never a cancellation, initialize or the host's messages", () => {
    const filter = new InterestFilter(interestOf({ watches: { methods: ["session/prompt"], updates: ["plan"] } }, {})!);
    expect(filter.ignores(call({ id: 1, method: "session/load", params: {} }))).toBe(true);
    expect(filter.ignores(call({ method: "session/update", params: { update: { sessionUpdate: "agent_message_chunk" } } }))).toBe(true);
    expect(filter.ignores(call({ method: "session/update", params: { update: { sessionUpdate: "plan" } } }))).toBe(false);
    expect(filter.ignores(call({ id: 2, method: "session/prompt", params: {} }))).toBe(false);
    expect(filter.ignores(call({ method: "$/cancel_request", params: { requestId: 1 } }))).toBe(false);
    expect(filter.ignores(call({ id: 3, method: "initialize", params: {} }))).toBe(false);
    expect(filter.ignores(call({ method: "_cordon/configure", params: {} }))).toBe(false);
  });

  it("an update past a proxy that watches no kind, its params never parsed (a streamed line's are checked, not parsed)", () => {
    const filter = new InterestFilter(interestOf({ watches: { methods: [], updates: [] } }, {})!);
    const line = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}}';
    parseLine(line); // the check's module loaded (finding it reads package.json) before JSON.parse is watched
    const parse = vi.spyOn(JSON, "parse");
    try {
      const read = parseLine(line) as Json;
      expect(filter.ignores(read)).toBe(true);
      expect(parse).not.toHaveBeenCalled();
      // A proxy that watches some kind reads it: then the params are parsed, once.
      const some = new InterestFilter(interestOf({ watches: { methods: [], updates: ["plan"] } }, {})!);
      expect(some.ignores(read)).toBe(true);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it("no request past a proxy that watches elicitations: a scoped one would have to pass it unseen", () => {
    const filter = new InterestFilter(interestOf({ watches: { methods: ["elicitation/create"] } }, {})!);
    expect(filter.ignores(call({ id: 1, method: "session/prompt", params: {} }))).toBe(false);
    expect(filter.ignores(call({ method: "session/update", params: { update: { sessionUpdate: "plan" } } }))).toBe(true);
  });
});

describe("interest filter: order", () => {
  for (const isolation of ["thread", "worker"] as const) {
    it(`a message that passes never overtakes the guest's output for earlier messages (${isolation})`, async () => {
      // arrow watches agent_message_chunk only: chunks go through the guest, tool calls pass it.
      const { peer, out, send } = await openPeer("arrow", true, isolation);
      for (let i = 0; i < 200; i++) {
        send(update("agent_message_chunk", { content: { type: "text", text: `c${i}` } }));
        send(update("tool_call", { toolCallId: `t${i}` }));
      }
      for (let waited = 0; out.length < 400 && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      await peer.close();
      const seen = out.map((m) =>
        m.params.update.sessionUpdate === "tool_call" ? m.params.update.toolCallId : m.params.update.content.text,
      );
      expect(seen).toEqual(Array.from({ length: 200 }, (_, i) => [`>c${i}`, `t${i}`]).flat());
    });

    it(`what passes while the guest owes nothing goes back from a microtask, and nothing after it overtakes it (${isolation})`, async () => {
      // context watches prompts and no answers: its prompt's answer passes it.
      const { peer, out, send } = await openPeer("context", true, isolation);
      send({ jsonrpc: "2.0", id: 5, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
      await expect.poll(() => out.length).toBe(1);
      const passing = out[0].id;
      expect(passing).toMatch(FILTER_ID_PREFIX);
      const chunk = { jsonrpc: "2.0", ...update("agent_message_chunk", { content: { type: "text", text: "after" } }).params } as Json;
      send({ jsonrpc: "2.0", id: passing, result: { stopReason: "end_turn" } });
      // On its way (not yet given back): the conductor may not route a later message past the proxy,
      // and what waits for the proxy to be idle waits for it.
      expect(out).toHaveLength(1);
      expect(peer.passes(chunk)).toBe(false);
      const idle: number[] = [];
      peer.whenIdle(() => idle.push(out.length));
      expect(idle).toEqual([]);
      send(update("agent_message_chunk", { content: { type: "text", text: "after" } }));
      await Promise.resolve();
      expect(out[1]).toEqual({ jsonrpc: "2.0", id: 5, result: { stopReason: "end_turn" } });
      expect(idle).toEqual([2]);
      await expect.poll(() => out.length).toBe(3);
      expect(out[2].params.update.content.text).toBe("after");
      expect(peer.passes(chunk)).toBe(true);
      await peer.close();
    });
  }
});
