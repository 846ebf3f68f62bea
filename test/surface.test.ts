/**
 * The whole ACP v1 surface through the chain: every client→agent method, every agent→client
 * request, every `session/update` variant (and one from the future), extension methods both ways.
 * A raw client sends; the raw scripted agent reflects; what arrives must deep-equal what was sent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, SCRIPTED_AGENT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";

const pass = ["--proxy", proxyWasm("passthrough")];
const nested = (...inner: string[]) => ["--proxy-cmd", [NODE, CORDON, "proxy", ...inner].map((w) => JSON.stringify(w)).join(" ")];

const S = "sess-1";
const cwd = "/work/project";
const meta = { _meta: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", vendor: { x: [1, 2] } } };

/** Client → agent requests, with params as rich as the schema allows (plus an unknown field). */
const CLIENT_REQUESTS: [string, Json][] = [
  ["authenticate", { methodId: "api-key", ...meta }],
  ["logout", {}],
  [
    "session/load",
    {
      sessionId: S,
      cwd,
      mcpServers: [{ name: "fs", command: "/bin/mcp", args: ["--ro"], env: [{ name: "A", value: "1" }] }],
      additionalDirectories: ["/work/lib"],
    },
  ],
  [
    "session/resume",
    {
      sessionId: S,
      cwd,
      mcpServers: [{ type: "http", name: "web", url: "http://127.0.0.1:9/mcp", headers: [{ name: "Authorization", value: "x" }] }],
    },
  ],
  ["session/list", { cwd, cursor: "opaque==", futureFilter: { since: "2026-01-01" } }],
  ["session/delete", { sessionId: S }],
  ["session/close", { sessionId: S, ...meta }],
  ["session/fork", { sessionId: S, cwd, mcpServers: [] }],
  ["session/set_mode", { sessionId: S, modeId: "code" }],
  ["session/set_config_option", { sessionId: S, configId: "verbosity", value: "high" }],
  ["session/set_config_option", { sessionId: S, configId: "tools", type: "boolean", value: false }],
  ["_zed.dev/workspace/buffers", { open: [{ path: "/a.ts", dirty: true }] }],
];

const CONTENT: Json[] = [
  { type: "text", text: "plain ü😀", annotations: { audience: ["user"], priority: 0.5, lastModified: "2026-11-30T00:00:00Z" } },
  { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png", uri: "file:///a.png" },
  { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
  { type: "resource_link", uri: "file:///work/a.ts", name: "a.ts", title: "A", description: "d", mimeType: "text/x-typescript", size: 12 },
  { type: "resource", resource: { uri: "file:///work/b.md", text: "# B", mimeType: "text/markdown" } },
  { type: "resource", resource: { uri: "file:///work/c.bin", blob: "AAEC", mimeType: "application/octet-stream" } },
];

/** Every v1 update variant, plus unstable ones and one no schema knows yet. */
const UPDATES: Json[] = [
  { sessionUpdate: "user_message_chunk", content: CONTENT[0], messageId: "m1" },
  ...CONTENT.map((content) => ({ sessionUpdate: "agent_message_chunk", content, messageId: "m2" })),
  { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } },
  {
    sessionUpdate: "tool_call",
    toolCallId: "t1",
    title: "Edit a.ts",
    kind: "edit",
    status: "pending",
    content: [{ type: "diff", path: "/work/a.ts", oldText: "a", newText: "b" }],
    locations: [{ path: "/work/a.ts", line: 3 }],
    rawInput: { path: "/work/a.ts" },
  },
  {
    sessionUpdate: "tool_call_update",
    toolCallId: "t1",
    status: "completed",
    content: [
      { type: "content", content: { type: "text", text: "done" } },
      { type: "terminal", terminalId: "term-1" },
    ],
    rawOutput: { ok: true },
  },
  { sessionUpdate: "plan", entries: [{ content: "step", priority: "high", status: "in_progress" }] },
  { sessionUpdate: "available_commands_update", availableCommands: [{ name: "review", description: "Review", input: { hint: "file" } }] },
  { sessionUpdate: "current_mode_update", currentModeId: "code" },
  {
    sessionUpdate: "config_option_update",
    configOptions: [
      { id: "verbosity", name: "Verbosity", type: "select", currentValue: "high", options: [{ value: "high", name: "High" }] },
    ],
  },
  { sessionUpdate: "session_info_update", title: "Refactor", updatedAt: "2026-11-30T00:00:00Z" },
  { sessionUpdate: "usage_update", used: 1200, size: 200000, cost: { amount: 0.01, currency: "USD" } },
  { sessionUpdate: "notice", severity: "warning", title: "Unstable notice" },
  { sessionUpdate: "plan_update", plan: { planId: "p1", items: [] } },
  { sessionUpdate: "future_variant_from_acp_v9", whatever: { nested: [null, true, 3.25] } },
];

/** Agent → client requests and notifications. */
const AGENT_REQUESTS: [string, Json][] = [
  [
    "session/request_permission",
    { sessionId: S, toolCall: { toolCallId: "t1", title: "Write" }, options: [{ optionId: "a", name: "Allow", kind: "allow_always" }] },
  ],
  ["fs/read_text_file", { sessionId: S, path: "/work/a.ts", line: 10, limit: 5 }],
  ["fs/write_text_file", { sessionId: S, path: "/work/a.ts", content: "x\ny\n", ...meta }],
  ["terminal/create", { sessionId: S, command: "npm", args: ["test"], env: [{ name: "CI", value: "1" }], cwd, outputByteLimit: 1024 }],
  ["terminal/output", { sessionId: S, terminalId: "term-1" }],
  ["terminal/wait_for_exit", { sessionId: S, terminalId: "term-1" }],
  ["terminal/kill", { sessionId: S, terminalId: "term-1" }],
  ["terminal/release", { sessionId: S, terminalId: "term-1" }],
  [
    "elicitation/create",
    { sessionId: S, message: "Name?", mode: "form", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
  ],
  ["_vendor/agent_asks", { anything: [1, { two: 2 }] }],
];
const AGENT_NOTIFICATIONS: [string, Json][] = [
  ["elicitation/complete", { elicitationId: "e1" }],
  ["_vendor/agent_says", { k: "v" }],
];

const TOPOLOGIES: Record<string, string[]> = {
  "0 proxies": [],
  "3 pass-through proxies": [...pass, ...pass, ...pass],
  "nested conductors": [...pass, ...nested(...pass), ...nested()],
};

describe.each(Object.keys(TOPOLOGIES))("the ACP v1 surface through %s", (topology) => {
  let client: RawClient;
  beforeAll(async () => {
    const caps = { loadSession: true, promptCapabilities: { image: true, audio: true, embeddedContext: true } };
    client = new RawClient(NODE, [CORDON, "run", ...TOPOLOGIES[topology], "--", ...SCRIPTED_AGENT], {
      SCRIPTED_CAPS: JSON.stringify(caps),
    });
    const init = await client.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: {
        fs: { readTextFile: true, writeTextFile: true },
        terminal: true,
        elicitation: { form: {} },
        _meta: { "zed.dev": {} },
      },
      clientInfo: { name: "surface-test", version: "1" },
    });
    // Cordon's MCP bridge advertises MCP-over-ACP (it bridges for an agent that lacks it); nothing else changes.
    expect(init.result.agentCapabilities).toEqual({ ...caps, mcpCapabilities: { acp: true } });
    await client.request("session/new", { cwd, mcpServers: [] });
  });
  afterAll(async () => {
    await client.close();
  });

  it.each(CLIENT_REQUESTS)("client → agent %s arrives exactly as sent", async (method, params) => {
    const res = await client.request(method, params);
    expect(res.result).toEqual({ echo: { jsonrpc: "2.0", method, params } });
  });

  it("session/cancel and extension notifications arrive exactly as sent", async () => {
    client.notify("_vendor/client_says", { a: 1 });
    const seen = await client.waitFor((m) => m.method === "_test/seen" && m.params.message.method === "_vendor/client_says");
    expect(seen.params.message).toEqual({ jsonrpc: "2.0", method: "_vendor/client_says", params: { a: 1 } });
  });

  it("every content block type reaches the agent verbatim in a prompt", async () => {
    const params = { sessionId: S, prompt: [{ type: "text", text: '[{"reflectPrompt":true}]' }, ...CONTENT], ...meta };
    const res = await client.request("session/prompt", params);
    expect(res.result).toEqual({ stopReason: "end_turn" });
    const reflected = await client.waitFor((m) => m.method === "_test/prompt");
    expect(reflected.params.received).toEqual(params);
  });

  it("every session/update variant reaches the client exactly, in order, before the prompt's response", async () => {
    const sent = UPDATES.map((update) => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId: S, update } }));
    const start = client.received.length;
    const res = await client.request(
      "session/prompt",
      { sessionId: S, prompt: [{ type: "text", text: JSON.stringify(sent.map((send) => ({ send }))) }] },
      "surface-updates",
    );
    const arrived = client.received.slice(start);
    expect(arrived.slice(0, -1)).toEqual(sent);
    expect(arrived.at(-1)).toEqual(res);
  });

  it("every agent → client request and notification arrives exactly, and every answer returns exactly", async () => {
    const answers: Json[] = AGENT_REQUESTS.map(([method], i) =>
      i % 3 === 2
        ? { error: { code: -32002, message: `no ${method}`, data: { i } } }
        : { result: { answered: method, i, _meta: { r: i } } },
    );
    client.onRequest = (m) => answers[AGENT_REQUESTS.findIndex(([method]) => method === m.method)];
    const steps = [
      ...AGENT_REQUESTS.map(([method, params]) => ({ ask: { method, params } })),
      ...AGENT_NOTIFICATIONS.map(([method, params]) => ({ send: { jsonrpc: "2.0", method, params } })),
      { report: true },
    ];
    const start = client.received.length;
    await client.request("session/prompt", { sessionId: S, prompt: [{ type: "text", text: JSON.stringify(steps) }] });
    const calls = client.received.slice(start).filter((m) => "method" in m && m.method !== "_test/answers");
    expect(calls.map(({ id: _id, ...rest }) => rest)).toEqual([
      ...AGENT_REQUESTS.map(([method, params]) => ({ jsonrpc: "2.0", method, params })),
      ...AGENT_NOTIFICATIONS.map(([method, params]) => ({ jsonrpc: "2.0", method, params })),
    ]);
    const report = client.received.find((m, i) => i >= start && m.method === "_test/answers")!;
    expect(report.params.answers.map(({ id: _id, ...rest }: Json) => rest)).toEqual(answers.map((a) => ({ jsonrpc: "2.0", ...a })));
  });
});
