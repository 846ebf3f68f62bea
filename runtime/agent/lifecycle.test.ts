/**
 * The seed-000 session lifecycle, end to end: the real agent process (`node bin/cordon.js
 * reference-agent`, compiled into dist/ by `npx tsc -p tsconfig.build.json`) over its stdio, driven by
 * the official ACP SDK client through `runLifecycle` (which observes and returns; this file asserts),
 * plus what the lifecycle run does not cover: a restart on the same store, paging, capability gating,
 * tools on disk, cancellation inside tools, close and delete with a running turn.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  contentPrompt,
  findStep,
  LifecycleObserver,
  type LifecycleStep,
  type LifecycleTranscript,
  runLifecycle,
} from "../../test/helpers/lifecycle.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const cordonBin = join(repoRoot, "bin", "cordon.js");

/** A temporary folder per test file: stores and working directories live under it. */
let scratch: string;
beforeAll(() => {
  if (!existsSync(join(repoRoot, "dist", "runtime", "agent", "reference-agent.js"))) {
    throw new Error("dist/ is missing: run `npx tsc -p tsconfig.build.json` (or `make build`) first");
  }
  // Every source file of the agent (and its CLI) must be older than its compiled form.
  const walk = (dir: string): string[] =>
    readdirSync(join(repoRoot, "runtime", dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [join(dir, e.name)] : [],
    );
  const sources = walk("agent");
  for (const file of [...sources, join("cli", "reference-agent.ts")]) {
    const source = join(repoRoot, "runtime", file);
    if (!existsSync(source)) continue;
    const compiled = join(repoRoot, "dist", "runtime", file.replace(/\.ts$/, ".js"));
    if (!existsSync(compiled) || statSync(compiled).mtimeMs < statSync(source).mtimeMs) {
      throw new Error(`dist/ is stale (${file}): run \`npx tsc -p tsconfig.build.json\` first`);
    }
  }
  scratch = mkdtempSync(join(tmpdir(), "cordon-lifecycle-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let folders = 0;
function folder(name: string): string {
  const dir = join(scratch, `${name}-${++folders}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A running agent with an SDK client built around a LifecycleObserver. */
interface Agent {
  child: ChildProcessWithoutNullStreams;
  agent: acp.ClientContext;
  observer: LifecycleObserver;
  stdoutLines: string[];
  stderr: () => string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

const running: Agent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((a) => a.stop()));
});

function startAgent(args: string[]): Agent {
  const child = spawn(process.execPath, [cordonBin, "reference-agent", ...args], { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
  const stdoutLines: string[] = [];
  let partial = "";
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
  const observer = new LifecycleObserver();
  const connection = observer
    .install(acp.client({ name: "lifecycle-test" }))
    .connect(
      observer.wrap(
        acp.ndJsonStream(
          Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
          Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
        ),
      ),
    );
  const agent: Agent = {
    child,
    agent: connection.agent,
    observer,
    stdoutLines,
    stderr: () => stderr,
    exited,
    stop: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  running.push(agent);
  return agent;
}

const ALL_CAPABILITIES: acp.ClientCapabilities = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
  session: { configOptions: { boolean: {} } },
};

async function initialize(a: Agent, clientCapabilities: acp.ClientCapabilities = ALL_CAPABILITIES): Promise<acp.InitializeResponse> {
  return a.agent.request(acp.methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities,
    clientInfo: { name: "lifecycle-test", version: "1" },
  });
}

/** Creates a session and waits for its activation update (so later wire positions are clean). */
async function newSession(a: Agent, cwd: string, additionalDirectories?: string[]): Promise<string> {
  const from = a.observer.wire.length;
  const { sessionId } = await a.agent.request(acp.methods.agent.session.new, {
    cwd,
    mcpServers: [],
    ...(additionalDirectories ? { additionalDirectories } : {}),
  });
  await a.observer.waitFor((e) => updateOf(e.message)?.sessionUpdate === "available_commands_update", from, 5000);
  return sessionId;
}

/** Sends a text prompt; returns its stop reason and the updates that arrived before the answer. */
async function prompt(
  a: Agent,
  sessionId: string,
  text: string | acp.ContentBlock[],
): Promise<{ stopReason?: string; error?: { code: number }; updates: acp.SessionUpdate[] }> {
  const from = a.observer.wire.length;
  const blocks = typeof text === "string" ? [{ type: "text" as const, text }] : text;
  const result = await a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: blocks }).then(
    (r) => ({ stopReason: r.stopReason }),
    (e: acp.RequestError) => ({ error: { code: e.code } }),
  );
  const updates = a.observer.wire
    .slice(from)
    .map((e) => updateOf(e.message))
    .filter((u): u is acp.SessionUpdate => u !== undefined);
  return { ...result, updates };
}

function updateOf(message: Record<string, unknown>): acp.SessionUpdate | undefined {
  return message.method === "session/update" ? (message.params as acp.SessionNotification).update : undefined;
}

/** The raw answer (result or error) the agent wrote for the client's request with this method, the n-th one. */
function rawAnswer(a: Agent, method: string, n = 0): { result?: unknown; error?: { code: number; message: string; data?: unknown } } {
  const requests = a.observer.wire.filter((e) => e.direction === "out" && e.message.method === method && "id" in e.message);
  const id = requests[n]?.message.id;
  const answer = a.observer.wire.find((e) => e.direction === "in" && !("method" in e.message) && e.message.id === id);
  if (!answer) throw new Error(`no answer to ${method} #${n}`);
  return answer.message as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
}

const msg = (text: string): acp.SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${text}\n` } });
const thought = (text: string): acp.SessionUpdate => ({
  sessionUpdate: "agent_thought_chunk",
  content: { type: "text", text: `${text}\n` },
});
const text = (t: string): acp.ToolCallContent[] => [{ type: "content", content: { type: "text", text: t } }];
const inProgress = (toolCallId: string, extra: Partial<acp.ToolCallUpdate> = {}): acp.SessionUpdate => ({
  sessionUpdate: "tool_call_update",
  toolCallId,
  status: "in_progress",
  ...extra,
});
const failed = (toolCallId: string, t: string): acp.SessionUpdate => ({
  sessionUpdate: "tool_call_update",
  toolCallId,
  status: "failed",
  content: text(t),
});
const simulated = (toolCallId: string, title: string): acp.SessionUpdate[] => [
  { sessionUpdate: "tool_call", toolCallId, title, kind: "execute", status: "pending", rawInput: { command: title } },
  inProgress(toolCallId),
  {
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: "completed",
    content: text(`ran ${title}`),
    rawOutput: { output: `ran ${title}` },
  },
];

const COMMAND_NAMES = [
  "echo",
  "think",
  "tool",
  "permission",
  "read",
  "edit",
  "run",
  "secret",
  "wait",
  "sleep",
  "stop",
  "error",
  "title",
  "mirror",
  "info",
  "help",
];
const MODES = {
  currentModeId: "ask",
  availableModes: [
    { id: "ask", name: "Ask", description: expect.any(String) },
    { id: "code", name: "Code", description: expect.any(String) },
  ],
};
const verbosity = (value: string) => ({
  id: "verbosity",
  name: "Verbosity",
  description: expect.any(String),
  type: "select",
  currentValue: value,
  options: [
    { value: "low", name: "Low" },
    { value: "normal", name: "Normal" },
    { value: "high", name: "High" },
  ],
});
const toolCalls = (value: boolean) => ({
  id: "tool_calls_enabled",
  name: "Tool calls",
  description: expect.any(String),
  type: "boolean",
  currentValue: value,
});

/** The `session/update`s a load must replay for the given prompt steps: user blocks, then the replayable updates. */
function expectedReplay(steps: LifecycleStep[], sessionId: string): string[] {
  const replayed = new Set(["user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update"]);
  const lines: string[] = [];
  for (const step of steps) {
    for (const block of (step.params as acp.PromptRequest).prompt) {
      lines.push(JSON.stringify({ sessionId, update: { sessionUpdate: "user_message_chunk", content: block } }));
    }
    for (const u of step.updates) {
      if (replayed.has(u.update.sessionUpdate)) lines.push(JSON.stringify({ ...u, sessionId }));
    }
  }
  return lines;
}

const raw = (step: LifecycleStep): string[] => step.updates.map((u) => JSON.stringify(u));

describe("the seed-000 lifecycle (runLifecycle against the real agent)", () => {
  let a: Agent;
  let t: LifecycleTranscript;
  let store: string;
  let cwd: string;
  const step = (name: string) => findStep(t, name);

  beforeAll(async () => {
    store = folder("store");
    cwd = folder("project");
    a = startAgent(["--store", store, "--page-size", "1"]);
    t = await runLifecycle(a.agent, { observer: a.observer, cwd });
  }, 60_000);

  afterAll(async () => {
    expect(await a.stop()).toBe(0);
  });

  it("initialize advertises exactly the lifecycle it implements", () => {
    expect(step("initialize").result).toStrictEqual({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: true, embeddedContext: true },
        mcpCapabilities: { http: false, sse: false },
        sessionCapabilities: { list: {}, delete: {}, additionalDirectories: {}, resume: {}, close: {}, fork: {} },
      },
      authMethods: [],
      agentInfo: { name: "cordon-reference-agent", title: "Cordon reference agent", version: expect.any(String) },
    });
  });

  it("new: modes and both config options in the answer, then available_commands_update", () => {
    const created = step("new");
    expect(created.result).toStrictEqual({ sessionId: t.sessionId, modes: MODES, configOptions: [verbosity("normal"), toolCalls(true)] });
    expect(t.sessionId).toMatch(/^sess-[0-9a-f-]{36}$/);
    expect(created.updates).toStrictEqual([]);
    expect(created.after).toHaveLength(1);
    const commands = created.after[0];
    expect(commands.sessionId).toBe(t.sessionId);
    expect(commands.update.sessionUpdate).toBe("available_commands_update");
    const names = (commands.update as acp.AvailableCommandsUpdate).availableCommands.map((c) => c.name);
    expect(names).toStrictEqual(COMMAND_NAMES);
  });

  it("prompt: title, message, thought, tool calls with fs and terminal requests, verbatim blocks, end_turn", () => {
    const p = step("prompt");
    expect(p.result).toStrictEqual({ stopReason: "end_turn" });
    const notes = join(cwd, "notes.txt");
    const blocks = contentPrompt(cwd);
    const diff: acp.ToolCallContent = { type: "diff", path: notes, oldText: "first line\n", newText: "first line\nsecond line\n" };
    expect(p.updates.every((u) => u.sessionId === t.sessionId)).toBe(true);
    expect(p.updates.map((u) => u.update)).toStrictEqual([
      { sessionUpdate: "session_info_update", title: "Lifecycle of a session", updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      msg("echo: hello lifecycle"),
      thought("weighing the options"),
      ...simulated("tool-1", "list files"),
      {
        sessionUpdate: "tool_call",
        toolCallId: "tool-2",
        title: "Read notes.txt",
        kind: "read",
        status: "pending",
        locations: [{ path: notes }],
        rawInput: { path: notes },
      },
      inProgress("tool-2"),
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "tool-2",
        status: "completed",
        content: text("first line\n"),
        locations: [{ path: notes }],
      },
      {
        sessionUpdate: "tool_call",
        toolCallId: "tool-3",
        title: "Edit notes.txt",
        kind: "edit",
        status: "pending",
        content: [diff],
        locations: [{ path: notes, line: 2 }],
        rawInput: { path: notes, append: "second line" },
      },
      msg("permission allowed: Edit notes.txt (option allow)"),
      inProgress("tool-3"),
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "tool-3",
        status: "completed",
        content: [diff],
        locations: [{ path: notes, line: 2 }],
      },
      {
        sessionUpdate: "tool_call",
        toolCallId: "tool-4",
        title: "Run echo hello",
        kind: "execute",
        status: "pending",
        rawInput: { command: "echo", args: ["hello"], cwd },
      },
      msg("permission allowed: Run echo hello (option allow)"),
      inProgress("tool-4", { content: [{ type: "terminal", terminalId: "term-1" }] }),
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "tool-4",
        status: "completed",
        content: [{ type: "terminal", terminalId: "term-1" }, ...text("echo hello\n")],
        rawOutput: { exitCode: 0, signal: null, output: "echo hello\n", truncated: false },
      },
      // After `mirror`: every non-text block comes back exactly as sent (the image's _meta included).
      ...blocks.slice(1, -1).map((content) => ({ sessionUpdate: "agent_message_chunk", content })),
      msg("echo: done"),
    ]);
    // The agent→client requests of the turn, in order, and the client's files after it.
    expect(p.clientRequests.map((r) => r.method)).toStrictEqual([
      "fs/read_text_file",
      "fs/read_text_file",
      "session/request_permission",
      "fs/write_text_file",
      "session/request_permission",
      "terminal/create",
      "terminal/wait_for_exit",
      "terminal/output",
      "terminal/release",
    ]);
    expect(p.clientRequests[2].params).toStrictEqual({
      sessionId: t.sessionId,
      toolCall: {
        toolCallId: "tool-3",
        title: "Edit notes.txt",
        kind: "edit",
        status: "pending",
        content: [diff],
        locations: [{ path: notes, line: 2 }],
        rawInput: { path: notes, append: "second line" },
      },
      options: [
        { optionId: "allow", name: "Allow once", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    expect(p.clientRequests[3].params).toStrictEqual({ sessionId: t.sessionId, path: notes, content: "first line\nsecond line\n" });
    expect(p.clientRequests[5].params).toStrictEqual({
      sessionId: t.sessionId,
      command: "echo",
      args: ["hello"],
      cwd,
      outputByteLimit: 65536,
    });
    expect(a.observer.files.get(notes)).toBe("first line\nsecond line\n");
    // No usage_update: the agent has no real token counts or context window.
    expect(t.wire.some((e) => updateOf(e.message)?.sessionUpdate === "usage_update")).toBe(false);
  });

  it("permission: allow runs the tool; deny does not and the turn goes on; cancel does not and ends the turn", () => {
    const allow = step("permission allow");
    expect(allow.result).toStrictEqual({ stopReason: "end_turn" });
    const [call, ...rest] = simulated("tool-5", "deploy to staging");
    expect(allow.updates.map((u) => u.update)).toStrictEqual([call, msg("permission allowed: deploy to staging (option allow)"), ...rest]);
    expect(allow.clientRequests.map((r) => [r.method, r.result])).toStrictEqual([
      ["session/request_permission", { outcome: { outcome: "selected", optionId: "allow" } }],
    ]);

    const deny = step("permission deny");
    expect(deny.result).toStrictEqual({ stopReason: "end_turn" });
    expect(deny.updates.map((u) => u.update)).toStrictEqual([
      simulated("tool-6", "deploy to production")[0],
      msg("permission rejected: deploy to production (option reject)"),
      failed("tool-6", "not run: permission rejected"),
      msg("echo: after the refusal"),
    ]);

    const cancel = step("permission cancel");
    expect(cancel.result).toStrictEqual({ stopReason: "cancelled" });
    expect(cancel.updates.map((u) => u.update)).toStrictEqual([
      simulated("tool-7", "drop the database")[0],
      msg("permission cancelled: drop the database"),
      failed("tool-7", "not run: turn cancelled"),
    ]);
  });

  it("session/cancel mid-turn ends it with cancelled", () => {
    const c = step("cancel");
    expect(c.result).toStrictEqual({ stopReason: "cancelled" });
    expect(c.updates.map((u) => u.update)).toStrictEqual([msg("echo: before waiting"), msg("waiting for session/cancel")]);
  });

  it("close answers {} and frees the session: a prompt then gets -32002", () => {
    expect(step("close").result).toStrictEqual({});
    expect(step("prompt after close").error).toMatchObject({ code: -32002, data: { sessionId: t.sessionId } });
  });

  it("list shows the session with its title and updatedAt (page size 1: one page)", () => {
    const list = step("list");
    expect(list.result).toStrictEqual({
      sessions: [{ sessionId: t.sessionId, cwd, title: "Lifecycle of a session", updatedAt: expect.any(String) }],
    });
    expect(Date.parse((list.result as acp.ListSessionsResponse).sessions[0].updatedAt!)).toBeGreaterThan(Date.now() - 60_000);
    expect(t.steps.some((s) => s.name === "list 2")).toBe(false);
  });

  it("load replays every stored event, in order, exactly as sent (raw JSON), before its answer", () => {
    const load = step("load");
    const prompts = ["prompt", "permission allow", "permission deny", "permission cancel", "cancel"].map(step);
    expect(raw(load)).toStrictEqual(expectedReplay(prompts, t.sessionId));
    // The content prompt's blocks come back as user_message_chunks with the exact blocks.
    expect(load.updates.slice(0, 7).map((u) => u.update)).toStrictEqual(
      contentPrompt(cwd).map((content) => ({ sessionUpdate: "user_message_chunk", content })),
    );
    expect(load.result).toStrictEqual({ modes: MODES, configOptions: [verbosity("normal"), toolCalls(true)] });
    // Activation follows the answer: commands, then the stored title.
    expect(load.after.map((u) => u.update.sessionUpdate)).toStrictEqual(["available_commands_update", "session_info_update"]);
    expect(load.after[1].update).toMatchObject({ title: "Lifecycle of a session" });
  });

  it("resume reattaches without replay", () => {
    const resume = step("resume");
    expect(resume.result).toStrictEqual({ modes: MODES, configOptions: [verbosity("normal"), toolCalls(true)] });
    expect(resume.updates).toStrictEqual([]);
    expect(resume.after.map((u) => u.update.sessionUpdate)).toStrictEqual(["available_commands_update", "session_info_update"]);
  });

  it("set_mode: current_mode_update for a known mode; an unknown one is rejected and the mode stays", () => {
    const ok = step("set_mode");
    expect(ok.result).toStrictEqual({});
    expect(ok.updates).toStrictEqual([{ sessionId: t.sessionId, update: { sessionUpdate: "current_mode_update", currentModeId: "code" } }]);
    const bad = step("set_mode invalid");
    expect(bad.error).toMatchObject({ code: -32602, data: { modeId: "yolo", availableModes: ["ask", "code"] } });
    expect(bad.updates).toStrictEqual([]);
    // Still "code": the fork (after these) inherits it.
    expect((step("fork").result as acp.NewSessionResponse).modes?.currentModeId).toBe("code");
  });

  it("set_config_option: the full set in the answer and in config_option_update; invalid values and options rejected", () => {
    const ok = step("set_config_option");
    expect(ok.result).toStrictEqual({ configOptions: [verbosity("high"), toolCalls(true)] });
    expect(ok.updates).toStrictEqual([
      { sessionId: t.sessionId, update: { sessionUpdate: "config_option_update", configOptions: [verbosity("high"), toolCalls(true)] } },
    ]);
    for (const name of ["set_config_option invalid", "set_config_option unknown"]) {
      expect(step(name).error?.code).toBe(-32602);
      expect(step(name).updates).toStrictEqual([]);
    }
    const bool = step("set_config_option boolean");
    expect(bool.result).toStrictEqual({ configOptions: [verbosity("high"), toolCalls(false)] });
    // With tool calls off, tool commands are refused.
    expect(step("prompt tools off").updates.map((u) => u.update)).toStrictEqual([
      msg("not run (tool_calls_enabled is off): tool list files"),
      msg("echo: still talking"),
    ]);
  });

  it("fork copies history, mode, config and title to a new id; the source is unchanged", () => {
    const before = step("load before fork");
    const prompts = ["prompt", "permission allow", "permission deny", "permission cancel", "cancel", "prompt tools off"].map(step);
    expect(raw(before)).toStrictEqual(expectedReplay(prompts, t.sessionId));

    const fork = step("fork");
    expect(t.forkId).toMatch(/^sess-[0-9a-f-]{36}$/);
    expect(t.forkId).not.toBe(t.sessionId);
    expect(fork.result).toStrictEqual({
      sessionId: t.forkId,
      modes: { ...MODES, currentModeId: "code" },
      configOptions: [verbosity("high"), toolCalls(false)],
    });
    expect(fork.after.map((u) => [u.sessionId, u.update.sessionUpdate])).toStrictEqual([
      [t.forkId, "available_commands_update"],
      [t.forkId, "session_info_update"],
    ]);
    expect(fork.after[1].update).toMatchObject({ title: "Lifecycle of a session" });
    expect(step("prompt fork").updates.map((u) => u.update)).toStrictEqual([msg("echo: only in the fork")]);

    // The source replays exactly what it did before the fork.
    expect(raw(step("load source"))).toStrictEqual(raw(before));
    // The fork replays the source's history under its own id, then its own turn.
    expect(raw(step("load fork"))).toStrictEqual(expectedReplay([...prompts, step("prompt fork")], t.forkId));
  });

  it("mode, config and title persist: resume after close reports them", () => {
    expect(step("close fork").result).toStrictEqual({});
    expect(step("close source").result).toStrictEqual({});
    const resumed = step("resume source");
    expect(resumed.result).toStrictEqual({
      modes: { ...MODES, currentModeId: "code" },
      configOptions: [verbosity("high"), toolCalls(false)],
    });
    expect(resumed.after[1].update).toMatchObject({ sessionUpdate: "session_info_update", title: "Lifecycle of a session" });
  });

  it("load checks cwd (-32602) and the id (-32002)", () => {
    expect(step("load wrong cwd").error).toMatchObject({ code: -32602, data: { sessionId: t.sessionId, sessionCwd: cwd } });
    expect(step("load wrong cwd").updates).toStrictEqual([]);
    expect(step("load unknown").error).toMatchObject({ code: -32002 });
  });

  it("delete removes sessions from the store; deleting again succeeds; the session is gone", () => {
    expect(step("delete fork").result).toStrictEqual({});
    expect(step("delete").result).toStrictEqual({});
    expect(step("delete again").result).toStrictEqual({});
    expect(step("delete again").error).toBeUndefined();
    expect(step("load deleted").error).toMatchObject({ code: -32002 });
    expect(step("list after delete").result).toStrictEqual({ sessions: [] });
    expect(readdirSync(store)).toStrictEqual([]);
  });

  it("the wire held only JSON-RPC 2.0 lines and the agent wrote nothing to stderr", () => {
    expect(a.stdoutLines.length).toBeGreaterThan(100);
    for (const line of a.stdoutLines) expect(JSON.parse(line)).toHaveProperty("jsonrpc", "2.0");
    expect(a.stderr()).toBe("");
  });
});

describe("reference agent sessions beyond the lifecycle run", () => {
  it("a restarted agent loads a session an earlier process stored, replaying the same raw lines", async () => {
    const store = folder("store");
    const cwd = folder("project");
    const first = startAgent(["--store", store]);
    await initialize(first);
    const s = await newSession(first, cwd);
    const from = first.stdoutLines.length;
    const turn = await prompt(first, s, [{ type: "text", text: "title Survives restarts\nhello\nthink hmm\ntool build" }]);
    expect(turn.stopReason).toBe("end_turn");
    const original = first.stdoutLines.slice(from).filter((l) => l.includes('"session/update"') && !l.includes("session_info_update"));
    expect(original).toHaveLength(5);
    expect(await first.stop()).toBe(0);

    const second = startAgent(["--store", store]);
    await initialize(second);
    // Not active in the new process until loaded or resumed.
    expect((await prompt(second, s, "hi")).error).toStrictEqual({ code: -32002 });
    const listed = await second.agent.request(acp.methods.agent.session.list, {});
    expect(listed.sessions).toStrictEqual([{ sessionId: s, cwd, title: "Survives restarts", updatedAt: expect.any(String) }]);
    const loadFrom = second.stdoutLines.length;
    await second.agent.request(acp.methods.agent.session.load, { sessionId: s, cwd, mcpServers: [] });
    const replay = second.stdoutLines.slice(loadFrom).filter((l) => l.includes('"session/update"'));
    expect(replay[0]).toBe(
      JSON.stringify({
        jsonrpc: "2.0",
        method: "session/update",
        params: {
          sessionId: s,
          update: {
            sessionUpdate: "user_message_chunk",
            content: { type: "text", text: "title Survives restarts\nhello\nthink hmm\ntool build" },
          },
        },
      }),
    );
    expect(replay.slice(1, 6)).toStrictEqual(original);
    // The session goes on where it stopped: tool ids continue.
    const next = await prompt(second, s, "tool again");
    expect(next.updates.filter((u) => u.sessionUpdate === "tool_call")).toMatchObject([{ toolCallId: "tool-2" }]);
  });

  it("session/list pages with an opaque cursor, filters by cwd and rejects bad input", async () => {
    const store = folder("store");
    const [here, there] = [folder("here"), folder("there")];
    const a = startAgent(["--store", store, "--page-size", "2"]);
    await initialize(a);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await newSession(a, here));
    const other = await newSession(a, there, [join(there, "lib")]);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await a.agent.request(acp.methods.agent.session.list, { cwd: here, ...(cursor ? { cursor } : {}) });
      pages += 1;
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      for (const info of page.sessions) expect(info.cwd).toBe(here);
      seen.push(...page.sessions.map((info) => info.sessionId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(pages).toBe(3);
    expect([...seen].sort()).toStrictEqual([...ids].sort());
    const all = await a.agent.request(acp.methods.agent.session.list, {});
    expect(all.sessions).toHaveLength(2);
    expect(all.nextCursor).toEqual(expect.any(String));
    const theirs = await a.agent.request(acp.methods.agent.session.list, { cwd: there });
    expect(theirs).toStrictEqual({
      sessions: [{ sessionId: other, cwd: there, additionalDirectories: [join(there, "lib")], updatedAt: expect.any(String) }],
    });
    await expect(a.agent.request(acp.methods.agent.session.list, { cursor: "not-a-cursor" })).rejects.toMatchObject({ code: -32602 });
    await expect(a.agent.request(acp.methods.agent.session.list, { cwd: "relative/dir" })).rejects.toMatchObject({ code: -32602 });
  });

  it("without boolean support the boolean option is neither announced nor settable", async () => {
    const a = startAgent(["--store", folder("store")]);
    await initialize(a, {});
    const cwd = folder("project");
    const created = await a.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    expect(created.configOptions).toStrictEqual([verbosity("normal")]);
    await expect(
      a.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId: created.sessionId,
        configId: "tool_calls_enabled",
        type: "boolean",
        value: false,
      }),
    ).rejects.toMatchObject({ code: -32602 });
    // A select value sent as a boolean, or a boolean for the select, is rejected too.
    await expect(
      a.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId: created.sessionId,
        configId: "verbosity",
        type: "boolean",
        value: true,
      }),
    ).rejects.toMatchObject({ code: -32602 });
    await expect(
      a.agent.request(acp.methods.agent.session.setMode, { sessionId: "sess-00000000-0000-4000-8000-000000000000", modeId: "code" }),
    ).rejects.toMatchObject({
      code: -32002,
    });
  });

  it("without fs capabilities read and edit fail with a tool error and never touch the local disk; run needs a terminal", async () => {
    const cwd = folder("project");
    writeFileSync(join(cwd, "a.txt"), "alpha");
    const a = startAgent(["--store", folder("store")]);
    await initialize(a, {});
    const s = await newSession(a, cwd);
    a.observer.permission = (request) => ({ outcome: { outcome: "selected", optionId: request.options[0].optionId } });
    const r = await prompt(a, s, `read a.txt\nedit a.txt beta\nedit new.txt created\nrun ls`);
    expect(r.stopReason).toBe("end_turn");
    const failures = r.updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    const noFs = (m: string) =>
      `the client offers no fs.${m} (clientCapabilities.fs.${m}); this agent reads and writes files only through the client, never the local disk`;
    expect(failures.map((u) => (u as { content: Array<{ content: { text: string } }> }).content[0].content.text)).toStrictEqual([
      `not read: ${noFs("readTextFile")}`,
      `not edited: ${noFs("writeTextFile")}`,
      `not edited: ${noFs("writeTextFile")}`,
      "not run: the client offers no terminal (clientCapabilities.terminal)",
    ]);
    // Nothing was read into the conversation, nothing asked, nothing written or created.
    expect(JSON.stringify(r.updates)).not.toContain("alpha");
    expect(a.observer.wire.filter((e) => e.message.method === "session/request_permission")).toHaveLength(0);
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("alpha");
    expect(existsSync(join(cwd, "new.txt"))).toBe(false);
  });

  it("an edit needs both fs methods: with reading lent but not writing it fails before asking", async () => {
    const cwd = folder("project");
    const a = startAgent(["--store", folder("store")]);
    await initialize(a, { fs: { readTextFile: true } });
    const s = await newSession(a, cwd);
    a.observer.files.set(join(cwd, "a.txt"), "alpha");
    const r = await prompt(a, s, "read a.txt\nedit a.txt beta");
    expect(r.updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed")).toMatchObject({
      content: text("alpha"),
    });
    expect(r.updates.at(-1)).toMatchObject({
      status: "failed",
      content: [{ content: { text: expect.stringMatching(/^not edited: the client offers no fs\.writeTextFile/) } }],
    });
    expect(a.observer.wire.filter((e) => e.message.method === "session/request_permission")).toHaveLength(0);
    expect(a.observer.files.get(join(cwd, "a.txt"))).toBe("alpha");
  });

  it("with the client's fs, read and edit stay inside the session's directories", async () => {
    const cwd = folder("project");
    const extra = folder("extra");
    const outside = folder("outside");
    const a = startAgent(["--store", folder("store")]);
    await initialize(a, { fs: { readTextFile: true, writeTextFile: true } });
    const s = await newSession(a, cwd, [extra]);
    a.observer.files.set(join(cwd, "a.txt"), "alpha");
    a.observer.files.set(join(outside, "secret.txt"), "nope");
    a.observer.permission = (request) => ({ outcome: { outcome: "selected", optionId: request.options[0].optionId } });
    const r = await prompt(
      a,
      s,
      `read a.txt\nedit a.txt beta\nedit ${join(extra, "new.txt")} created\nread ${join(outside, "secret.txt")}\nedit ../x.txt no\nread missing.txt`,
    );
    expect(r.stopReason).toBe("end_turn");
    expect(a.observer.files.get(join(cwd, "a.txt"))).toBe("alpha\nbeta\n");
    expect(a.observer.files.get(join(extra, "new.txt"))).toBe("created\n");
    const updates = r.updates;
    expect(updates[2]).toStrictEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "tool-1",
      status: "completed",
      content: text("alpha"),
      locations: [{ path: join(cwd, "a.txt") }],
    });
    expect(updates.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "tool-3")).toMatchObject({
      kind: "edit",
      content: [{ type: "diff", path: join(extra, "new.txt"), oldText: null, newText: "created\n" }],
      locations: [{ path: join(extra, "new.txt"), line: 1 }],
    });
    const failures = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    expect(failures.map((u) => (u as { content: Array<{ content: { text: string } }> }).content[0].content.text)).toStrictEqual([
      `not read: ${join(outside, "secret.txt")} is outside the session's directories`,
      `not edited: ${join(cwd, "..", "x.txt")} is outside the session's directories`,
      expect.stringMatching(/^not read: .*not found/i),
    ]);
    // Only the two edits inside asked permission; nothing outside was asked for.
    expect(a.observer.wire.filter((e) => e.message.method === "session/request_permission")).toHaveLength(2);
    const read = a.observer.wire
      .filter((e) => e.message.method === "fs/read_text_file")
      .map((e) => (e.message.params as { path: string }).path);
    expect(read).not.toContain(join(outside, "secret.txt"));
  });

  it("session/cancel while a terminal command runs: $/cancel_request, kill, release, failed, cancelled", async () => {
    const a = startAgent(["--store", folder("store")]);
    await initialize(a);
    const s = await newSession(a, folder("project"));
    const pending = prompt(a, s, "run sleep 100\nnever");
    const from = a.observer.wire.length;
    await a.observer.waitFor((e) => e.message.method === "terminal/wait_for_exit", 0, 5000);
    await a.agent.notify(acp.methods.agent.session.cancel, { sessionId: s });
    const r = await pending;
    expect(r.stopReason).toBe("cancelled");
    expect(r.updates.slice(-1)).toStrictEqual([failed("tool-1", "cancelled: terminal killed")]);
    await a.observer.waitFor((e) => e.message.method === "terminal/release", from, 5000);
    const after = a.observer.wire.slice(from).filter((e) => e.direction === "in" && typeof e.message.method === "string");
    expect(after.map((e) => e.message.method)).toEqual(expect.arrayContaining(["$/cancel_request", "terminal/kill", "terminal/release"]));
  });

  it("close and delete cancel a running turn: its prompt is answered cancelled before them", async () => {
    for (const method of [acp.methods.agent.session.close, acp.methods.agent.session.delete]) {
      const a = startAgent(["--store", folder("store")]);
      await initialize(a);
      const s = await newSession(a, folder("project"));
      const turn = prompt(a, s, "wait");
      await a.observer.waitFor((e) => updateOf(e.message)?.sessionUpdate === "agent_message_chunk", 0, 5000);
      await a.agent.request(method, { sessionId: s });
      expect((await turn).stopReason).toBe("cancelled");
      const promptId = a.observer.wire.find((e) => e.direction === "out" && e.message.method === "session/prompt")!.message.id;
      const closeId = a.observer.wire.find((e) => e.direction === "out" && e.message.method === method)!.message.id;
      const order = a.observer.wire.filter((e) => e.direction === "in" && !("method" in e.message)).map((e) => e.message.id);
      expect(order.indexOf(promptId)).toBeLessThan(order.indexOf(closeId));
      expect(rawAnswer(a, method)).toMatchObject({ result: {} });
      expect((await prompt(a, s, "hi")).error).toStrictEqual({ code: -32002 });
    }
  });

  it("unknown sessions: close -32002 on the wire (the SDK client reports success), delete succeeds, fork and resume -32002", async () => {
    const a = startAgent(["--store", folder("store")]);
    await initialize(a);
    const cwd = folder("project");
    const unknown = "sess-00000000-0000-4000-8000-000000000000";
    await a.agent.request(acp.methods.agent.session.close, { sessionId: unknown });
    expect(rawAnswer(a, "session/close").error).toMatchObject({ code: -32002 });
    await a.agent.request(acp.methods.agent.session.delete, { sessionId: unknown });
    expect(rawAnswer(a, "session/delete")).toMatchObject({ result: {} });
    await a.agent.request(acp.methods.agent.session.delete, { sessionId: "../../etc" });
    expect(rawAnswer(a, "session/delete", 1)).toMatchObject({ result: {} });
    await expect(a.agent.request("session/fork", { sessionId: unknown, cwd })).rejects.toMatchObject({ code: -32002 });
    await expect(a.agent.request(acp.methods.agent.session.resume, { sessionId: "../x", cwd })).rejects.toMatchObject({ code: -32002 });
    await expect(
      a.agent.request(acp.methods.agent.session.load, { sessionId: unknown, cwd: "relative", mcpServers: [] }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it("stores prompts exactly as they arrived: unknown fields survive mirror and replay", async () => {
    const a = startAgent(["--store", folder("store")]);
    await initialize(a);
    const cwd = folder("project");
    const s = await newSession(a, cwd);
    const block = {
      type: "resource_link",
      uri: "file:///x",
      name: "x",
      "x-future-field": { kept: true },
      _meta: { trace: 1 },
    } as unknown as acp.ContentBlock;
    const r = await prompt(a, s, [{ type: "text", text: "mirror" }, block]);
    expect(r.updates).toStrictEqual([{ sessionUpdate: "agent_message_chunk", content: block }]);
    const mirrored = a.stdoutLines.find((l) => l.includes("x-future-field") && l.includes("agent_message_chunk"));
    expect(mirrored).toContain(JSON.stringify(block));
    const from = a.stdoutLines.length;
    await a.agent.request(acp.methods.agent.session.load, { sessionId: s, cwd, mcpServers: [] });
    const replay = a.stdoutLines
      .slice(from)
      .filter((l) => l.includes('"session/update"'))
      .slice(0, 3);
    expect(replay.map((l) => (JSON.parse(l) as { params: acp.SessionNotification }).params.update)).toStrictEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "mirror" } },
      { sessionUpdate: "user_message_chunk", content: block },
      { sessionUpdate: "agent_message_chunk", content: block },
    ]);
    expect(replay[1]).toContain(JSON.stringify(block));
  });
});
