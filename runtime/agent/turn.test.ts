/** Unit tests of a prompt turn (no process): the turn context, the step runner and the tool families over a scripted client. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ClientCapabilities, RequestError, type SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parsePrompt } from "./commands.js";
import { ActiveSessions, type AgentSession } from "./session.js";
import { SessionStore } from "./store.js";
import { appendLine } from "./tools/fs.js";
import { runTurn } from "./turn.js";
import { TurnCancelled, TurnContext, type TurnIO } from "./turn-context.js";

let dir: string;
let session: AgentSession;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cordon-turn-test-"));
  session = new ActiveSessions(new SessionStore(join(dir, "store"))).create({ cwd: dir, mcpServers: [], additionalDirectories: [] });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A scripted client: records updates and requests, allows every permission, answers requests from `answers`. */
function client(capabilities: ClientCapabilities = {}, answers: Record<string, unknown> = {}) {
  const updates: SessionUpdate[] = [];
  const requests: string[] = [];
  const io: TurnIO = {
    emit: async (u) => void updates.push(u),
    requestPermission: async () => ({ outcome: { outcome: "selected", optionId: "allow" } }),
    request: (async (method: string) => {
      requests.push(method);
      if (!(method in answers)) return new Promise(() => {});
      const answer = answers[method];
      if (answer instanceof Error) throw answer;
      return answer;
    }) as TurnIO["request"],
    clientCapabilities: () => capabilities,
    describeConnection: () => ["client test"],
  };
  return { io, updates, requests };
}
const text = (u: SessionUpdate) => ("content" in u && u.content && "text" in u.content ? u.content.text : undefined);
const prompt = (s: string) => parsePrompt([{ type: "text", text: s }]);

describe("TurnContext", () => {
  it("records every update in the history before sending it", async () => {
    const { io } = client();
    const seen: number[] = [];
    io.emit = async () => void seen.push(new SessionStore(join(dir, "store")).history(session.id).length);
    const turn = new TurnContext(session, new AbortController().signal, io);
    await turn.emit({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "a\n" } });
    await turn.emit({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "b\n" } });
    expect(seen).toStrictEqual([1, 2]);
  });

  it("abortable rejects with TurnCancelled on abort, at once if already aborted; sleep is interrupted", async () => {
    const controller = new AbortController();
    const turn = new TurnContext(session, controller.signal, client().io);
    const sleeping = turn.sleep(60_000);
    controller.abort();
    await expect(sleeping).rejects.toBeInstanceOf(TurnCancelled);
    await expect(turn.abortable(Promise.resolve(1))).rejects.toBeInstanceOf(TurnCancelled);
  });

  it("interruptible closes the tool call as failed and ends the turn when cancelled", async () => {
    const { io, updates } = client();
    const turn = new TurnContext(session, new AbortController().signal, io);
    expect(await turn.interruptible("tool-9", async () => Promise.reject(new TurnCancelled()))).toBe("cancelled");
    expect(updates).toStrictEqual([
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "tool-9",
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: "cancelled" } }],
      },
    ]);
    await expect(turn.interruptible("tool-9", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  });
});

describe("runTurn", () => {
  it("runs the talking steps in order and ends the turn", async () => {
    const { io, updates } = client();
    expect(await runTurn(session, prompt("hello\nthink hmm\ntitle T"), new AbortController().signal, io)).toBe("end_turn");
    expect(updates.map((u) => [u.sessionUpdate, text(u)])).toStrictEqual([
      ["agent_message_chunk", "echo: hello\n"],
      ["agent_thought_chunk", "hmm\n"],
      ["session_info_update", undefined],
    ]);
    expect(session.title).toBe("T");
  });

  it("fails the prompt for `error` with -32603 and exactly the message", async () => {
    const error = await runTurn(session, prompt("error it broke"), new AbortController().signal, client().io).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestError);
    expect(error).toMatchObject({ code: -32603, message: "it broke", data: { command: "error" } });
  });

  it("ends `wait` as cancelled when the turn is cancelled, and runs no later step", async () => {
    const { io, updates } = client();
    const controller = new AbortController();
    const running = runTurn(session, prompt("wait\nnever"), controller.signal, io);
    await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    expect(await running).toBe("cancelled");
    expect(updates.map(text)).toStrictEqual(["waiting for session/cancel\n"]);
  });

  it("refuses the tool commands while tool_calls_enabled is off", async () => {
    session.setConfig("tool_calls_enabled", false);
    const { io, updates, requests } = client({ terminal: true });
    await runTurn(session, prompt("run ls -l"), new AbortController().signal, io);
    expect(updates.map(text)).toStrictEqual(["not run (tool_calls_enabled is off): run ls -l\n"]);
    expect(requests).toStrictEqual([]);
  });
});

describe("tool families", () => {
  it("fs: without the client's fs, read and edit fail with a tool error and the disk is neither read nor written", async () => {
    writeFileSync(join(dir, "notes.md"), "one");
    const { io, updates, requests } = client();
    await runTurn(session, prompt("read notes.md\nedit notes.md two"), new AbortController().signal, io);
    expect(readFileSync(join(dir, "notes.md"), "utf8")).toBe("one");
    expect(requests).toStrictEqual([]);
    expect(JSON.stringify(updates)).not.toContain('"one"');
    const failed = updates.filter((u) => "status" in u && u.status === "failed").map((u) => JSON.stringify(u));
    expect(failed).toHaveLength(2);
    expect(failed[0]).toContain("not read: the client offers no fs.readTextFile");
    expect(failed[1]).toContain("not edited: the client offers no fs.writeTextFile");
  });

  it("fs: edit appends a line through the client after permission, with a diff; a client's not-found counts as a new file", async () => {
    const lent = client(
      { fs: { readTextFile: true, writeTextFile: true } },
      { "fs/read_text_file": { content: "one" }, "fs/write_text_file": {} },
    );
    await runTurn(session, prompt("edit notes.md two"), new AbortController().signal, lent.io);
    expect(lent.requests).toStrictEqual(["fs/read_text_file", "fs/write_text_file"]);
    expect(lent.updates.at(-1)).toMatchObject({
      status: "completed",
      content: [{ type: "diff", oldText: "one", newText: "one\ntwo\n" }],
      locations: [{ line: 2 }],
    });

    const remote = client(
      { fs: { readTextFile: true, writeTextFile: true } },
      {
        "fs/read_text_file": RequestError.resourceNotFound("x"),
        "fs/write_text_file": {},
      },
    );
    await runTurn(session, prompt("edit new.md first"), new AbortController().signal, remote.io);
    expect(remote.requests).toStrictEqual(["fs/read_text_file", "fs/write_text_file"]);
    expect(remote.updates.at(-1)).toMatchObject({ status: "completed", content: [{ type: "diff", oldText: null, newText: "first\n" }] });
    expect(appendLine("a\n", "b")).toBe("a\nb\n");
  });

  it("fs: read refuses a path outside the session's directories", async () => {
    const { io, updates, requests } = client({ fs: { readTextFile: true } });
    await runTurn(session, prompt("read /etc/passwd"), new AbortController().signal, io);
    expect(requests).toStrictEqual([]);
    expect(updates.at(-1)).toMatchObject({
      status: "failed",
      content: [{ content: { text: "not read: /etc/passwd is outside the session's directories" } }],
    });
  });

  it("terminal: create, wait, output, release, in order; output and exit code reported", async () => {
    const { io, updates, requests } = client(
      { terminal: true },
      {
        "terminal/create": { terminalId: "t1" },
        "terminal/wait_for_exit": { exitCode: 0 },
        "terminal/output": { output: "hi\n", truncated: false },
        "terminal/release": {},
      },
    );
    await runTurn(session, prompt("run echo hi"), new AbortController().signal, io);
    expect(requests).toStrictEqual(["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"]);
    expect(updates.at(-1)).toMatchObject({
      status: "completed",
      rawOutput: { exitCode: 0, signal: null, output: "hi\n", truncated: false },
    });
  });

  it("terminal: a cancelled turn kills and releases the terminal", async () => {
    const { io, updates, requests } = client(
      { terminal: true },
      { "terminal/create": { terminalId: "t1" }, "terminal/kill": {}, "terminal/release": {} },
    );
    const controller = new AbortController();
    const running = runTurn(session, prompt("run sleep 100"), controller.signal, io);
    while (!requests.includes("terminal/wait_for_exit")) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await running).toBe("cancelled");
    expect(requests).toStrictEqual(["terminal/create", "terminal/wait_for_exit", "terminal/kill", "terminal/release"]);
    expect(text(updates.at(-1)!)).toBeUndefined();
    expect(updates.at(-1)).toMatchObject({ status: "failed", content: [{ content: { text: "cancelled: terminal killed" } }] });
  });

  it("mcp: an unknown server fails the tool call and the turn goes on", async () => {
    const { io, updates } = client();
    expect(await runTurn(session, prompt("use tool calc::add {}\nafter"), new AbortController().signal, io)).toBe("end_turn");
    expect(updates.map((u) => u.sessionUpdate)).toStrictEqual(["tool_call", "tool_call_update", "agent_message_chunk"]);
    expect(updates[1]).toMatchObject({
      status: "failed",
      content: [{ content: { text: 'not run: no MCP server named "calc" in this session (servers: none)' } }],
    });
  });
});
