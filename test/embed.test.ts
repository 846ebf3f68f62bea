/**
 * The embedding API against the reference agent, through a chain of real WASM proxies started in
 * this process (`connect` from the package entry): sessions and their capability gates, typed
 * prompt events with tool calls correlated by id, permission bridging (presets, callbacks, nested
 * requests, cancellation), capabilities as a contract (fs, terminal, prompt content, MCP
 * transports), cancellation with AbortSignal, and a clean shutdown that ends the agent.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  AgentError,
  ChainStartError,
  ConfigError,
  type Connection,
  ConnectionClosedError,
  type ConnectOptions,
  CordonError,
  connect,
  InvalidRequestError,
  type PromptEvent,
  RequestError,
  UnsupportedError,
} from "../runtime/index.js";
import { CORDON, NODE, proxyWasm } from "./helpers/paths.js";

const open: Connection[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** The reference agent behind redact, tool-guard and arrow (each a real .wasm component). */
async function start(options: Partial<ConnectOptions> = {}): Promise<Connection & { store: string }> {
  const store = mkdtempSync(join(tmpdir(), "cordon-embed-store-"));
  const connection = await connect({
    chain: {
      proxies: [
        { name: "redact", wasm: proxyWasm("redact") },
        { name: "tool-guard", wasm: proxyWasm("tool-guard"), config: { deny: ["rm -rf*"] } },
        { name: "arrow", wasm: proxyWasm("arrow") },
      ],
      agent: { command: NODE, args: [CORDON, "reference-agent"], env: { CORDON_AGENT_STORE: store } },
    },
    log: "silent",
    ...options,
  });
  open.push(connection);
  return Object.assign(connection, { store });
}

async function collect(run: AsyncIterable<PromptEvent>): Promise<PromptEvent[]> {
  const events: PromptEvent[] = [];
  for await (const e of run) events.push(e);
  return events;
}

const texts = (events: PromptEvent[]) => events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("connect", () => {
  it("starts the chain in-process and writes nothing to stdout", async () => {
    const writes = vi.spyOn(process.stdout, "write");
    try {
      const cordon = await start();
      expect(cordon.components).toEqual([
        'proxy "redact"',
        'proxy "tool-guard"',
        'proxy "arrow"',
        "MCP bridge",
        expect.stringMatching(/^agent "/),
      ]);
      expect(cordon.agentInfo?.name).toBe("cordon-reference-agent");
      const session = await cordon.newSession();
      expect(await session.prompt("secret\nhello").text()).toMatch(/^>here is a fake openai API key: \[REDACTED\]\n>echo: hello\n$/);
      await cordon.close();
      expect(writes).not.toHaveBeenCalled();
    } finally {
      writes.mockRestore();
    }
  });

  it("validates the config object with the chain-config schema, naming the field", async () => {
    await expect(connect({ chain: { proxies: [{ wasm: 42 as unknown as string }], agent: { command: NODE } } })).rejects.toThrow(
      ConfigError,
    );
    await expect(connect({ chain: { proxies: [{ wasm: "x.wasm", colour: "red" } as never], agent: { command: NODE } } })).rejects.toThrow(
      /proxies\[0\]/,
    );
    await expect(connect({ chain: { proxies: [{ command: "native-proxy" } as never], agent: { command: NODE } } })).rejects.toThrow(
      /trusted/,
    );
    await expect(connect({ chain: { proxies: [] } })).rejects.toThrow(/no agent/);
    // Typed like the other errors: a code to branch on, and a CordonError.
    for (const chain of [{ proxies: [{ wams: "x.wasm" } as never], agent: { command: NODE } }, { proxies: [] }]) {
      const error = await connect({ chain }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CordonError);
      expect(error).toMatchObject({ name: "ConfigError", code: "config" });
    }
  });

  it("reports a component that cannot start as ChainStartError and leaves nothing running", async () => {
    const error = await connect({
      chain: { proxies: [{ wasm: "/nonexistent/missing.wasm" }] },
      agent: [NODE, CORDON, "reference-agent"],
      log: "silent",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainStartError);
    expect((error as Error).message).toMatch(/missing\.wasm/);
    // A missing agent command: said as `cordon run` says it, with where Cordon looked.
    const missing = await connect({ chain: { proxies: [] }, agent: ["/nonexistent/cordon-agent"], log: "silent" }).catch((e: unknown) => e);
    expect(missing).toMatchObject({
      code: "start",
      message: expect.stringContaining('agent "/nonexistent/cordon-agent": command not found: /nonexistent/cordon-agent does not exist'),
    });
  });
});

describe("an agent that writes something other than ACP", () => {
  it("exits with a usage text: the error shows its stdout with its stderr tail, escaped", async () => {
    const usage = 'echo "Usage: fake-agent [--acp] <dir>"; printf "\\033[31mno dir given\\033[0m\\n"; echo "bad flags" >&2; exit 64';
    const error = await connect({ chain: { proxies: [] }, agent: ["sh", "-c", usage], log: "silent" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainStartError);
    expect((error as Error).message).toMatch(
      /exited with code 64; stdout \(not JSON-RPC\): Usage: fake-agent \[--acp\] <dir> \| \\x1b\[31mno dir given\\x1b\[0m; stderr: bad flags$/,
    );
    expect((error as ChainStartError).data).toMatchObject({
      cordon: {
        component: "agent",
        failure: "exit",
        stdout: ["Usage: fake-agent [--acp] <dir>", "\\x1b[31mno dir given\\x1b[0m"],
        stderr: "bad flags\n",
      },
    });
  });

  it("prints a banner, then nothing: the initialize timeout says so and shows the banner", async () => {
    const banner = 'echo "Welcome to FooAgent 2.0"; echo "Please log in:"; exec sleep 60';
    const error = await connect({ chain: { proxies: [] }, agent: ["sh", "-c", banner], initializeTimeoutMs: 300, log: "silent" }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ChainStartError);
    expect((error as Error).message).toMatch(
      /did not answer initialize within 300 ms \(change it with the initializeTimeoutMs option or CORDON_INITIALIZE_TIMEOUT_MS\).*; stdout \(not JSON-RPC\): Welcome to FooAgent 2\.0 \| Please log in:$/,
    );
  });
});

describe("sessions", () => {
  it("walks new → prompt → close → list → load (replay) → resume → fork → delete", async () => {
    const cordon = await start();
    const cwd = mkdtempSync(join(tmpdir(), "cordon-embed-cwd-"));
    expect(cordon.supports).toMatchObject({
      loadSession: true,
      listSessions: true,
      resumeSession: true,
      forkSession: true,
      closeSession: true,
      deleteSession: true,
    });
    const session = await cordon.newSession({ cwd });
    expect(session.cwd).toBe(cwd);
    await session.prompt("first question\ntitle Review").result;
    expect(session.title).toBe("Review");
    await cordon.closeSession(session.id);
    expect(session.closed).toBe(true);
    expect(() => session.prompt("again")).toThrow(InvalidRequestError);

    const listed = await cordon.listSessions({ cwd });
    expect(listed.sessions.map((s) => s.sessionId)).toEqual([session.id]);
    const all: string[] = [];
    for await (const info of cordon.allSessions({ cwd })) all.push(info.title ?? "");
    expect(all).toEqual(["Review"]);

    const loaded = await cordon.loadSession(session.id, { cwd });
    const replayed = loaded.history.map((e) => e.type);
    expect(replayed).toContain("user");
    expect(replayed).toContain("text");
    expect(loaded.history.find((e) => e.type === "user")).toMatchObject({
      content: { type: "text", text: "first question\ntitle Review" },
    });
    expect(await loaded.prompt("after load").text()).toBe(">echo: after load\n");

    await cordon.closeSession(session.id);
    const resumed = await cordon.resumeSession(session.id, { cwd });
    expect(resumed.history).toEqual([]);
    expect(await resumed.prompt("after resume").text()).toBe(">echo: after resume\n");

    const fork = await cordon.forkSession(session.id);
    expect(fork.id).not.toBe(session.id);
    expect(fork.cwd).toBe(cwd);
    expect(await fork.prompt("in the fork").text()).toBe(">echo: in the fork\n");
    await cordon.deleteSession(fork.id);
    expect((await cordon.listSessions({ cwd })).sessions.map((s) => s.sessionId)).toEqual([session.id]);
    await expect(cordon.loadSession(fork.id, { cwd })).rejects.toBeInstanceOf(AgentError);
  });

  it("validates setMode and setConfigOption against what the session announced, before sending", async () => {
    const trace = join(mkdtempSync(join(tmpdir(), "cordon-embed-trace-")), "trace.jsonl");
    const cordon = await start({ trace });
    const session = await cordon.newSession();
    expect(session.modes?.availableModes.map((m) => m.id)).toEqual(["ask", "code"]);
    expect(session.configOptions?.map((o) => o.id)).toEqual(["verbosity", "tool_calls_enabled"]);

    await expect(session.setMode("yolo")).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(session.setConfigOption("verbosity", "loud")).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(session.setConfigOption("tool_calls_enabled", "no")).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(session.setConfigOption("colour", "red")).rejects.toThrow(/unknown config option "colour"/);

    const events: PromptEvent[] = [];
    session.onEvent((e) => events.push(e));
    await session.setMode("code");
    expect(session.currentModeId).toBe("code");
    const options = await session.setConfigOption("verbosity", "high");
    expect(options.find((o) => o.id === "verbosity")?.currentValue).toBe("high");
    await session.setConfigOption("tool_calls_enabled", false);
    expect(session.configOptions?.find((o) => o.id === "tool_calls_enabled")?.currentValue).toBe(false);
    await expect.poll(() => events.map((e) => e.type).filter((t) => t !== "commands")).toEqual(["mode", "config", "config"]);
    expect(await session.prompt("tool Run tests").text()).toMatch(/not run \(tool_calls_enabled is off\)/);

    await cordon.close();
    // Only the valid changes reached the agent.
    const sent = readFileSync(trace, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "request" && e.to === "agent");
    expect(sent.filter((e) => e.method === "session/set_mode").map((e) => e.params.modeId)).toEqual(["code"]);
    expect(sent.filter((e) => e.method === "session/set_config_option").map((e) => e.params.value)).toEqual(["high", false]);
  });
});

describe("prompt events", () => {
  it("are typed, in order, with tool calls correlated by id (status, kind, title, text, diffs, locations)", async () => {
    // The application lends its own disk; the agent edits only through it.
    const fs = {
      readTextFile: ({ path }: { path: string }) => ({ content: readFileSync(path, "utf8") }),
      writeTextFile: ({ path, content }: { path: string; content: string }) => writeFileSync(path, content),
    };
    const cordon = await start({ permissions: "allow", fs });
    const cwd = mkdtempSync(join(tmpdir(), "cordon-embed-cwd-"));
    writeFileSync(join(cwd, "notes.txt"), "one\n");
    const session = await cordon.newSession({ cwd });
    const events = await collect(session.prompt("hello\nthink weighing it\ntool Run tests\nedit notes.txt two\ntitle Edited"));
    expect(events.map((e) => e.type).filter((t) => t !== "commands")).toEqual([
      "text",
      "thought",
      "tool_call",
      "tool_call_update",
      "tool_call_update",
      "tool_call",
      "permission",
      "text",
      "tool_call_update",
      "tool_call_update",
      "session_info",
      "stop",
    ]);
    const tool1 = events.filter((e) => (e.type === "tool_call" || e.type === "tool_call_update") && e.toolCallId === "tool-1");
    expect(tool1.map((e) => "call" in e && e.call.status)).toEqual(["pending", "in_progress", "completed"]);
    expect(tool1.at(-1)).toMatchObject({ call: { title: "Run tests", kind: "execute", text: "ran Run tests" } });
    const edit = events.filter((e) => e.type === "tool_call_update" && e.toolCallId === "tool-2").at(-1)!;
    const path = join(cwd, "notes.txt");
    expect(edit).toMatchObject({
      call: {
        title: "Edit notes.txt",
        kind: "edit",
        status: "completed",
        diffs: [{ path, oldText: "one\n", newText: "one\ntwo\n" }],
        locations: [{ path, line: 2 }],
      },
    });
    expect(readFileSync(path, "utf8")).toBe("one\ntwo\n");
    expect(session.toolCalls.map((c) => [c.toolCallId, c.status])).toEqual([
      ["tool-1", "completed"],
      ["tool-2", "completed"],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "stop", stopReason: "end_turn" });
    expect(events.find((e) => e.type === "session_info")).toMatchObject({ title: "Edited" });
  });

  it("text() gives only the agent's text, unaffected by the richer events", async () => {
    const cordon = await start({ permissions: "allow" });
    const session = await cordon.newSession();
    const rich = "a\nthink x\ntool T\npermission P\nb";
    const all = texts(await collect(session.prompt(rich)));
    expect(await session.prompt(rich).text()).toBe(all);
    const chunks: string[] = [];
    for await (const chunk of session.prompt(rich).textChunks()) chunks.push(chunk);
    expect(chunks.join("")).toBe(all);
    expect(all).toBe(">echo: a\n>permission allowed: P (option allow)\n>echo: b\n");
  });

  it("a failed turn throws the agent's error after the events before it", async () => {
    const cordon = await start();
    const session = await cordon.newSession();
    const seen: string[] = [];
    const error = await (async () => {
      for await (const e of session.prompt("before\nerror it broke")) seen.push(e.type);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).rpcMessage).toBe("it broke");
    expect(seen).toContain("text");
    expect(session.busy).toBe(false);
  });
});

describe("permissions", () => {
  it("presets: deny never runs the tool, allow runs it; tool-guard answers rm -rf itself", async () => {
    const denying = await start({ permissions: "deny" });
    const s1 = await denying.newSession();
    const denied = await collect(s1.prompt("permission Delete cache"));
    expect(denied.find((e) => e.type === "permission")).toMatchObject({ outcome: "denied", optionId: "reject" });
    expect(denied.filter((e) => e.type === "tool_call_update").at(-1)).toMatchObject({
      call: { status: "failed", text: "not run: permission rejected" },
    });

    const asked: string[] = [];
    const allowing = await start({ permissions: (r) => (asked.push(r.toolCall.title ?? ""), "allow") });
    const s2 = await allowing.newSession();
    const allowed = await collect(s2.prompt("permission Delete cache\npermission rm -rf /"));
    expect(asked).toEqual(["Delete cache"]); // tool-guard rejected rm -rf without asking the client
    expect(texts(allowed)).toBe(">permission allowed: Delete cache (option allow)\n>permission rejected: rm -rf / (option reject)\n");
  });

  it("nested requests during a prompt work: the callback itself prompts another session before deciding", async () => {
    let reviewer: Awaited<ReturnType<Connection["newSession"]>> | null = null;
    const verdicts: string[] = [];
    const cordon = await start({
      permissions: async (request) => {
        // Ask a second session (through the same chain) while the first turn waits on us.
        const answer = await reviewer!.prompt(`review ${request.toolCall.title}`).text();
        verdicts.push(answer);
        return request.toolCall.title?.includes("safe") ? "allow" : "deny";
      },
    });
    reviewer = await cordon.newSession();
    const session = await cordon.newSession();
    const events = await collect(session.prompt("permission safe step\npermission risky step\npermission safe again"));
    expect(events.filter((e) => e.type === "permission").map((e) => e.type === "permission" && e.outcome)).toEqual([
      "allowed",
      "denied",
      "allowed",
    ]);
    expect(verdicts).toEqual([">echo: review safe step\n", ">echo: review risky step\n", ">echo: review safe again\n"]);
    expect(events.at(-1)).toMatchObject({ type: "stop", stopReason: "end_turn" });
  });

  it("cancel maps to deny: aborting while the policy decides answers cancelled and the tool never runs", async () => {
    let asked!: () => void;
    const askedP = new Promise<void>((r) => (asked = r));
    const cordon = await start({
      permissions: (request) =>
        new Promise((resolve) => {
          asked();
          request.signal.addEventListener("abort", () => resolve("allow")); // too late: the request was withdrawn
        }),
    });
    const session = await cordon.newSession();
    const abort = new AbortController();
    const run = session.prompt("permission Deploy\ntool never reached", { signal: abort.signal });
    await askedP;
    abort.abort();
    const events = await collect(run);
    expect(events.find((e) => e.type === "permission")).toMatchObject({ outcome: "cancelled" });
    expect(texts(events)).toBe(">permission cancelled: Deploy\n");
    expect(events.filter((e) => e.type === "tool_call_update").at(-1)).toMatchObject({
      call: { status: "failed", text: "not run: turn cancelled" },
    });
    expect(events.at(-1)).toMatchObject({ type: "stop", stopReason: "cancelled" });
  });
});

describe("capabilities as a contract", () => {
  it("fs is declared only when implemented, and the agent then reads and writes through the application", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "cordon-embed-cwd-"));
    writeFileSync(join(cwd, "a.txt"), "on disk\n");
    const bare = await start();
    const s0 = await bare.newSession({ cwd });
    expect(await s0.prompt("info").text()).toMatch(/"readTextFile":false,"writeTextFile":false/);
    expect(texts(await collect(s0.prompt("read a.txt")))).toBe("");
    // No fs offered: the agent refuses instead of reading the disk behind the application's back.
    expect(s0.toolCalls.at(-1)).toMatchObject({
      status: "failed",
      text: expect.stringMatching(/^not read: the client offers no fs\.readTextFile/),
    });

    const reads: string[] = [];
    const writes: Array<{ path: string; content: string }> = [];
    const lending = await start({
      permissions: "allow",
      fs: {
        readTextFile: ({ path }) => (reads.push(path), { content: "from the application\n" }),
        writeTextFile: ({ path, content }) => void writes.push({ path, content }),
      },
    });
    const s1 = await lending.newSession({ cwd });
    expect(await s1.prompt("info").text()).toMatch(/"readTextFile":true,"writeTextFile":true/);
    await s1.prompt("read a.txt").result;
    expect(reads).toEqual([join(cwd, "a.txt")]);
    expect(s1.toolCalls.at(-1)?.text).toBe("from the application\n");
    await s1.prompt("edit a.txt more").result;
    expect(writes).toEqual([{ path: join(cwd, "a.txt"), content: "from the application\nmore\n" }]);
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("on disk\n"); // the agent wrote through us only
  });

  it("an fs handler answers with an ACP error code: -32002 for a missing file lets the agent's edit create it", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "cordon-embed-cwd-"));
    const writes: Array<{ path: string; content: string }> = [];
    const thrown: unknown[] = [RequestError.resourceNotFound(join(cwd, "new.txt")), Object.assign(new Error("gone"), { code: "ENOENT" })];
    const cordon = await start({
      permissions: "allow",
      fs: {
        readTextFile: () => {
          throw thrown.shift();
        },
        writeTextFile: ({ path, content }) => void writes.push({ path, content }),
      },
    });
    const session = await cordon.newSession({ cwd });
    // A RequestError keeps its code, and so does Node's ENOENT from a readFile-based handler.
    for (const file of ["new.txt", "other.txt"]) {
      await session.prompt(`edit ${file} first line`).result;
      expect(session.toolCalls.at(-1)).toMatchObject({ status: "completed", diffs: [{ path: join(cwd, file), oldText: null }] });
    }
    expect(writes).toEqual([
      { path: join(cwd, "new.txt"), content: "first line\n" },
      { path: join(cwd, "other.txt"), content: "first line\n" },
    ]);
    // Any other error is still -32603 with its message, and the edit fails with it.
    const failing = await start({
      permissions: "allow",
      fs: {
        readTextFile: () => {
          throw new Error("disk on fire");
        },
        writeTextFile: () => {},
      },
    });
    const s2 = await failing.newSession({ cwd });
    await s2.prompt("edit new.txt x").result;
    expect(s2.toolCalls.at(-1)).toMatchObject({ status: "failed", text: expect.stringMatching(/disk on fire/) });
  });

  it("terminal is declared only when implemented", async () => {
    const bare = await start({ permissions: "allow" });
    const s0 = await bare.newSession();
    await s0.prompt("run echo hi").result;
    expect(s0.toolCalls.at(-1)).toMatchObject({ status: "failed", text: expect.stringMatching(/client offers no terminal/) });

    const calls: string[] = [];
    const withTerminal = await start({
      permissions: "allow",
      terminal: {
        create: (r) => (calls.push(`create ${r.command} ${r.args?.join(" ")}`), { terminalId: "term-1" }),
        waitForExit: () => (calls.push("wait"), { exitCode: 0 }),
        output: () => (calls.push("output"), { output: "hi\n", truncated: false }),
        kill: () => void calls.push("kill"),
        release: () => void calls.push("release"),
      },
    });
    const s1 = await withTerminal.newSession();
    await s1.prompt("run echo hi").result;
    expect(calls).toEqual(["create echo hi", "wait", "output", "release"]);
    expect(s1.toolCalls.at(-1)).toMatchObject({ status: "completed", terminalIds: ["term-1"], text: "hi\n" });
  });

  it("prompt content and MCP transports the agent did not advertise are refused or left out before sending", async () => {
    const cordon = await start();
    // The reference agent accepts stdio MCP only; the chain adds acp (Cordon's bridge).
    expect(cordon.supports.mcp).toEqual({ stdio: true, http: false, sse: false, acp: true });
    const servers = [
      { name: "local", command: NODE, args: ["-e", "0"], env: [] },
      { type: "http" as const, name: "web", url: "http://127.0.0.1:9/mcp", headers: [] },
    ];
    const session = await cordon.newSession({ mcpServers: servers });
    expect(session.mcpServers.map((s) => s.name)).toEqual(["local"]);
    expect(session.omittedMcpServers.map((s) => s.name)).toEqual(["web"]);
    expect(await session.prompt("info").text()).toMatch(/local/);
    await expect(cordon.newSession({ mcpServers: servers, onUnsupportedMcp: "error" })).rejects.toThrow(
      /"web" uses the http transport.*mcpCapabilities\.http/,
    );
    await expect(cordon.newSession({ cwd: "relative/dir" })).rejects.toBeInstanceOf(InvalidRequestError);
  });
});

describe("cancellation and shutdown", () => {
  it("an AbortSignal cancels a running turn, which ends with stop reason cancelled", async () => {
    const cordon = await start();
    const session = await cordon.newSession();
    const events = await collect(session.prompt("wait", { signal: AbortSignal.timeout(200) }));
    expect(events.at(-1)).toMatchObject({ type: "stop", stopReason: "cancelled" });
    expect(await session.prompt("next").text()).toBe(">echo: next\n");
    const aborted = new AbortController();
    aborted.abort();
    expect(() => session.prompt("x", { signal: aborted.signal })).toThrow(/aborted before it was sent/);
    await expect(cordon.listSessions({ signal: aborted.signal })).rejects.toThrow(/aborted/);
  });

  it("close cancels running turns, ends the agent's process group and refuses further calls", async () => {
    const cordon = await start();
    const session = await cordon.newSession();
    const pid = cordon.agentPid!;
    expect(alive(pid)).toBe(true);
    const run = session.prompt("wait");
    await new Promise((r) => setTimeout(r, 100));
    const exit = await cordon.close();
    expect(exit).toEqual({ code: 0 });
    expect((await run.result).stopReason).toBe("cancelled");
    expect(alive(pid)).toBe(false);
    expect(() => session.prompt("x")).toThrow(ConnectionClosedError);
    await expect(cordon.newSession()).rejects.toBeInstanceOf(ConnectionClosedError);
    expect(await cordon.close()).toEqual({ code: 0 });
  });

  it("close ends the agent's whole process group: a child the agent left running is stopped too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-embed-group-"));
    const pidFile = join(dir, "pid");
    // A stdio "MCP server" that never answers and ignores EOF: only a signal ends it.
    const stubborn = {
      name: "stubborn",
      command: NODE,
      args: ["-e", "require('fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000)", pidFile],
      env: [],
    };
    const cordon = await start({ closeGraceMs: 200 });
    const session = await cordon.newSession({ mcpServers: [stubborn] });
    void session.prompt("list tools stubborn").result.catch(() => {});
    await expect
      .poll(
        () => {
          try {
            return Number(readFileSync(pidFile, "utf8"));
          } catch {
            return 0;
          }
        },
        { timeout: 10_000 },
      )
      .toBeGreaterThan(0);
    const child = Number(readFileSync(pidFile, "utf8"));
    expect(alive(child)).toBe(true);
    await cordon.close();
    await expect.poll(() => alive(child), { timeout: 5_000 }).toBe(false);
  });

  it("an agent that dies fails the running turn with an error naming it and ends the connection", async () => {
    const cordon = await start();
    const session = await cordon.newSession();
    const run = session.prompt("wait");
    await new Promise((r) => setTimeout(r, 100));
    process.kill(cordon.agentPid!, "SIGKILL");
    await expect(run.result).rejects.toThrow(/agent .* was killed by SIGKILL/);
    expect((await cordon.closed).code).not.toBe(0);
    await expect(cordon.newSession()).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it("capability gates throw UnsupportedError (see test/embed-scripted.test.ts for an agent without them)", () => {
    expect(new UnsupportedError("x", "agentCapabilities.loadSession").code).toBe("unsupported");
  });
});
