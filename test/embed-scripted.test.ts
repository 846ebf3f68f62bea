/**
 * The embedding API against the raw scripted agent (test/peers/scripted-agent.mjs) through real
 * WASM proxies: it sends exactly the updates a test scripts — usage with and without cost, plans,
 * kinds no schema knows — and advertises exactly the capabilities a test gives it, so the
 * capability gates can be seen refusing before anything is sent (checked in the chain's trace).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  AbortError,
  AgentError,
  type Connection,
  ConnectionClosedError,
  type ConnectOptions,
  connect,
  type PromptEvent,
  UnsupportedError,
} from "../runtime/index.js";
import { NODE, proxyWasm, ROOT } from "./helpers/paths.js";

const open: Connection[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function start(caps: object, options: Partial<ConnectOptions> = {}): Promise<Connection & { trace: string }> {
  const trace = join(mkdtempSync(join(tmpdir(), "cordon-embed-scripted-")), "trace.jsonl");
  const connection = await connect({
    chain: {
      proxies: [{ wasm: proxyWasm("passthrough") }, { wasm: proxyWasm("arrow") }],
      agent: { command: NODE, args: [`${ROOT}test/peers/scripted-agent.mjs`], env: { SCRIPTED_CAPS: JSON.stringify(caps) } },
    },
    log: "silent",
    trace,
    ...options,
  });
  open.push(connection);
  return Object.assign(connection, { trace });
}

/** What reached the agent, from the chain's trace. */
function toAgent(trace: string): Array<{ method: string; params: any }> {
  return readFileSync(trace, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((e) => (e.type === "request" || e.type === "notification") && e.to === "agent");
}

const update = (sessionId: string, u: object) => ({ send: { jsonrpc: "2.0", method: "session/update", params: { sessionId, update: u } } });
const script = (steps: object[]) => JSON.stringify(steps);

async function collect(run: AsyncIterable<PromptEvent>): Promise<PromptEvent[]> {
  const events: PromptEvent[] = [];
  for await (const e of run) events.push(e);
  return events;
}

describe("an agent that advertises nothing", () => {
  it("refuses every optional session method and gated content with UnsupportedError before sending", async () => {
    const cordon = await start({});
    expect(cordon.supports).toMatchObject({
      loadSession: false,
      listSessions: false,
      resumeSession: false,
      forkSession: false,
      closeSession: false,
      deleteSession: false,
    });
    const session = await cordon.newSession();
    const refusals = [
      () => cordon.loadSession(session.id),
      () => cordon.resumeSession(session.id),
      () => cordon.forkSession(session.id),
      () => cordon.listSessions(),
      () => cordon.closeSession(session.id),
      () => cordon.deleteSession(session.id),
      () => session.close(),
      () => cordon.newSession({ additionalDirectories: ["/tmp"] }),
    ];
    const capabilities: string[] = [];
    for (const call of refusals) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsupportedError);
      capabilities.push((error as UnsupportedError).capability);
    }
    expect(capabilities).toEqual([
      "agentCapabilities.loadSession",
      "agentCapabilities.sessionCapabilities.resume",
      "agentCapabilities.sessionCapabilities.fork",
      "agentCapabilities.sessionCapabilities.list",
      "agentCapabilities.sessionCapabilities.close",
      "agentCapabilities.sessionCapabilities.delete",
      "agentCapabilities.sessionCapabilities.close",
      "agentCapabilities.sessionCapabilities.additionalDirectories",
    ]);
    expect(() =>
      session.prompt([
        { type: "text", text: "look" },
        { type: "image", data: "AA==", mimeType: "image/png" },
      ]),
    ).toThrow(/prompt block 1 is an image.*promptCapabilities\.image/);
    expect(() => session.prompt({ type: "audio", data: "AA==", mimeType: "audio/wav" })).toThrow(UnsupportedError);
    expect(() => session.prompt({ type: "resource", resource: { uri: "file:///a", text: "x" } })).toThrow(/embeddedContext/);
    expect(session.modes).toBeNull();
    await expect(session.setMode("code")).rejects.toBeInstanceOf(UnsupportedError);
    await expect(session.setConfigOption("x", "y")).rejects.toBeInstanceOf(UnsupportedError);
    await cordon.close();
    // Only initialize and the one session/new reached the agent.
    expect(toAgent(cordon.trace).map((m) => m.method)).toEqual(["initialize", "session/new"]);
  });

  it("is offered stdio MCP servers and acp ones (bridged), never http or sse", async () => {
    const cordon = await start({});
    expect(cordon.supports.mcp).toEqual({ stdio: true, http: false, sse: false, acp: true });
    const session = await cordon.newSession({
      mcpServers: [
        { name: "local", command: "srv", args: [], env: [] },
        { type: "http", name: "web", url: "http://127.0.0.1:9/mcp", headers: [] },
        { type: "sse", name: "old", url: "http://127.0.0.1:9/sse", headers: [] },
      ],
    });
    expect(session.omittedMcpServers.map((s) => s.name)).toEqual(["web", "old"]);
    await cordon.close();
    const setup = toAgent(cordon.trace).find((m) => m.method === "session/new")!;
    expect(setup.params.mcpServers.map((s: { name: string }) => s.name)).toEqual(["local"]);
  });

  it("is offered http once it advertises mcpCapabilities.http, and declares the client's fs/terminal as false", async () => {
    const cordon = await start({ mcpCapabilities: { http: true } });
    await cordon.newSession({ mcpServers: [{ type: "http", name: "web", url: "http://127.0.0.1:9/mcp", headers: [] }] });
    await cordon.close();
    const sent = toAgent(cordon.trace);
    expect(sent.find((m) => m.method === "session/new")!.params.mcpServers.map((s: { name: string }) => s.name)).toEqual(["web"]);
    expect(sent.find((m) => m.method === "initialize")!.params.clientCapabilities).toMatchObject({
      fs: { readTextFile: false, writeTextFile: false },
      terminal: false,
    });
  });
});

describe("updates only a scripted agent sends", () => {
  it("usage (cost only when reported), plan, unknown kinds as raw, tool calls correlated, and the turn's usage", async () => {
    const cordon = await start({});
    const session = await cordon.newSession();
    const sid = session.id;
    const future = { sessionUpdate: "hologram_update", frames: [1, 2, 3], _meta: { vendor: "x" } };
    const events = await collect(
      session.prompt(
        script([
          update(sid, { sessionUpdate: "usage_update", used: 1200, size: 200000 }),
          update(sid, { sessionUpdate: "usage_update", used: 1800, size: 200000, cost: { amount: 0.042, currency: "EUR" } }),
          update(sid, {
            sessionUpdate: "plan",
            entries: [
              { content: "read", priority: "high", status: "completed" },
              { content: "write", priority: "medium", status: "in_progress" },
            ],
          }),
          update(sid, future),
          update(sid, { sessionUpdate: "tool_call", toolCallId: "t9", title: "Patch", kind: "edit", status: "pending" }),
          update(sid, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "working" } }),
          update(sid, {
            sessionUpdate: "tool_call_update",
            toolCallId: "t9",
            status: "completed",
            content: [
              { type: "diff", path: "/w/a.ts", oldText: "a", newText: "b" },
              { type: "content", content: { type: "text", text: "patched" } },
            ],
            locations: [{ path: "/w/a.ts", line: 7 }],
          }),
          update(sid, { sessionUpdate: "usage_update", used: "lots" }),
          { reply: { stopReason: "max_tokens", usage: { totalTokens: 30, inputTokens: 20, outputTokens: 10 } } },
        ]),
      ),
    );
    expect(events.filter((e) => e.type === "usage")).toEqual([
      { type: "usage", used: 1200, size: 200000 },
      { type: "usage", used: 1800, size: 200000, cost: { amount: 0.042, currency: "EUR" } },
    ]);
    expect(events.find((e) => e.type === "plan")).toEqual({
      type: "plan",
      entries: [
        { content: "read", priority: "high", status: "completed" },
        { content: "write", priority: "medium", status: "in_progress" },
      ],
    });
    const raws = events.filter((e) => e.type === "raw");
    expect(raws).toEqual([
      { type: "raw", sessionUpdate: "hologram_update", update: future },
      { type: "raw", sessionUpdate: "usage_update", update: { sessionUpdate: "usage_update", used: "lots" } },
    ]);
    expect(events.find((e) => e.type === "tool_call_update")).toMatchObject({
      toolCallId: "t9",
      call: {
        title: "Patch",
        kind: "edit",
        status: "completed",
        text: "patched",
        diffs: [{ path: "/w/a.ts", oldText: "a", newText: "b" }],
        locations: [{ path: "/w/a.ts", line: 7 }],
      },
    });
    expect(events.find((e) => e.type === "text")).toEqual({ type: "text", text: ">working" });
    expect(events.at(-1)).toEqual({
      type: "stop",
      stopReason: "max_tokens",
      usage: { totalTokens: 30, inputTokens: 20, outputTokens: 10 },
      response: { stopReason: "max_tokens", usage: { totalTokens: 30, inputTokens: 20, outputTokens: 10 } },
    });
  });
});

describe("permission answers on the wire", () => {
  const ask = (sid: string, options: object[]) => ({
    ask: { method: "session/request_permission", params: { sessionId: sid, toolCall: { toolCallId: "t1", title: "Do it" }, options } },
  });
  const both = [
    { optionId: "yes", name: "Yes", kind: "allow_once" },
    { optionId: "no", name: "No", kind: "reject_once" },
  ];
  const allowOnly = [{ optionId: "yes", name: "Yes", kind: "allow_always" }];

  it("several requests in one turn get what the policy decided; deny without a reject option is cancelled, never an allow", async () => {
    const decisions = ["allow", "deny", "deny"] as const;
    let i = 0;
    const cordon = await start({}, { permissions: async () => decisions[i++] });
    const session = await cordon.newSession();
    const sid = session.id;
    const events = await collect(session.prompt(script([ask(sid, both), ask(sid, both), ask(sid, allowOnly)])));
    expect(events.filter((e) => e.type === "permission").map((e) => e.type === "permission" && [e.outcome, e.optionId])).toEqual([
      ["allowed", "yes"],
      ["denied", "no"],
      ["denied", undefined],
    ]);
  });

  it("the answers the agent received are the ones the decisions map to", async () => {
    const answers: unknown[] = [];
    const cordon = await start(
      {},
      { permissions: "deny", onNotification: (method, params) => method === "_test/answers" && answers.push(params) },
    );
    const session = await cordon.newSession();
    const sid = session.id;
    await session.prompt(script([ask(sid, both), ask(sid, allowOnly), { report: true }])).result;
    await expect.poll(() => answers.length).toBe(1);
    const results = (answers[0] as { answers: Array<{ result: unknown }> }).answers.map((a) => a.result);
    expect(results).toEqual([{ outcome: { outcome: "selected", optionId: "no" } }, { outcome: { outcome: "cancelled" } }]);
  });
});

describe("AbortSignal on the connection", () => {
  it("an aborted signal refuses to start; aborting later closes the connection and ends the agent", async () => {
    await expect(start({}, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortError);
    const controller = new AbortController();
    const cordon = await start({}, { signal: controller.signal });
    const session = await cordon.newSession();
    controller.abort();
    expect(await cordon.closed).toEqual({ code: 0 });
    expect(() => session.prompt("x")).toThrow(ConnectionClosedError);
  });
});

describe("extensions and failures", () => {
  it("extension requests and notifications from the agent reach the application's handlers", async () => {
    const notes: string[] = [];
    const cordon = await start(
      {},
      {
        onNotification: (method) => notes.push(method),
        onRequest: (method, params) => ({ handled: method, params }),
      },
    );
    const session = await cordon.newSession();
    await session.prompt(
      script([
        { send: { jsonrpc: "2.0", method: "_vendor/ping", params: { n: 1 } } },
        { ask: { method: "_vendor/question", params: { q: "?" } } },
        { report: true },
      ]),
    ).result;
    await expect.poll(() => notes).toContain("_test/answers");
    expect(notes).toContain("_vendor/ping");
    // And the client's own extension requests go through unchecked.
    expect(await cordon.request("_vendor/echo", { x: 1 })).toEqual({ echo: { jsonrpc: "2.0", method: "_vendor/echo", params: { x: 1 } } });
  });

  it("an error answer to the prompt fails the run after its events; an agent that exits ends the connection", async () => {
    const cordon = await start({});
    const session = await cordon.newSession();
    const sid = session.id;
    const seen: string[] = [];
    const error = await (async () => {
      for await (const e of session.prompt(
        script([
          update(sid, { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hm" } }),
          { fail: { code: -32000, message: "quota", data: { retry: 5 } } },
        ]),
      ))
        seen.push(e.type);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(["thought"]);
    expect(error).toMatchObject({ rpcCode: -32000, rpcMessage: "quota", data: { retry: 5 } });
    expect(error).toBeInstanceOf(AgentError);

    const dying = session.prompt(script([{ exit: 3 }]));
    await expect(dying.result).rejects.toThrow(/exited with code 3/);
    expect((await cordon.closed).code).not.toBe(0);
  });
});

describe("bounded memory toward the application (issue 17)", () => {
  const ghostToolCalls = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      update(`ghost-${i}`, {
        sessionUpdate: "tool_call",
        toolCallId: `t${i}`,
        title: "Read",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "g".repeat(4096) } }],
      }),
    );

  it("updates for sessions the application never set up are not kept: dropped with a throttled warning, or handed to onUpdate", async () => {
    const warnings: string[] = [];
    const cordon = await start({}, { log: { level: "warn", write: (line) => warnings.push(line) } });
    const session = await cordon.newSession();
    await session.prompt(script([...ghostToolCalls(2000), { reply: { stopReason: "end_turn" } }])).result;
    // 2000 made-up sessions with 4 KiB of tool-call content each: nothing of them is retained.
    expect(cordon.orphanStats).toEqual({ pendingSetups: 0, updates: 0, bytes: 0 });
    const dropped = warnings.filter((w) => w.includes("which this connection did not set up"));
    expect(dropped.length).toBeGreaterThanOrEqual(1);
    expect(dropped.length).toBeLessThan(10); // one line per few seconds, with the count of the rest
    expect(dropped[0]).toContain('dropped a session/update for session "ghost-0"');
    expect(session.toolCalls).toEqual([]);

    const seen: string[] = [];
    const listening = await start({}, { onUpdate: (sessionId, event) => void seen.push(`${sessionId}:${event.type}`) });
    const s2 = await listening.newSession();
    await s2.prompt(script([...ghostToolCalls(300), { reply: { stopReason: "end_turn" } }])).result;
    expect(seen).toEqual(Array.from({ length: 300 }, (_, i) => `ghost-${i}:tool_call`));
    expect(listening.orphanStats.updates).toBe(0);
  });

  it("updates the agent sends for the session it is creating, before its answer names it, start that session's history", async () => {
    const early = [
      { sessionUpdate: "available_commands_update", availableCommands: [{ name: "plan", description: "Plan" }] },
      { sessionUpdate: "tool_call", toolCallId: "warmup", title: "Index", status: "in_progress" },
    ];
    const foreign: string[] = [];
    const cordon = await connect({
      chain: {
        proxies: [{ wasm: proxyWasm("passthrough") }],
        agent: {
          command: NODE,
          args: [`${ROOT}test/peers/scripted-agent.mjs`],
          env: { SCRIPTED_CAPS: "{}", SCRIPTED_SETUP_UPDATES: JSON.stringify(early) },
        },
      },
      log: "silent",
      onUpdate: (sessionId) => void foreign.push(sessionId),
    });
    open.push(cordon);
    const session = await cordon.newSession();
    expect(session.history.map((e) => e.type)).toEqual(["commands", "tool_call"]);
    expect(session.commands).toEqual([{ name: "plan", description: "Plan" }]);
    expect(session.toolCalls).toMatchObject([{ toolCallId: "warmup", title: "Index", status: "in_progress" }]);
    expect(foreign).toEqual([]); // they were this session's, not another's
    expect(cordon.orphanStats).toEqual({ pendingSetups: 0, updates: 0, bytes: 0 });
  });

  it("a reader that is behind because it awaits its own request through the chain is not deadlocked by the pause", async () => {
    const cordon = await start({});
    const session = await cordon.newSession();
    const sid = session.id;
    const total = 3000;
    const run = session.prompt(
      script(
        Array.from({ length: total }, (_, i) =>
          update(sid, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${i};` } }),
        ),
      ),
    );
    let n = 0;
    let asked = false;
    for await (const e of run) {
      if (e.type !== "text") continue;
      n++;
      if (!asked) {
        asked = true;
        // Let the run fall far behind, then wait on the chain from inside the loop.
        while (run.buffered.events < 1024 && !run.done) await new Promise((r) => setTimeout(r, 10));
        expect(await cordon.request("_vendor/echo", { n })).toEqual({ echo: { jsonrpc: "2.0", method: "_vendor/echo", params: { n: 1 } } });
      }
    }
    expect(n).toBe(total);
  });

  it("a reader that falls behind pauses the chain instead of buffering without bound, and loses nothing", async () => {
    const cordon = await start({});
    const session = await cordon.newSession();
    const sid = session.id;
    const total = 6000;
    const run = session.prompt(
      script([
        ...Array.from({ length: total }, (_, i) =>
          update(sid, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${i};` } }),
        ),
      ]),
    );
    const it = run[Symbol.asyncIterator]();
    const seen: string[] = [];
    const first = await it.next();
    if (first.value?.type === "text") seen.push(first.value.text);
    // The reader stops reading for a while; the agent meanwhile has sent everything.
    let most = 0;
    for (let i = 0; i < 40; i++) {
      await new Promise((r) => setTimeout(r, 25));
      most = Math.max(most, run.buffered.events);
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(4 * 1024); // paused near the bound (1024), whatever was in flight included
    for (let r = await it.next(); !r.done; r = await it.next()) if (r.value.type === "text") seen.push(r.value.text);
    expect(seen.join("")).toBe(Array.from({ length: total }, (_, i) => `>${i};`).join(""));
    expect((await run.result).stopReason).toBe("end_turn");
  });
});
