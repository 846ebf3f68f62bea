/**
 * End-to-end tests of `cordon reference-agent`: the real process (`node bin/cordon.js reference-agent`,
 * compiled into dist/ by `npx tsc -p tsconfig.build.json` — `make test` does it first), driven over its
 * stdio by the official ACP SDK client.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const cordonBin = join(repoRoot, "bin", "cordon.js");
const CWD = repoRoot.replace(/[\\/]$/, "");

type PermissionResponder = (
  request: acp.RequestPermissionRequest,
  agent: acp.ClientContext,
) => Promise<acp.RequestPermissionResponse> | acp.RequestPermissionResponse;

/** A running agent process with an SDK client connected to its stdio. */
interface Harness {
  child: ChildProcessWithoutNullStreams;
  agent: acp.ClientContext;
  connection: acp.ClientConnection;
  /** Every line the agent wrote to stdout, raw. */
  stdoutLines: string[];
  stderr: () => string;
  /** `session/request_permission` requests received, in order. */
  permissionRequests: acp.RequestPermissionRequest[];
  setPermissionResponder: (policy: PermissionResponder) => void;
  exited: Promise<number | null>;
}

/** Every agent of this file stores its sessions in one temporary store (removed at the end). */
let storeDir: string;

function startAgent(args: string[] = []): Harness {
  const child = spawn(process.execPath, [cordonBin, "reference-agent", "--store", storeDir, ...args], {
    cwd: repoRoot,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const stdoutLines: string[] = [];
  let partial = "";
  // No setEncoding on stdout: the SDK's stream must keep receiving bytes.
  const decoder = new StringDecoder("utf8");
  child.stdout.on("data", (chunk: Buffer) => {
    const parts = (partial + decoder.write(chunk)).split("\n");
    partial = parts.pop() ?? "";
    stdoutLines.push(...parts);
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

  const permissionRequests: acp.RequestPermissionRequest[] = [];
  let policy: PermissionResponder = () => {
    throw new Error("no permission policy set for this test");
  };
  const app = acp.client({ name: "reference-agent-test" }).onRequest(acp.methods.client.session.requestPermission, ({ params, agent }) => {
    permissionRequests.push(params);
    return policy(params, agent);
  });
  const connection = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      // The SDK gets its own view of stdout; the raw 'data' listener above sees the same bytes.
      Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
    ),
  );
  return {
    child,
    agent: connection.agent,
    connection,
    stdoutLines,
    stderr: () => stderr,
    permissionRequests,
    setPermissionResponder: (p) => (policy = p),
    exited,
  };
}

/**
 * Starts a session and takes the `available_commands_update` the agent sends right after answering
 * `session/new` (the SDK helper is attached by then, so it is always its first update).
 */
async function startSession(builder: acp.SessionBuilder): Promise<acp.ActiveSession> {
  const session = await builder.start();
  const first = await withTimeout(session.nextUpdate(), 5000, "available_commands_update");
  expect(first).toMatchObject({ kind: "session_update", update: { sessionUpdate: "available_commands_update" } });
  return session;
}

async function initialize(h: Harness): Promise<acp.InitializeResponse> {
  return h.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "reference-agent-test", version: "1.0.0" },
  });
}

interface TurnResult {
  updates: acp.SessionUpdate[];
  stopReason: acp.StopReason;
}

/** Collects the updates of the running turn until its `stop`. */
async function collect(session: acp.ActiveSession, into: acp.SessionUpdate[] = []): Promise<TurnResult> {
  for (;;) {
    const message = await session.nextUpdate();
    if (message.kind === "stop") return { updates: into, stopReason: message.stopReason };
    into.push(message.update);
  }
}

async function turn(session: acp.ActiveSession, prompt: string | acp.ContentBlock[]): Promise<TurnResult> {
  void session.prompt(prompt);
  return collect(session);
}

const msg = (text: string): acp.SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  content: { type: "text", text: `${text}\n` },
});
const thought = (text: string): acp.SessionUpdate => ({
  sessionUpdate: "agent_thought_chunk",
  content: { type: "text", text: `${text}\n` },
});
const toolCall = (toolCallId: string, title: string): acp.SessionUpdate => ({
  sessionUpdate: "tool_call",
  toolCallId,
  title,
  kind: "execute",
  status: "pending",
  rawInput: { command: title },
});
const inProgress = (toolCallId: string): acp.SessionUpdate => ({
  sessionUpdate: "tool_call_update",
  toolCallId,
  status: "in_progress",
});
const completed = (toolCallId: string, title: string): acp.SessionUpdate => ({
  sessionUpdate: "tool_call_update",
  toolCallId,
  status: "completed",
  content: [{ type: "content", content: { type: "text", text: `ran ${title}` } }],
  rawOutput: { output: `ran ${title}` },
});
const failed = (toolCallId: string, text: string): acp.SessionUpdate => ({
  sessionUpdate: "tool_call_update",
  toolCallId,
  status: "failed",
  content: [{ type: "content", content: { type: "text", text } }],
});

/** Asserts `promise` rejects with a JSON-RPC error of this code; returns the error. */
async function rejectsWithCode(promise: Promise<unknown>, code: number): Promise<acp.RequestError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected a JSON-RPC error ${code}, got a result`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(acp.RequestError);
  expect((error as acp.RequestError).code).toBe(code);
  return error as acp.RequestError;
}

const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))]);

afterAll(() => rmSync(storeDir, { recursive: true, force: true }));

beforeAll(() => {
  storeDir = mkdtempSync(join(tmpdir(), "cordon-agent-test-"));
  // The tests run the compiled agent: make sure dist/ exists and is not older than the sources.
  const distDir = join(repoRoot, "dist", "runtime", "agent");
  const srcDir = join(repoRoot, "runtime", "agent");
  if (!existsSync(join(repoRoot, "dist", "runtime", "cli", "main.js"))) {
    throw new Error("dist/ is missing: run `npx tsc -p tsconfig.build.json` (or `make build`) first");
  }
  for (const file of readdirSync(srcDir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))) {
    const compiled = join(distDir, file.replace(/\.ts$/, ".js"));
    if (!existsSync(compiled) || statSync(compiled).mtimeMs < statSync(join(srcDir, file)).mtimeMs) {
      throw new Error(`dist/ is stale (${file}): run \`npx tsc -p tsconfig.build.json\` (or \`make build\`) first`);
    }
  }
});

describe("cordon reference-agent", () => {
  let h: Harness;

  beforeAll(async () => {
    h = startAgent();
    await initialize(h);
  });

  afterAll(async () => {
    h.child.stdin.end();
    await withTimeout(h.exited, 5000, "agent exit");
  });

  const sessions: acp.ActiveSession[] = [];
  const newSession = async () => {
    const session = await startSession(h.agent.buildSession(CWD));
    sessions.push(session);
    return session;
  };
  afterEach(() => {
    for (const session of sessions.splice(0)) session.dispose();
  });

  it("answers initialize with exactly what it implements", async () => {
    const response = await initialize(h);
    expect(response).toStrictEqual({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: true, embeddedContext: true },
        mcpCapabilities: { http: false, sse: false },
        sessionCapabilities: { list: {}, delete: {}, additionalDirectories: {}, resume: {}, close: {}, fork: {} },
      },
      authMethods: [],
      agentInfo: { name: "cordon-reference-agent", title: "Cordon reference agent", version: "0.1.0" },
    });
  });

  it("creates sessions with distinct ids and validates session/new", async () => {
    const a = await h.agent.request(acp.methods.agent.session.new, { cwd: CWD, mcpServers: [] });
    const b = await h.agent.request(acp.methods.agent.session.new, { cwd: CWD, mcpServers: [] });
    expect(a).toStrictEqual({
      sessionId: expect.stringMatching(/^sess-[0-9a-f-]{36}$/),
      modes: {
        currentModeId: "ask",
        availableModes: [
          { id: "ask", name: "Ask", description: expect.any(String) },
          { id: "code", name: "Code", description: expect.any(String) },
        ],
      },
      // This client did not advertise boolean config options: only the select is offered.
      configOptions: [
        {
          id: "verbosity",
          name: "Verbosity",
          description: expect.any(String),
          type: "select",
          currentValue: "normal",
          options: [
            { value: "low", name: "Low" },
            { value: "normal", name: "Normal" },
            { value: "high", name: "High" },
          ],
        },
      ],
    });
    expect(b.sessionId).not.toBe(a.sessionId);
    await rejectsWithCode(h.agent.request(acp.methods.agent.session.new, { cwd: "relative/dir", mcpServers: [] }), -32602);
    await rejectsWithCode(
      h.agent.request(acp.methods.agent.session.new, {
        cwd: CWD,
        mcpServers: [{ type: "http", name: "web", url: "http://127.0.0.1:1/mcp", headers: [] }],
      }),
      -32602,
    );
  });

  it("echoes a plain prompt as agent_message_chunks, one per line", async () => {
    const session = await newSession();
    expect(await turn(session, "hello world")).toStrictEqual({ updates: [msg("echo: hello world")], stopReason: "end_turn" });
    expect(await turn(session, "first line\n\n   second line  \r\nthird")).toStrictEqual({
      updates: [msg("echo: first line"), msg("echo: second line"), msg("echo: third")],
      stopReason: "end_turn",
    });
    // `echo` echoes text that starts with a command word; an empty prompt sends nothing.
    expect(await turn(session, "echo think twice")).toStrictEqual({ updates: [msg("echo: think twice")], stopReason: "end_turn" });
    expect(await turn(session, [])).toStrictEqual({ updates: [], stopReason: "end_turn" });
  });

  it("describes non-text blocks in prompt order (so a prepended block is visible)", async () => {
    const session = await newSession();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]).toString("base64");
    const result = await turn(session, [
      { type: "text", text: "Project context: be brief." },
      { type: "resource_link", name: "README.md", uri: "file:///project/README.md" },
      { type: "resource", resource: { uri: "file:///project/notes.txt", mimeType: "text/plain", text: "line one\nline two" } },
      { type: "resource", resource: { uri: "file:///project/data.bin", blob: Buffer.from("abc").toString("base64") } },
      { type: "image", mimeType: "image/png", data: png },
      { type: "audio", mimeType: "audio/wav", data: Buffer.from("RIFF").toString("base64") },
      { type: "text", text: "what now?" },
    ]);
    expect(result).toStrictEqual({
      updates: [
        msg("echo: Project context: be brief."),
        msg("echo: [resource_link name=README.md uri=file:///project/README.md]"),
        msg('echo: [resource uri=file:///project/notes.txt mimeType=text/plain text="line one\\nline two"]'),
        msg("echo: [resource uri=file:///project/data.bin blob=3 bytes]"),
        msg("echo: [image mimeType=image/png 8 bytes]"),
        msg("echo: [audio mimeType=audio/wav 4 bytes]"),
        msg("echo: what now?"),
      ],
      stopReason: "end_turn",
    });
  });

  it("think emits agent_thought_chunks", async () => {
    const session = await newSession();
    expect(await turn(session, "think let me consider\n/THINK slash and case work\nok")).toStrictEqual({
      updates: [thought("let me consider"), thought("slash and case work"), msg("echo: ok")],
      stopReason: "end_turn",
    });
  });

  it("tool emits tool_call, then in_progress and completed updates; ids count per session", async () => {
    const session = await newSession();
    expect(await turn(session, "tool list files")).toStrictEqual({
      updates: [toolCall("tool-1", "list files"), inProgress("tool-1"), completed("tool-1", "list files")],
      stopReason: "end_turn",
    });
    expect(await turn(session, "tool again\ndone")).toStrictEqual({
      updates: [toolCall("tool-2", "again"), inProgress("tool-2"), completed("tool-2", "again"), msg("echo: done")],
      stopReason: "end_turn",
    });
    // Another session counts on its own.
    const other = await newSession();
    expect((await turn(other, "tool x")).updates[0]).toStrictEqual(toolCall("tool-1", "x"));
  });

  it("permission: allowed runs the tool", async () => {
    const session = await newSession();
    h.permissionRequests.length = 0;
    h.setPermissionResponder(() => ({ outcome: { outcome: "selected", optionId: "allow" } }));
    expect(await turn(session, "permission delete the build dir\nafter")).toStrictEqual({
      updates: [
        toolCall("tool-1", "delete the build dir"),
        msg("permission allowed: delete the build dir (option allow)"),
        inProgress("tool-1"),
        completed("tool-1", "delete the build dir"),
        msg("echo: after"),
      ],
      stopReason: "end_turn",
    });
    expect(h.permissionRequests).toStrictEqual([
      {
        sessionId: session.sessionId,
        toolCall: {
          toolCallId: "tool-1",
          title: "delete the build dir",
          kind: "execute",
          status: "pending",
          rawInput: { command: "delete the build dir" },
        },
        options: [
          { optionId: "allow", name: "Allow once", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      },
    ]);
  });

  it("permission: rejected does not run the tool and the turn goes on", async () => {
    const session = await newSession();
    h.setPermissionResponder(() => ({ outcome: { outcome: "selected", optionId: "reject" } }));
    expect(await turn(session, "permission rm -rf /\nafter")).toStrictEqual({
      updates: [
        toolCall("tool-1", "rm -rf /"),
        msg("permission rejected: rm -rf / (option reject)"),
        failed("tool-1", "not run: permission rejected"),
        msg("echo: after"),
      ],
      stopReason: "end_turn",
    });
    h.setPermissionResponder(() => ({ outcome: { outcome: "selected", optionId: "bogus" } }));
    expect(await turn(session, "permission x")).toStrictEqual({
      updates: [
        toolCall("tool-2", "x"),
        msg('permission rejected: x (unknown option "bogus")'),
        failed("tool-2", "not run: permission rejected"),
      ],
      stopReason: "end_turn",
    });
    h.setPermissionResponder(() => {
      throw acp.RequestError.internalError(undefined, "client cannot ask");
    });
    const result = await turn(session, "permission y\nafter");
    expect(result.updates[1]).toStrictEqual(msg("permission rejected: y (request failed: Internal error: client cannot ask)"));
    expect(result.updates.slice(2)).toStrictEqual([failed("tool-3", "not run: permission rejected"), msg("echo: after")]);
    expect(result.stopReason).toBe("end_turn");
  });

  it("permission: session/cancel while asking cancels the turn and the tool does not run", async () => {
    const session = await newSession();
    // What the spec asks of a client: send session/cancel, then answer the pending request `cancelled`.
    h.setPermissionResponder(async (request, agent) => {
      await agent.notify(acp.methods.agent.session.cancel, { sessionId: request.sessionId });
      return { outcome: { outcome: "cancelled" } };
    });
    expect(await turn(session, "permission deploy\nafter")).toStrictEqual({
      updates: [toolCall("tool-1", "deploy"), msg("permission cancelled: deploy"), failed("tool-1", "not run: turn cancelled")],
      stopReason: "cancelled",
    });
    // An answer `cancelled` alone (no session/cancel) ends the turn the same way.
    h.setPermissionResponder(() => ({ outcome: { outcome: "cancelled" } }));
    expect(await turn(session, "permission deploy\nafter")).toStrictEqual({
      updates: [toolCall("tool-2", "deploy"), msg("permission cancelled: deploy"), failed("tool-2", "not run: turn cancelled")],
      stopReason: "cancelled",
    });
    // A client that never answers: session/cancel alone releases the turn.
    let release!: () => void;
    h.setPermissionResponder(
      (request, agent) =>
        new Promise((resolve) => {
          release = () => resolve({ outcome: { outcome: "cancelled" } });
          void agent.notify(acp.methods.agent.session.cancel, { sessionId: request.sessionId });
        }),
    );
    expect(await turn(session, "permission deploy")).toStrictEqual({
      updates: [toolCall("tool-3", "deploy"), msg("permission cancelled: deploy"), failed("tool-3", "not run: turn cancelled")],
      stopReason: "cancelled",
    });
    release();
    // The session is usable afterwards.
    expect(await turn(session, "still here")).toStrictEqual({ updates: [msg("echo: still here")], stopReason: "end_turn" });
  });

  it("secret emits a fake API key", async () => {
    const session = await newSession();
    const { updates, stopReason } = await turn(session, "secret\nsecret github\nsecret aws\nsecret anthropic");
    expect(stopReason).toBe("end_turn");
    expect(updates).toStrictEqual([
      msg("here is a fake openai API key: sk-FAKEcordon0123456789abcdefghijklmnopqrstuvwxyzAB"),
      msg("here is a fake github API key: ghp_FAKEcordon0123456789abcdefghijklmnop"),
      msg("here is a fake aws API key: AKIAIOSFODNN7EXAMPLE"),
      msg(
        "here is a fake anthropic API key: sk-ant-api03-FAKEcordon0123456789abcdefghijklmnopqrstuvwxyz-_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789AA",
      ),
    ]);
    const first = updates[0] as { content: { text: string } };
    expect(first.content.text).toMatch(/\bsk-[A-Za-z0-9]{40,}\b/);
  });

  it("wait holds the turn until session/cancel, then answers cancelled", async () => {
    const session = await newSession();
    void session.prompt("before\nwait\nafter");
    const updates: acp.SessionUpdate[] = [];
    for (;;) {
      const message = await session.nextUpdate();
      if (message.kind === "stop") throw new Error("turn ended before session/cancel");
      updates.push(message.update);
      if (updates.length === 2) break;
    }
    expect(updates).toStrictEqual([msg("echo: before"), msg("waiting for session/cancel")]);
    // Still waiting a while later.
    const next = session.nextUpdate();
    const early = await Promise.race([next, new Promise((r) => setTimeout(() => r("still waiting"), 200))]);
    expect(early).toBe("still waiting");
    await h.agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
    expect(await next).toMatchObject({ kind: "stop", stopReason: "cancelled" });
    // The cancel belonged to that turn only.
    expect(await turn(session, "again")).toStrictEqual({ updates: [msg("echo: again")], stopReason: "end_turn" });
  });

  it("a session/cancel with no prompt running is ignored; sleep is interrupted by session/cancel", async () => {
    const session = await newSession();
    await h.agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
    await h.agent.notify(acp.methods.agent.session.cancel, { sessionId: "sess-does-not-exist" });
    expect(await turn(session, "fine")).toStrictEqual({ updates: [msg("echo: fine")], stopReason: "end_turn" });

    const started = Date.now();
    void session.prompt("sleep 60000\nafter");
    setTimeout(() => void h.agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId }), 100);
    expect(await collect(session)).toStrictEqual({ updates: [], stopReason: "cancelled" });
    expect(Date.now() - started).toBeLessThan(10_000);

    expect(await turn(session, "sleep 10\nslept")).toStrictEqual({ updates: [msg("echo: slept")], stopReason: "end_turn" });
  });

  it("a session/cancel sent right behind its prompt still cancels it", async () => {
    const session = await newSession();
    const response = session.prompt("wait");
    void h.agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
    expect(await withTimeout(response, 5000, "cancelled prompt")).toStrictEqual({ stopReason: "cancelled" });
  });

  it("$/cancel_request for the prompt request also ends the turn with cancelled", async () => {
    const session = await newSession();
    const controller = new AbortController();
    const response = session.prompt("wait\nnever", { cancellationSignal: controller.signal });
    expect(await session.nextUpdate()).toMatchObject({ update: msg("waiting for session/cancel") });
    controller.abort();
    expect(await withTimeout(response, 5000, "cancelled prompt")).toStrictEqual({ stopReason: "cancelled" });
    expect(await collect(session)).toStrictEqual({ updates: [], stopReason: "cancelled" });
  });

  it("refuses a second concurrent prompt on the same session", async () => {
    const session = await newSession();
    void session.prompt("wait");
    expect((await session.nextUpdate()).kind).toBe("session_update");
    const error = await rejectsWithCode(
      h.agent.request(acp.methods.agent.session.prompt, { sessionId: session.sessionId, prompt: [{ type: "text", text: "hi" }] }),
      -32600,
    );
    expect(error.message).toContain("already has a prompt in progress");
    await h.agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
    expect(await collect(session)).toStrictEqual({ updates: [], stopReason: "cancelled" });
  });

  it("runs two sessions concurrently without mixing their updates", async () => {
    const a = await newSession();
    const b = await newSession();
    void a.prompt("a starts\nwait\na never");
    const aUpdates: acp.SessionUpdate[] = [];
    aUpdates.push(((await a.nextUpdate()) as { update: acp.SessionUpdate }).update);
    aUpdates.push(((await a.nextUpdate()) as { update: acp.SessionUpdate }).update);
    // B runs complete turns while A is held.
    expect(await turn(b, "b one\nthink b thinks\ntool b tool")).toStrictEqual({
      updates: [msg("echo: b one"), thought("b thinks"), toolCall("tool-1", "b tool"), inProgress("tool-1"), completed("tool-1", "b tool")],
      stopReason: "end_turn",
    });
    // A is still held; cancel it, then run two sleepy turns at once: each gets its own echo.
    await h.agent.notify(acp.methods.agent.session.cancel, { sessionId: a.sessionId });
    expect(await collect(a, aUpdates)).toStrictEqual({
      updates: [msg("echo: a starts"), msg("waiting for session/cancel")],
      stopReason: "cancelled",
    });
    const [ra, rb] = await Promise.all([turn(a, "sleep 150\nfrom a"), turn(b, "sleep 50\nfrom b")]);
    expect(ra).toStrictEqual({ updates: [msg("echo: from a")], stopReason: "end_turn" });
    expect(rb).toStrictEqual({ updates: [msg("echo: from b")], stopReason: "end_turn" });
  });

  it("stop and error end the turn as asked", async () => {
    const session = await newSession();
    expect(await turn(session, "one\nstop max_tokens\ntwo")).toStrictEqual({ updates: [msg("echo: one")], stopReason: "max_tokens" });
    expect(await turn(session, "stop refusal")).toStrictEqual({ updates: [], stopReason: "refusal" });
    const pending = h.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "partial\nerror the model fell over\nnever" }],
    });
    const error = await rejectsWithCode(pending, -32603);
    expect(error.message).toBe("the model fell over");
    expect(error.data).toStrictEqual({ command: "error" });
    // The update sent before the error was delivered; nothing after it (the next turn starts clean).
    expect(await session.nextUpdate()).toMatchObject({ kind: "session_update", update: msg("echo: partial") });
    expect(await turn(session, "ok")).toStrictEqual({ updates: [msg("echo: ok")], stopReason: "end_turn" });
  });

  it("reports bad command arguments as usage and lists commands on help", async () => {
    const session = await newSession();
    expect(await turn(session, "tool\nsleep soon\nstop cancelled\nsecret gitlab\nwait now")).toStrictEqual({
      updates: [
        msg("usage: tool <title>"),
        msg("usage: sleep <ms>"),
        msg("usage: stop <end_turn|max_tokens|max_turn_requests|refusal>"),
        msg("usage: secret [openai|anthropic|github|aws]"),
        msg("usage: wait"),
      ],
      stopReason: "end_turn",
    });
    const help = await turn(session, "help");
    expect(help.updates).toHaveLength(1);
    const text = (help.updates[0] as { content: { text: string } }).content.text;
    for (const word of [
      "echo",
      "think",
      "tool",
      "permission",
      "read",
      "edit",
      "run",
      "title",
      "mirror",
      "secret",
      "wait",
      "sleep",
      "stop",
      "error",
      "info",
      "help",
    ]) {
      expect(text).toMatch(new RegExp(`^  ${word}\\b`, "m"));
    }
  });

  it("info describes the session and the client", async () => {
    const session = await startSession(
      h.agent
        .buildSession(CWD)
        .withAdditionalDirectories([join(CWD, "docs")])
        .withMcpServer({ name: "files", command: "mcp-files", args: [], env: [] }),
    );
    sessions.push(session);
    const { updates } = await turn(session, "info");
    expect(updates).toStrictEqual([
      msg(
        [
          `session ${session.sessionId}`,
          `cwd ${CWD}`,
          `additionalDirectories ${join(CWD, "docs")}`,
          "mcpServers files (stdio)",
          "mode ask",
          "config verbosity=normal tool_calls_enabled=true",
          "title (none)",
          "client reference-agent-test 1.0.0",
          "protocolVersion 1",
          'clientCapabilities {"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}}',
        ].join("\n"),
      ),
    ]);
  });

  it("answers unknown methods with -32601 and unknown sessions with -32002", async () => {
    await rejectsWithCode(h.agent.request("foo/bar", {}), -32601);
    await rejectsWithCode(h.agent.request("_cordon/unknown", { x: 1 }), -32601);
    // Not advertised, not implemented.
    await rejectsWithCode(h.agent.request("session/archive", { sessionId: "x" }), -32601);
    await rejectsWithCode(h.agent.request("logout", {}), -32601);
    await rejectsWithCode(h.agent.request("authenticate", { methodId: "x" }), -32601);
    await h.agent.notify("_cordon/unknown_notification", {});
    const error = await rejectsWithCode(
      h.agent.request(acp.methods.agent.session.prompt, { sessionId: "sess-nope", prompt: [{ type: "text", text: "hi" }] }),
      -32002,
    );
    expect(error.data).toStrictEqual({ sessionId: "sess-nope" });
    // Still healthy.
    const session = await newSession();
    expect(await turn(session, "alive")).toStrictEqual({ updates: [msg("echo: alive")], stopReason: "end_turn" });
  });

  it("writes only JSON-RPC lines to stdout and nothing to stderr", () => {
    expect(h.stdoutLines.length).toBeGreaterThan(50);
    for (const line of h.stdoutLines) {
      const message = JSON.parse(line) as { jsonrpc?: string };
      expect(message.jsonrpc).toBe("2.0");
    }
    expect(h.stderr()).toBe("");
  });
});

describe("cordon reference-agent process", () => {
  it("exits 0 when stdin closes, even with a prompt waiting", async () => {
    const h = startAgent();
    await initialize(h);
    const session = await startSession(h.agent.buildSession(CWD));
    void session.prompt("wait").catch(() => {});
    expect((await session.nextUpdate()).kind).toBe("session_update");
    h.child.stdin.end();
    expect(await withTimeout(h.exited, 5000, "agent exit")).toBe(0);
  });

  it("rejects requests before initialize and logs to stderr only with --verbose", async () => {
    const h = startAgent(["--verbose"]);
    await rejectsWithCode(h.agent.request(acp.methods.agent.session.new, { cwd: CWD, mcpServers: [] }), -32600);
    await initialize(h);
    const session = await startSession(h.agent.buildSession(CWD));
    expect(await turn(session, "hi")).toStrictEqual({ updates: [msg("echo: hi")], stopReason: "end_turn" });
    h.child.stdin.end();
    expect(await withTimeout(h.exited, 5000, "agent exit")).toBe(0);
    expect(h.stderr()).toContain("[cordon-reference-agent] initialize protocolVersion=1 client=reference-agent-test");
    expect(h.stderr()).toContain(`session/prompt ${session.sessionId} → end_turn`);
    for (const line of h.stdoutLines) expect(JSON.parse(line)).toHaveProperty("jsonrpc", "2.0");
  });

  it("rejects unknown arguments with exit code 2", async () => {
    const h = startAgent(["--bogus"]);
    h.child.stdin.end();
    expect(await withTimeout(h.exited, 5000, "agent exit")).toBe(2);
    expect(h.stderr()).toContain("unknown argument --bogus");
    expect(h.stdoutLines).toStrictEqual([]);
  });
});
