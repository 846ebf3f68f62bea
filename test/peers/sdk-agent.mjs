#!/usr/bin/env node
// An ACP agent written with the official `@agentclientprotocol/sdk` (the `/unstable` entry, so
// `session/fork` can be handled), for tests that put Cordon between two SDK peers. It implements
// every v1 client→agent method with simple in-memory behaviour, and on a prompt it drives
// agent→client traffic through the SDK's client context, chosen by the prompt text.
//
// Raw tap: every line the agent reads on stdin and writes on stdout is recorded (the streams are
// wrapped before `ndJsonStream`, so this is the exact JSON on the wire). The extension request
// `_test/raw` answers {read: [lines], wrote: [lines]} recorded since the previous `_test/raw` and
// starts a new recording; `_test/raw` requests and their answers are never recorded themselves.
//
// Sessions are `sess-1`, `sess-2`, … Every session has modes `ask`/`code` and config options
// `verbosity` (select low|high) and `tools` (boolean). The history that `session/load` replays is
// each prompt's text blocks as `user_message_chunk`s and every `agent_message_chunk` it sent.
//
// With SDK_AGENT_MCP_ACP=1 it also advertises `mcpCapabilities.acp` (it records MCP server entries of
// every type and launches none).
//
// `authenticate` with methodId `interactive` sends a request-scoped `elicitation/create` whose
// `requestId` is the authenticate request's id as the agent received it, and waits for the answer.
//
// Prompt grammar: the text of every text block, line by line (blank lines skipped):
//   updates          every session/update variant (stable, unstable and one from the future)
//   permission       session/request_permission, then a chunk with the answer; an outcome
//                    `cancelled` ends the turn with stopReason `cancelled`
//   fs               fs/read_text_file of /work/a.ts, then fs/write_text_file of /work/b.ts
//   fs-missing       fs/read_text_file of /work/missing.ts (the tests' client answers an error)
//   terminal         terminal/create, output, wait_for_exit, kill, release (via a TerminalHandle)
//   elicit           elicitation/create (form), elicitation/create (url), elicitation/complete
//   elicit-cancel    elicitation/create, then at once `$/cancel_request` for it
//   ext              `_vendor/agent_asks` request and `_vendor/agent_says` notification
//   wait             chunk `waiting`, then holds until session/cancel or `$/cancel_request` for the
//                    prompt; answers stopReason `cancelled`
//   fail <json>      fails the prompt with the JSON-RPC error {code, message, data} given
//   anything else    agent_message_chunk `echo: <line>`
// After each agent→client request the agent sends a chunk `<method>: <answer JSON>` (or
// `<method> error: <error JSON>`), so an SDK client sees what the agent got back.
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";

// ---- raw tap ------------------------------------------------------------------------------

const raw = { read: [], wrote: [] };
const hiddenIds = new Set(); // ids of `_test/raw` requests, whose answers are not recorded either

function lines(onLine) {
  const decoder = new TextDecoder();
  let buffer = "";
  return (chunk) => {
    buffer += decoder.decode(chunk, { stream: true });
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim()) onLine(line);
    }
  };
}
const parse = (line) => {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
};
const tapRead = lines((line) => {
  const m = parse(line);
  if (m?.method === "_test/raw" && "id" in m) return void hiddenIds.add(JSON.stringify(m.id));
  raw.read.push(line);
});
const tapWrote = lines((line) => {
  const m = parse(line);
  if (m && !("method" in m) && hiddenIds.delete(JSON.stringify(m.id))) return;
  raw.wrote.push(line);
});

const input = Readable.toWeb(process.stdin).pipeThrough(
  new TransformStream({
    transform(chunk, controller) {
      tapRead(chunk);
      controller.enqueue(chunk);
    },
  }),
);
const stdout = Writable.toWeb(process.stdout).getWriter();
const output = new WritableStream({
  async write(chunk) {
    tapWrote(chunk);
    await stdout.write(chunk);
  },
});

// ---- fixtures -----------------------------------------------------------------------------

const meta = (tag) => ({ _meta: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "sdk-agent": { tag } } });
const MODES = [
  { id: "ask", name: "Ask", description: "Asks before acting" },
  { id: "code", name: "Code", description: "Edits files", ...meta("mode") },
];
const VERBOSITY = ["low", "high"];

/** Every update variant the agent can send for `updates`, in order. */
const UPDATES = [
  { sessionUpdate: "user_message_chunk", content: { type: "text", text: "from the user" }, messageId: "u1" },
  {
    sessionUpdate: "agent_message_chunk",
    content: { type: "text", text: "plain ü😀", annotations: { audience: ["user"], priority: 0.5 } },
    messageId: "m1",
    ...meta("chunk"),
  },
  {
    sessionUpdate: "agent_message_chunk",
    content: { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png", uri: "file:///work/a.png" },
  },
  { sessionUpdate: "agent_message_chunk", content: { type: "audio", data: "UklGRg==", mimeType: "audio/wav" } },
  {
    sessionUpdate: "agent_message_chunk",
    content: {
      type: "resource_link",
      uri: "file:///work/a.ts",
      name: "a.ts",
      title: "A",
      description: "d",
      mimeType: "text/x-typescript",
      size: 12,
    },
  },
  {
    sessionUpdate: "agent_message_chunk",
    content: { type: "resource", resource: { uri: "file:///work/b.md", text: "# B", mimeType: "text/markdown" } },
  },
  {
    sessionUpdate: "agent_message_chunk",
    content: { type: "resource", resource: { uri: "file:///work/c.bin", blob: "AAEC", mimeType: "application/octet-stream" } },
  },
  { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "thinking…" }, futureField: [1, "two"] },
  {
    sessionUpdate: "tool_call",
    toolCallId: "t1",
    title: "Edit a.ts",
    kind: "edit",
    status: "pending",
    content: [{ type: "diff", path: "/work/a.ts", oldText: "a", newText: "b" }],
    locations: [{ path: "/work/a.ts", line: 3 }],
    rawInput: { path: "/work/a.ts", nested: { deep: [null, true, 1.5] } },
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
    ...meta("tool"),
  },
  {
    sessionUpdate: "plan",
    entries: [
      { content: "step one", priority: "high", status: "in_progress" },
      { content: "step two", priority: "low", status: "pending" },
    ],
  },
  {
    sessionUpdate: "available_commands_update",
    availableCommands: [{ name: "review", description: "Review a file", input: { hint: "file" } }],
  },
  { sessionUpdate: "current_mode_update", currentModeId: "code" },
  {
    sessionUpdate: "config_option_update",
    configOptions: [
      {
        id: "verbosity",
        name: "Verbosity",
        type: "select",
        currentValue: "high",
        options: [
          { value: "low", name: "Low" },
          { value: "high", name: "High" },
        ],
      },
    ],
  },
  { sessionUpdate: "session_info_update", title: "Refactor a.ts", updatedAt: "2026-11-30T00:00:00Z" },
  { sessionUpdate: "usage_update", used: 1200, size: 200000, cost: { amount: 0.01, currency: "USD" } },
  { sessionUpdate: "plan_update", plan: { type: "markdown", planId: "p1", content: "# Plan" } },
  { sessionUpdate: "plan_removed", planId: "p1" },
  { sessionUpdate: "notice", severity: "warning", title: "Heads up", description: "unstable notice" },
  { sessionUpdate: "compaction_update", compactionId: "c1", status: "completed", summary: [{ type: "text", text: "summary" }] },
  { sessionUpdate: "compaction_summary_chunk", compactionId: "c1", content: { type: "text", text: "more" } },
  { sessionUpdate: "subagent_update", sessionId: "sub-1", title: "Helper", state: { state: "running" } },
  { sessionUpdate: "session_message", messageId: "sm1", senderSessionId: "sub-1", content: [{ type: "text", text: "hi" }] },
  { sessionUpdate: "session_message_chunk", messageId: "sm1", content: { type: "text", text: " there" } },
  { sessionUpdate: "future_variant_from_acp_v9", whatever: { nested: [null, true, 3.25] } },
];

// ---- sessions -----------------------------------------------------------------------------

const sessions = new Map();
let sessionCount = 0;

function newSession(cwd, additionalDirectories = [], history = []) {
  const session = {
    id: `sess-${++sessionCount}`,
    cwd,
    additionalDirectories,
    history,
    modeId: "ask",
    verbosity: "low",
    tools: true,
    turn: null,
  };
  sessions.set(session.id, session);
  return session;
}
function requireSession(sessionId) {
  const session = sessions.get(sessionId);
  if (!session) throw acp.RequestError.sessionNotFound(sessionId);
  return session;
}
const modesOf = (s) => ({ currentModeId: s.modeId, availableModes: MODES });
const configOf = (s) => [
  { id: "verbosity", name: "Verbosity", type: "select", currentValue: s.verbosity, options: VERBOSITY.map((v) => ({ value: v, name: v })) },
  { id: "tools", name: "Tools", type: "boolean", currentValue: s.tools },
];
const controlsOf = (s) => ({ modes: modesOf(s), configOptions: configOf(s) });

// ---- the agent ----------------------------------------------------------------------------

async function runPrompt(session, params, signal, client) {
  const send = (update) => client.notify(acp.methods.client.session.update, { sessionId: session.id, update });
  const say = async (text) => {
    const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${text}\n` } };
    session.history.push(update);
    await send(update);
  };
  const ask = async (method, request, options) => {
    try {
      const answer = await client.request(method, request, options);
      await say(`${method}: ${JSON.stringify(answer ?? null)}`);
      return answer;
    } catch (error) {
      await say(`${method} error: ${JSON.stringify({ code: error.code, message: error.message, data: error.data })}`);
    }
  };
  const sessionId = session.id;
  const texts = params.prompt.flatMap((block) => (block.type === "text" ? [block.text] : []));
  for (const text of texts) session.history.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text } });

  for (const line of texts
    .flatMap((t) => t.split("\n"))
    .map((l) => l.trim())
    .filter(Boolean)) {
    if (signal.aborted || session.turn?.cancelled) return { stopReason: "cancelled" };
    const [word, ...rest] = line.split(" ");
    const arg = rest.join(" ");
    switch (word) {
      case "updates":
        for (const update of UPDATES) await send(update);
        break;
      case "permission": {
        const answer = await ask(acp.methods.client.session.requestPermission, {
          sessionId,
          toolCall: {
            toolCallId: "t2",
            title: "Write b.ts",
            kind: "edit",
            status: "pending",
            rawInput: { path: "/work/b.ts" },
            ...meta("toolCall"),
          },
          options: [
            { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
            { optionId: "allow-always", name: "Always allow", kind: "allow_always", ...meta("option") },
            { optionId: "reject-once", name: "Reject", kind: "reject_once" },
            { optionId: "reject-always", name: "Never", kind: "reject_always" },
          ],
          ...meta("permission"),
        });
        // A cancelled permission request (session/cancel while the client decides) ends the turn.
        if (answer?.outcome?.outcome === "cancelled") return { stopReason: "cancelled" };
        break;
      }
      case "fs":
        await ask(acp.methods.client.fs.readTextFile, { sessionId, path: "/work/a.ts", line: 10, limit: 5, ...meta("read") });
        await ask(acp.methods.client.fs.writeTextFile, { sessionId, path: "/work/b.ts", content: "export const b = 1;\nü😀\n" });
        break;
      case "fs-missing":
        await ask(acp.methods.client.fs.readTextFile, { sessionId, path: "/work/missing.ts" });
        break;
      case "terminal": {
        const terminal = await client.createTerminal({
          sessionId,
          command: "npm",
          args: ["test", "--", "--grep", "a b"],
          env: [{ name: "CI", value: "1" }],
          cwd: session.cwd,
          outputByteLimit: 4096,
          ...meta("terminal"),
        });
        await say(`terminal/create: ${terminal.id}`);
        await say(`terminal/output: ${JSON.stringify(await terminal.currentOutput())}`);
        await say(`terminal/wait_for_exit: ${JSON.stringify(await terminal.waitForExit())}`);
        await say(`terminal/kill: ${JSON.stringify(await terminal.kill())}`);
        await say(`terminal/release: ${JSON.stringify(await terminal.release())}`);
        break;
      }
      case "elicit":
        await ask(acp.methods.client.elicitation.create, {
          sessionId,
          toolCallId: "t2",
          mode: "form",
          message: "Who are you?",
          requestedSchema: {
            type: "object",
            title: "Identity",
            properties: { name: { type: "string", title: "Name", minLength: 1 }, admin: { type: "boolean", default: false } },
            required: ["name"],
          },
          ...meta("form"),
        });
        await ask(acp.methods.client.elicitation.create, {
          sessionId,
          mode: "url",
          message: "Sign in",
          elicitationId: "e1",
          url: "https://example.test/login?x=1",
        });
        await client.notify(acp.methods.client.elicitation.complete, { elicitationId: "e1", ...meta("complete") });
        break;
      case "elicit-cancel": {
        const abort = new AbortController();
        const answer = ask(
          acp.methods.client.elicitation.create,
          { sessionId, mode: "form", message: "cancel me", requestedSchema: { type: "object", properties: {} } },
          { cancellationSignal: abort.signal },
        );
        abort.abort();
        await answer;
        break;
      }
      case "ext":
        await ask("_vendor/agent_asks", { anything: [1, { two: 2 }], ...meta("ext") });
        await client.notify("_vendor/agent_says", { k: "v", list: [true, null] });
        break;
      case "wait":
        await say("waiting");
        await new Promise((resolve) => {
          if (signal.aborted) return resolve();
          signal.addEventListener("abort", resolve, { once: true });
          session.turn.wake = resolve;
        });
        return { stopReason: "cancelled" };
      case "fail": {
        const error = JSON.parse(arg);
        throw new acp.RequestError(error.code, error.message, error.data);
      }
      default:
        await say(`echo: ${line}`);
    }
  }
  return { stopReason: session.turn?.cancelled ? "cancelled" : "end_turn", ...meta("turn") };
}

const app = acp
  .agent({ name: "sdk-agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: true, audio: true, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true, ...(process.env.SDK_AGENT_MCP_ACP === "1" ? { acp: true } : {}) },
      sessionCapabilities: { list: {}, delete: {}, resume: {}, close: {}, fork: {}, additionalDirectories: {} },
      auth: { logout: {} },
      ...meta("capabilities"),
    },
    authMethods: [
      { id: "api-key", name: "API key", description: "A key from the environment" },
      { id: "interactive", name: "Interactive", description: "Asks for the key with a request-scoped elicitation" },
    ],
    agentInfo: { name: "sdk-agent", title: "SDK test agent", version: "1.0.0" },
    _meta: { "sdk-agent": { client: params.clientInfo?.name ?? null } },
  }))
  .onRequest(acp.methods.agent.authenticate, async ({ params, requestId, client }) => {
    if (params.methodId === "interactive") {
      // A request-scoped elicitation: tied to this authenticate request by its id as the agent received it.
      const answer = await client.request(acp.methods.client.elicitation.create, {
        requestId,
        mode: "form",
        message: "API key?",
        requestedSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
      });
      return { _meta: { "sdk-agent": { elicited: answer } } };
    }
    if (params.methodId !== "api-key") throw acp.RequestError.invalidParams({ methodId: params.methodId }, "unknown auth method");
    return meta("authenticated");
  })
  .onRequest(acp.methods.agent.logout, () => ({}))
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const session = newSession(params.cwd, params.additionalDirectories ?? []);
    return { sessionId: session.id, ...controlsOf(session), ...meta("new") };
  })
  .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
    const session = requireSession(params.sessionId);
    if (params.cwd !== session.cwd)
      throw acp.RequestError.invalidParams({ cwd: params.cwd, expected: session.cwd }, "cwd differs from the session's");
    for (const update of session.history) await client.notify(acp.methods.client.session.update, { sessionId: session.id, update });
    return controlsOf(session);
  })
  .onRequest(acp.methods.agent.session.resume, ({ params }) => controlsOf(requireSession(params.sessionId)))
  .onRequest(acp.methods.agent.session.list, ({ params }) => {
    const all = [...sessions.values()].filter((s) => !params.cwd || s.cwd === params.cwd);
    const start = params.cursor ? Number(Buffer.from(params.cursor, "base64url").toString()) : 0;
    if (!Number.isInteger(start) || start < 0) throw acp.RequestError.invalidParams({ cursor: params.cursor }, "bad cursor");
    const page = all
      .slice(start, start + 2)
      .map((s) => ({ sessionId: s.id, cwd: s.cwd, additionalDirectories: s.additionalDirectories, title: `Session ${s.id}` }));
    const next = start + 2 < all.length ? Buffer.from(String(start + 2)).toString("base64url") : undefined;
    return next ? { sessions: page, nextCursor: next } : { sessions: page };
  })
  .onRequest(acp.methods.agent.session.delete, ({ params }) => {
    sessions.delete(params.sessionId);
    return {};
  })
  .onRequest(acp.methods.agent.session.close, ({ params }) => {
    const session = requireSession(params.sessionId);
    session.turn?.cancel();
    sessions.delete(session.id);
    return {};
  })
  .onRequest(acp.methods.agent.session.fork, ({ params }) => {
    const source = requireSession(params.sessionId);
    const fork = newSession(params.cwd, params.additionalDirectories ?? source.additionalDirectories, [...source.history]);
    Object.assign(fork, { modeId: source.modeId, verbosity: source.verbosity, tools: source.tools });
    return { sessionId: fork.id, ...controlsOf(fork) };
  })
  .onRequest(acp.methods.agent.session.setMode, async ({ params, client }) => {
    const session = requireSession(params.sessionId);
    if (!MODES.some((m) => m.id === params.modeId)) throw acp.RequestError.invalidParams({ modeId: params.modeId }, "unknown mode");
    session.modeId = params.modeId;
    await client.notify(acp.methods.client.session.update, {
      sessionId: session.id,
      update: { sessionUpdate: "current_mode_update", currentModeId: session.modeId },
    });
    return {};
  })
  .onRequest(acp.methods.agent.session.setConfigOption, async ({ params, client }) => {
    const session = requireSession(params.sessionId);
    if (params.configId === "verbosity" && params.type === undefined && VERBOSITY.includes(params.value)) session.verbosity = params.value;
    else if (params.configId === "tools" && params.type === "boolean") session.tools = params.value;
    else throw acp.RequestError.invalidParams({ configId: params.configId, value: params.value }, "invalid config option value");
    await client.notify(acp.methods.client.session.update, {
      sessionId: session.id,
      update: { sessionUpdate: "config_option_update", configOptions: configOf(session) },
    });
    return { configOptions: configOf(session) };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, signal, client }) => {
    const session = requireSession(params.sessionId);
    if (session.turn) throw acp.RequestError.invalidRequest({ sessionId: session.id }, "a prompt is already running");
    const turn = { cancelled: false, wake: null, cancel: () => ((turn.cancelled = true), turn.wake?.()) };
    session.turn = turn;
    try {
      return await runPrompt(session, params, signal, client);
    } finally {
      session.turn = null;
    }
  })
  // Registered after session/prompt so a cancel never overtakes the prompt it follows.
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    sessions.get(params.sessionId)?.turn?.cancel();
  })
  .onRequest(
    "_test/raw",
    (params) => params ?? {},
    () => ({ read: raw.read.splice(0), wrote: raw.wrote.splice(0) }),
  )
  .onRequest("*", ({ method, params }) => ({ echo: { method, params: params ?? null } }))
  .onNotification("*", () => {});

const connection = app.connect(acp.ndJsonStream(output, input));
await connection.closed;
process.exit(0);
