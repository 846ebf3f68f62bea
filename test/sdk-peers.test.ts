/**
 * Two official-SDK peers with Cordon between them: an `@agentclientprotocol/sdk` 2.4.0 client →
 * `cordon run` (0, 1 and 3 pass-through WASM proxies, and nested conductors) → an agent written
 * with the same SDK (`test/peers/sdk-agent.mjs`). Both ends tap their raw stdio, so for every
 * method, update variant, agent request, answer and error the test checks that what one SDK wrote
 * is exactly what the other read (parsed JSON, deep-equal, only the per-hop `id` left out), in
 * the same order — and that the SDKs make sense of it (results, stop reasons, cancellation).
 */

import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, ROOT } from "./helpers/paths.js";
import { type Json, parsed, type RawWindow, TappedSdkClient, withoutIds } from "./helpers/tapped-sdk-client.js";

const SDK_AGENT = [NODE, `${ROOT}test/peers/sdk-agent.mjs`];
const pass = ["--proxy", proxyWasm("passthrough")];
const nested = (...inner: string[]) => ["--proxy-cmd", [NODE, CORDON, "proxy", ...inner].map((w) => JSON.stringify(w)).join(" ")];

const TOPOLOGIES: Record<string, string[]> = {
  "0 proxies": [],
  "1 pass-through proxy": pass,
  "3 pass-through proxies": [...pass, ...pass, ...pass],
  "a nested conductor with a proxy and an empty nested conductor": [...pass, ...nested(...pass), ...nested()],
};

const cwd = "/work/project";
const M = { _meta: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", vendor: { x: [1, 2], s: "ü😀" } } };

const INITIALIZE = {
  protocolVersion: 1,
  clientCapabilities: {
    fs: { readTextFile: true, writeTextFile: true },
    terminal: true,
    elicitation: { form: {}, url: {} },
    session: { configOptions: { boolean: {} } },
    _meta: { "zed.dev": { workspace: true } },
  },
  clientInfo: { name: "sdk-peers-test", title: "SDK peers test", version: "1.0.0" },
  ...M,
};

/**
 * Messages for comparison: parsed, `id` removed; a `$/cancel_request`'s `requestId` is replaced by
 * the method of the request it names in the same stream (each hop has its own ids for it).
 */
function comparable(lines: string[]): Json[] {
  const messages = parsed(lines);
  return messages.map(({ id: _id, ...rest }) => {
    if (rest.method !== "$/cancel_request") return rest;
    const target = messages.find((m) => m.method !== undefined && m.method !== "$/cancel_request" && m.id === rest.params?.requestId);
    return {
      ...rest,
      params: {
        ...rest.params,
        requestId: target ? `<id of its ${target.method}>` : `<unknown ${JSON.stringify(rest.params?.requestId)}>`,
      },
    };
  });
}

/** Both directions carried faithfully: the agent read what the client wrote, the client read what the agent wrote. */
function expectFaithful(w: RawWindow): void {
  expect(w.client.wrote.length, "the client wrote something").toBeGreaterThan(0);
  expect(w.agent.wrote.length, "the agent wrote something").toBeGreaterThan(0);
  expect(comparable(w.agent.read), "client → agent").toEqual(comparable(w.client.wrote));
  expect(comparable(w.client.read), "agent → client").toEqual(comparable(w.agent.wrote));
}

/** The sequence of kinds in a stream: a method name, or `result`/`error` for a response. */
const kinds = (lines: string[]) => parsed(lines).map((m) => m.method ?? ("error" in m ? "error" : "result"));

/** Answers from the client's handlers (rich, with `_meta`, so their fidelity is visible). */
function clientAnswer(method: string, params: any, signal: AbortSignal): unknown {
  switch (method) {
    case "session/request_permission":
      return { outcome: { outcome: "selected", optionId: "allow-always" }, ...M };
    case "fs/read_text_file":
      if (params.path === "/work/missing.ts") {
        throw new acp.RequestError(-32002, "Resource not found", { path: params.path, why: { code: "ENOENT", list: [1, null] } });
      }
      return { content: "line 10\nline 11 ü😀\n", ...M };
    case "fs/write_text_file":
      return {};
    case "terminal/create":
      return { terminalId: "term-7", ...M };
    case "terminal/output":
      return { output: "ok\n", truncated: false, exitStatus: { exitCode: 0, signal: null } };
    case "terminal/wait_for_exit":
      return { exitCode: 0, signal: null, ...M };
    case "terminal/kill":
      return {};
    case "terminal/release":
      return { ...M };
    case "elicitation/create":
      if (params.message === "cancel me") {
        // Held until the agent's `$/cancel_request` for it arrives (the SDK aborts `signal`).
        return new Promise((resolve) => {
          if (signal.aborted) resolve({ action: "cancel" });
          else signal.addEventListener("abort", () => resolve({ action: "cancel" }), { once: true });
        });
      }
      if (params.mode === "url") return { action: "decline" };
      return { action: "accept", content: { name: "Ada", admin: true }, ...M };
    default:
      if (method.startsWith("_vendor/")) return { got: params, ...M };
      throw acp.RequestError.methodNotFound(method);
  }
}

/** Client → agent requests, in order (each may depend on the state the previous ones left). */
type Step = { name: string; method: string; params: Json; expect?: (w: RawWindow, answer: Json) => void };
const list = (cursor?: string) => (cursor === undefined ? { cwd, ...M } : { cwd, cursor });
const STEPS: Step[] = [
  { name: "authenticate", method: "authenticate", params: { methodId: "api-key", ...M } },
  {
    name: "session/new (stdio and http MCP servers, unknown fields)",
    method: "session/new",
    params: {
      cwd,
      mcpServers: [
        { name: "fs", command: "/bin/mcp", args: ["--ro"], env: [{ name: "A", value: "1" }] },
        { type: "http", name: "web", url: "http://127.0.0.1:9/mcp", headers: [{ name: "Authorization", value: "x" }] },
      ],
      additionalDirectories: ["/work/lib"],
      futureField: { nested: [1, "two", null, true, 1.5] },
      ...M,
    },
    expect: (_w, answer) => expect(answer.result.sessionId).toBe("sess-2"),
  },
  {
    name: "session/load (replays the history before answering)",
    method: "session/load",
    params: { sessionId: "sess-1", cwd, mcpServers: [], ...M },
    expect: (w, answer) => {
      expect(kinds(w.client.read)).toEqual(["session/update", "session/update", "result"]);
      expect(
        parsed(w.client.read)
          .slice(0, 2)
          .map((m) => m.params),
      ).toEqual([
        { sessionId: "sess-1", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hello" } } },
        { sessionId: "sess-1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "echo: hello\n" } } },
      ]);
      expect(answer.result.modes.currentModeId).toBe("ask");
    },
  },
  {
    name: "session/resume (no replay)",
    method: "session/resume",
    params: { sessionId: "sess-1", cwd, mcpServers: [] },
    expect: (w) => expect(kinds(w.client.read)).toEqual(["result"]),
  },
  {
    name: "session/fork",
    method: "session/fork",
    params: { sessionId: "sess-1", cwd, mcpServers: [], ...M },
    expect: (_w, answer) => expect(answer.result.sessionId).toBe("sess-3"),
  },
  {
    name: "session/list (first page)",
    method: "session/list",
    params: list(),
    expect: (_w, answer) => {
      expect(answer.result.sessions.map((s: Json) => s.sessionId)).toEqual(["sess-1", "sess-2"]);
      expect(answer.result.nextCursor).toBe(Buffer.from("2").toString("base64url"));
    },
  },
  {
    name: "session/list (with the cursor)",
    method: "session/list",
    params: list(Buffer.from("2").toString("base64url")),
    expect: (_w, answer) =>
      expect(answer.result).toEqual({ sessions: [{ sessionId: "sess-3", cwd, additionalDirectories: [], title: "Session sess-3" }] }),
  },
  {
    name: "session/set_mode (emits current_mode_update first)",
    method: "session/set_mode",
    params: { sessionId: "sess-1", modeId: "code", ...M },
    expect: (w) => expect(kinds(w.client.read)).toEqual(["session/update", "result"]),
  },
  {
    name: "session/set_mode with an unknown mode (error)",
    method: "session/set_mode",
    params: { sessionId: "sess-1", modeId: "yolo" },
    expect: (_w, answer) =>
      expect(answer.error).toEqual({ code: -32602, message: "Invalid params: unknown mode", data: { modeId: "yolo" } }),
  },
  {
    name: "session/set_config_option (select)",
    method: "session/set_config_option",
    params: { sessionId: "sess-1", configId: "verbosity", value: "high" },
    expect: (w, answer) => {
      expect(kinds(w.client.read)).toEqual(["session/update", "result"]);
      expect(answer.result.configOptions[0].currentValue).toBe("high");
    },
  },
  {
    name: "session/set_config_option (boolean)",
    method: "session/set_config_option",
    params: { sessionId: "sess-1", configId: "tools", type: "boolean", value: false, ...M },
    expect: (_w, answer) => expect(answer.result.configOptions[1].currentValue).toBe(false),
  },
  { name: "session/close", method: "session/close", params: { sessionId: "sess-3", ...M } },
  { name: "session/delete", method: "session/delete", params: { sessionId: "sess-2" } },
  {
    name: "session/load of an unknown session (error)",
    method: "session/load",
    params: { sessionId: "sess-404", cwd, mcpServers: [] },
    expect: (_w, answer) => expect(answer.error).toEqual({ code: -32002, message: "Resource not found", data: { sessionId: "sess-404" } }),
  },
  { name: "logout", method: "logout", params: {} },
  {
    name: "an extension request",
    method: "_vendor.example/client_asks",
    params: { deep: { list: [{ a: 1 }, "ü😀"] }, ...M },
    expect: (_w, answer) =>
      expect(answer.result.echo).toEqual({ method: "_vendor.example/client_asks", params: { deep: { list: [{ a: 1 }, "ü😀"] }, ...M } }),
  },
];

describe.each(Object.keys(TOPOLOGIES))("SDK client → cordon run (%s) → SDK agent", (topology) => {
  let client: TappedSdkClient;
  let initWindow: RawWindow;
  let initResult: acp.InitializeResponse;

  /** Runs one exchange in its own raw window and checks it was carried faithfully both ways. */
  async function exchange(run: () => Promise<unknown>): Promise<RawWindow> {
    await client.takeRaw();
    await run();
    const w = await client.takeRaw();
    expectFaithful(w);
    return w;
  }

  /** Sends a request; resolves with {result} or {error: {code, message, data}} as the SDK reported it. */
  async function call(method: string, params: unknown, options?: acp.SendRequestOptions): Promise<Json> {
    try {
      return { result: await client.agent.request<Json>(method, params, options) };
    } catch (error) {
      if (!(error instanceof acp.RequestError)) throw error;
      const { code, message, data } = error;
      return { error: data === undefined ? { code, message } : { code, message, data } };
    }
  }

  const updatesSince = (from: number) => client.calls.slice(from).filter((c) => c.method === "session/update");
  const textsSince = (from: number) => updatesSince(from).map((c) => c.params.update.content?.text);

  beforeAll(async () => {
    client = new TappedSdkClient(NODE, [CORDON, "run", ...TOPOLOGIES[topology], "--", ...SDK_AGENT]);
    client.answer = clientAnswer;
    initResult = await client.agent.request(acp.methods.agent.initialize, INITIALIZE as acp.InitializeRequest);
    initWindow = await client.takeRaw();
    const { sessionId } = await client.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    expect(sessionId).toBe("sess-1");
    await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
  });
  afterAll(async () => {
    const exit = await client?.close();
    expect(exit?.code, client?.stderr).toBe(0);
  });

  it("initialize reaches the agent as sent, and its answer reaches the client as the agent wrote it (plus the MCP bridge's acp)", () => {
    expect(comparable(initWindow.agent.read)).toEqual(comparable(initWindow.client.wrote));
    expect(withoutIds(initWindow.agent.read)).toEqual([{ jsonrpc: "2.0", method: "initialize", params: INITIALIZE }]);
    // The one change made on purpose: Cordon's MCP-over-ACP bridge (before the agent) advertises
    // `mcpCapabilities.acp` for an agent that does not (see the next describe for one that does).
    const answer = withoutIds(initWindow.agent.wrote);
    expect(answer[0].result.agentCapabilities.mcpCapabilities).toEqual({ http: true, sse: true });
    answer[0].result.agentCapabilities.mcpCapabilities.acp = true;
    expect(withoutIds(initWindow.client.read)).toEqual(answer);
    expect(initResult.agentInfo).toEqual({ name: "sdk-agent", title: "SDK test agent", version: "1.0.0" });
    expect(initResult.agentCapabilities?.sessionCapabilities).toEqual({
      list: {},
      delete: {},
      resume: {},
      close: {},
      fork: {},
      additionalDirectories: {},
    });
  });

  it.each(STEPS)("client → agent: $name", async ({ method, params, expect: check }) => {
    let answer: Json = {};
    const w = await exchange(async () => {
      answer = await call(method, params);
    });
    expect(parsed(w.client.wrote)).toEqual([{ jsonrpc: "2.0", id: expect.anything(), method, params }]);
    if (check) check(w, answer);
    else expect(answer.error).toBeUndefined();
  });

  it("client → agent notifications (extension, session/cancel with nothing running) arrive as sent", async () => {
    const w = await exchange(async () => {
      await client.agent.notify("_vendor.example/client_says", { k: [1, 2, 3], ...M });
      await client.agent.notify(acp.methods.agent.session.cancel, { sessionId: "sess-1", ...M });
      await call("_vendor.example/client_asks", {}); // a request behind them, so the agent wrote something
    });
    expect(kinds(w.agent.read)).toEqual(["_vendor.example/client_says", "session/cancel", "_vendor.example/client_asks"]);
  });

  it("a prompt with every content block, annotations and _meta arrives as sent", async () => {
    const prompt = [
      { type: "text", text: "blocks", annotations: { audience: ["user"], priority: 0.5, lastModified: "2026-11-30T00:00:00Z" } },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png", uri: "file:///work/a.png" },
      { type: "audio", data: "UklGRg==", mimeType: "audio/wav", ...M },
      {
        type: "resource_link",
        uri: "file:///work/a.ts",
        name: "a.ts",
        title: "A",
        description: "d",
        mimeType: "text/x-typescript",
        size: 12,
      },
      { type: "resource", resource: { uri: "file:///work/b.md", text: "# B", mimeType: "text/markdown" } },
      { type: "resource", resource: { uri: "file:///work/c.bin", blob: "AAEC", mimeType: "application/octet-stream" }, futureField: true },
    ];
    let answer: Json = {};
    const w = await exchange(async () => {
      answer = await call(acp.methods.agent.session.prompt, { sessionId: "sess-1", prompt, ...M });
    });
    expect(parsed(w.agent.read)[0].params).toEqual({ sessionId: "sess-1", prompt, ...M });
    expect(answer.result).toEqual({ stopReason: "end_turn", _meta: { traceparent: expect.any(String), "sdk-agent": { tag: "turn" } } });
  });

  it("every session/update variant reaches the client as written, in order, before the prompt's answer", async () => {
    const from = client.calls.length;
    const w = await exchange(() =>
      call(acp.methods.agent.session.prompt, { sessionId: "sess-1", prompt: [{ type: "text", text: "updates" }] }),
    );
    const variants = parsed(w.client.read).flatMap((m) => (m.method === "session/update" ? [m.params.update.sessionUpdate] : []));
    expect(variants).toEqual([
      "user_message_chunk",
      ...Array(6).fill("agent_message_chunk"),
      "agent_thought_chunk",
      "tool_call",
      "tool_call_update",
      "plan",
      "available_commands_update",
      "current_mode_update",
      "config_option_update",
      "session_info_update",
      "usage_update",
      "plan_update",
      "plan_removed",
      "notice",
      "compaction_update",
      "compaction_summary_chunk",
      "subagent_update",
      "session_message",
      "session_message_chunk",
      "future_variant_from_acp_v9",
    ]);
    expect(kinds(w.client.read).at(-1)).toBe("result");
    // The SDK client's typed handler got every variant its schema knows (all but the future one).
    expect(updatesSince(from).map((c) => c.params.update.sessionUpdate)).toEqual(variants.slice(0, -1));
  });

  it("every agent → client request and notification arrives as written, and every answer returns as written", async () => {
    const from = client.calls.length;
    const w = await exchange(() =>
      call(acp.methods.agent.session.prompt, {
        sessionId: "sess-1",
        prompt: [{ type: "text", text: "permission\nfs\nterminal\nelicit\next" }],
      }),
    );
    expect(kinds(w.client.read).filter((k) => k !== "session/update")).toEqual([
      "session/request_permission",
      "fs/read_text_file",
      "fs/write_text_file",
      "terminal/create",
      "terminal/output",
      "terminal/wait_for_exit",
      "terminal/kill",
      "terminal/release",
      "elicitation/create",
      "elicitation/create",
      "elicitation/complete",
      "_vendor/agent_asks",
      "_vendor/agent_says",
      "result",
    ]);
    expect(kinds(w.client.wrote).filter((k) => k !== "session/prompt")).toEqual(Array(11).fill("result"));
    // What the agent's SDK made of the answers it got back.
    const texts = textsSince(from);
    expect(texts).toContain(
      `session/request_permission: ${JSON.stringify({ outcome: { outcome: "selected", optionId: "allow-always" }, ...M })}\n`,
    );
    expect(texts).toContain("terminal/create: term-7\n");
    expect(texts).toContain(`elicitation/create: ${JSON.stringify({ action: "accept", content: { name: "Ada", admin: true }, ...M })}\n`);
    expect(texts).toContain('elicitation/create: {"action":"decline"}\n');
  });

  it("errors from the agent pass through unchanged (code, message, data)", async () => {
    const error = {
      code: -32042,
      message: "Quota exceeded",
      data: { retryAfter: 30, nested: { list: [1, "x", null, { deep: true }] }, text: "ü😀" },
    };
    let answer: Json = {};
    const w = await exchange(async () => {
      answer = await call(acp.methods.agent.session.prompt, {
        sessionId: "sess-1",
        prompt: [{ type: "text", text: `before\nfail ${JSON.stringify(error)}\nafter` }],
      });
    });
    expect(answer.error).toEqual(error);
    expect(parsed(w.client.read).at(-1)!.error).toEqual(error);
    expect(kinds(w.client.read)).toEqual(["session/update", "error"]);
  });

  it("errors from the client pass through unchanged (code, message, data)", async () => {
    const from = client.calls.length;
    const w = await exchange(() =>
      call(acp.methods.agent.session.prompt, { sessionId: "sess-1", prompt: [{ type: "text", text: "fs-missing" }] }),
    );
    const error = {
      code: -32002,
      message: "Resource not found",
      data: { path: "/work/missing.ts", why: { code: "ENOENT", list: [1, null] } },
    };
    expect(parsed(w.agent.read).find((m) => "error" in m)!.error).toEqual(error);
    expect(textsSince(from)).toEqual([`fs/read_text_file error: ${JSON.stringify(error)}\n`]);
  });

  it("session/cancel during a prompt ends it with stopReason cancelled", async () => {
    const from = client.calls.length;
    const w = await exchange(async () => {
      const turn = call(acp.methods.agent.session.prompt, { sessionId: "sess-1", prompt: [{ type: "text", text: "wait\nnever reached" }] });
      await expect.poll(() => textsSince(from)).toEqual(["waiting\n"]);
      await client.agent.notify(acp.methods.agent.session.cancel, { sessionId: "sess-1", ...M });
      expect((await turn).result).toEqual({ stopReason: "cancelled" });
    });
    expect(kinds(w.agent.read)).toEqual(["session/prompt", "session/cancel"]);
  });

  it("$/cancel_request for a pending prompt reaches the agent as a cancel of its own id; the prompt still gets its answer", async () => {
    const from = client.calls.length;
    const abort = new AbortController();
    const w = await exchange(async () => {
      const turn = call(
        acp.methods.agent.session.prompt,
        { sessionId: "sess-1", prompt: [{ type: "text", text: "wait" }] },
        { cancellationSignal: abort.signal },
      );
      await expect.poll(() => textsSince(from)).toEqual(["waiting\n"]);
      abort.abort(); // the SDK sends $/cancel_request with the client's id for the prompt
      expect((await turn).result).toEqual({ stopReason: "cancelled" });
    });
    const [clientPrompt, clientCancel] = parsed(w.client.wrote);
    const [agentPrompt, agentCancel] = parsed(w.agent.read);
    expect(clientCancel).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: clientPrompt.id } });
    expect(agentCancel).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: agentPrompt.id } });
    expect(agentPrompt.method).toBe("session/prompt");
  });

  it("session/cancel while the client holds a permission request: the agent gets cancelled, the client a $/cancel_request", async () => {
    const from = client.calls.length;
    client.answer = (method, params, signal) =>
      method === "session/request_permission"
        ? new Promise((resolve) => {
            // The user never decides; the SDK aborts `signal` when `$/cancel_request` arrives.
            if (signal.aborted) resolve({ outcome: { outcome: "cancelled" }, _meta: { late: true } });
            else
              signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" }, _meta: { late: true } }), { once: true });
          })
        : clientAnswer(method, params, signal);
    await client.takeRaw();
    try {
      const turn = call(acp.methods.agent.session.prompt, { sessionId: "sess-1", prompt: [{ type: "text", text: "permission" }] });
      await expect.poll(() => client.calls.slice(from).some((c) => c.method === "session/request_permission")).toBe(true);
      await client.agent.notify(acp.methods.agent.session.cancel, { sessionId: "sess-1" });
      expect((await turn).result).toEqual({ stopReason: "cancelled" });
      await expect.poll(() => kinds(client.raw.wrote)).toEqual(["session/prompt", "session/cancel", "result"]); // the client's late answer
    } finally {
      client.answer = clientAnswer;
    }
    const w = await client.takeRaw();
    const ask = parsed(w.client.read).find((m) => m.method === "session/request_permission")!;
    expect(parsed(w.client.read).find((m) => m.method === "$/cancel_request")).toEqual({
      jsonrpc: "2.0",
      method: "$/cancel_request",
      params: { requestId: ask.id },
    });
    // The agent got exactly one answer — the chain's `cancelled` — and never the client's late one.
    expect(parsed(w.agent.read).filter((m) => !("method" in m))).toEqual([
      { jsonrpc: "2.0", id: expect.anything(), result: { outcome: { outcome: "cancelled" } } },
    ]);
    expect(kinds(w.agent.read)).toEqual(["session/prompt", "result", "session/cancel"]);
    expect(textsSince(from)).toEqual(['session/request_permission: {"outcome":{"outcome":"cancelled"}}\n']);
  });

  it("$/cancel_request for an id the chain never saw is ignored", async () => {
    const w = await (async () => {
      await client.takeRaw();
      await client.agent.notify("$/cancel_request", { requestId: 987654 });
      await call("_vendor.example/client_asks", {});
      return client.takeRaw();
    })();
    expect(kinds(w.client.wrote)).toEqual(["$/cancel_request", "_vendor.example/client_asks"]);
    expect(kinds(w.agent.read)).toEqual(["_vendor.example/client_asks"]);
  });

  it("$/cancel_request from the agent for its pending request reaches the client as a cancel of the client's id", async () => {
    const from = client.calls.length;
    const w = await exchange(() =>
      call(acp.methods.agent.session.prompt, { sessionId: "sess-1", prompt: [{ type: "text", text: "elicit-cancel" }] }),
    );
    const [ask, cancel] = parsed(w.client.read);
    expect(ask.method).toBe("elicitation/create");
    expect(cancel).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: ask.id } });
    expect(textsSince(from)).toEqual(['elicitation/create: {"action":"cancel"}\n']);
  });
});

describe("an agent that speaks MCP-over-ACP itself (1 pass-through proxy)", () => {
  it("gets initialize as sent and its answer reaches the client unchanged (the MCP bridge stays out of the way)", async () => {
    const client = new TappedSdkClient(NODE, [CORDON, "run", ...pass, "--", ...SDK_AGENT], { SDK_AGENT_MCP_ACP: "1" });
    try {
      const init = await client.agent.request(acp.methods.agent.initialize, INITIALIZE as acp.InitializeRequest);
      expect(init.agentCapabilities?.mcpCapabilities).toEqual({ http: true, sse: true, acp: true });
      const w = await client.takeRaw();
      expectFaithful(w);
      const session = { cwd, mcpServers: [{ type: "acp", name: "tools", serverId: "srv-1", ...M }], ...M };
      const setup = await (async () => {
        await client.agent.request(acp.methods.agent.session.new, session as acp.NewSessionRequest);
        return client.takeRaw();
      })();
      expectFaithful(setup);
      expect(parsed(setup.agent.read)[0].params).toEqual(session);
    } finally {
      await client.close();
    }
  });
});

describe.each([
  ["0 proxies", [] as string[]],
  ["1 pass-through proxy", pass],
])("request-scoped elicitation through Cordon (%s)", (_name, proxies) => {
  // An `elicitation/create` scoped to a request names it by `requestId` — here the id of the pending
  // `authenticate`. Ids are re-issued on every hop, so each hop must see *its own* id for that
  // request: the conductor, the MCP bridge and the proxies' SDK each translate it at their hops
  // (the SDK's own mapping is checked where the two ids differ, in sdk-as/test/sdk.test.ts).
  let ids: { clientAuthenticate: unknown; agentAuthenticate: unknown; clientSaw: unknown; agentSent: unknown };

  it("the elicitation reaches the client during authenticate, and its answer reaches the agent", async () => {
    const client = new TappedSdkClient(NODE, [CORDON, "run", ...proxies, "--", ...SDK_AGENT]);
    try {
      client.answer = (method, params, signal) =>
        method === "elicitation/create" ? { action: "accept", content: { key: "k-1" } } : clientAnswer(method, params, signal);
      await client.agent.request(acp.methods.agent.initialize, INITIALIZE as acp.InitializeRequest);
      await client.takeRaw();
      const result = await client.agent.request(acp.methods.agent.authenticate, { methodId: "interactive" });
      expect(result).toEqual({ _meta: { "sdk-agent": { elicited: { action: "accept", content: { key: "k-1" } } } } });
      const w = await client.takeRaw();
      const clientAuthenticate = parsed(w.client.wrote).find((m) => m.method === "authenticate")!;
      const agentAuthenticate = parsed(w.agent.read).find((m) => m.method === "authenticate")!;
      const clientSaw = parsed(w.client.read).find((m) => m.method === "elicitation/create")!;
      const agentSent = parsed(w.agent.wrote).find((m) => m.method === "elicitation/create")!;
      expect(agentSent.params.requestId).toBe(agentAuthenticate.id);
      expect(clientAuthenticate.id).not.toBe(agentAuthenticate.id); // so a missing translation shows
      const { requestId: _a, ...sentRest } = agentSent.params;
      const { requestId: _b, ...sawRest } = clientSaw.params;
      expect(sawRest).toEqual(sentRest); // everything but the hop-scoped id arrives unchanged
      ids = {
        clientAuthenticate: clientAuthenticate.id,
        agentAuthenticate: agentAuthenticate.id,
        clientSaw: clientSaw.params.requestId,
        agentSent: agentSent.params.requestId,
      };
    } finally {
      await client.close();
    }
  });

  it("names the client's own id of the pending authenticate request", () => {
    expect(ids).toBeDefined();
    expect(ids.clientSaw).toBe(ids.clientAuthenticate);
  });
});
