/**
 * A reusable client-side driver of the seed-000 session lifecycle.
 *
 * {@link runLifecycle} takes an SDK client that is already connected to the reference agent — directly,
 * or through any chain of proxies — and walks the whole lifecycle: initialize → new → prompts (content
 * of every kind, tool calls with fs and terminal requests, permission allow / deny / cancel, cancel
 * mid-turn) → close → list → load (replay) → resume → set_mode / set_config_option (valid and invalid)
 * → fork (source unchanged) → load of both → close → resume (persisted controls) → delete. It asserts
 * nothing: it returns a {@link LifecycleTranscript} of what each request got back and of every message
 * the agent sent meanwhile, exactly as it arrived on the wire, for the caller to check.
 *
 * The client must be built with a {@link LifecycleObserver}: `install` it on the client app (it answers
 * permission, fs and terminal requests) and connect the app through `observer.wrap(stream)` (it records
 * the wire in both directions):
 *
 * ```ts
 * const observer = new LifecycleObserver();
 * const connection = observer.install(acp.client({ name: "me" })).connect(observer.wrap(stream));
 * const transcript = await runLifecycle(connection.agent, { observer, cwd: "/abs/project" });
 * ```
 *
 * The observer's client is deterministic: files live in memory ({@link LifecycleObserver.files}; a
 * missing file is -32002), and a terminal "runs" `command args…` by printing the command line and
 * exiting 0 — 1 for the command `false`; the command `sleep` never exits until `terminal/kill` or
 * `terminal/release` (then: signal `SIGKILL`).
 */
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";

/** One JSON-RPC message on the client's side of the wire. */
export interface WireEvent {
  /** `in`: from the agent (or the chain in front of it); `out`: sent by the client. */
  direction: "in" | "out";
  message: Record<string, unknown>;
}

/** Answers a `session/request_permission`. */
export type PermissionResponder = (
  request: acp.RequestPermissionRequest,
  agent: acp.ClientContext,
) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;

/** Selects the first option of the given kind prefix (`allow` or `reject`); `cancelled` if there is none. */
const choose =
  (kind: "allow" | "reject"): PermissionResponder =>
  (request) => {
    const option = request.options.find((o) => o.kind.startsWith(kind));
    return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : { outcome: { outcome: "cancelled" } };
  };

/** What the spec asks of a client that cancels while asked: `session/cancel`, then answer `cancelled`. */
const cancelTurn: PermissionResponder = async (request, agent) => {
  await agent.notify(acp.methods.agent.session.cancel, { sessionId: request.sessionId });
  return { outcome: { outcome: "cancelled" } };
};

/** The client side of a lifecycle run: answers the agent's requests and records the wire. */
export class LifecycleObserver {
  /** Every message in both directions, in order. */
  readonly wire: WireEvent[] = [];
  /** The client's files (absolute path → text), read and written by `fs/*`. */
  readonly files = new Map<string, string>();
  /** How `session/request_permission` is answered (the driver sets it per step). */
  permission: PermissionResponder = choose("allow");
  private terminals = new Map<string, FakeTerminal>();
  private terminalCount = 0;
  private listeners = new Set<() => void>();

  /** Records every message of `stream` in {@link wire}. */
  wrap(stream: acp.Stream): acp.Stream {
    const record = (direction: "in" | "out") =>
      new TransformStream<acp.AnyMessage, acp.AnyMessage>({
        transform: (message, controller) => {
          this.wire.push({ direction, message: message as unknown as Record<string, unknown> });
          for (const listener of this.listeners) listener();
          controller.enqueue(message);
        },
      });
    const outgoing = record("out");
    void outgoing.readable.pipeTo(stream.writable).catch(() => {});
    return { readable: stream.readable.pipeThrough(record("in")), writable: outgoing.writable };
  }

  /** Registers the client's request handlers on `app`. */
  install(app: acp.ClientApp): acp.ClientApp {
    return app
      .onRequest(acp.methods.client.session.requestPermission, ({ params, agent }) => this.permission(params, agent))
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        const text = this.files.get(params.path);
        if (text === undefined) throw acp.RequestError.resourceNotFound(params.path);
        return { content: text };
      })
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        this.files.set(params.path, params.content);
        return {};
      })
      .onRequest(acp.methods.client.terminal.create, ({ params }) => {
        const terminalId = `term-${++this.terminalCount}`;
        this.terminals.set(terminalId, new FakeTerminal(params.command, params.args ?? []));
        return { terminalId };
      })
      .onRequest(acp.methods.client.terminal.waitForExit, ({ params }) => this.terminal(params.terminalId).exited)
      .onRequest(acp.methods.client.terminal.output, ({ params }) => {
        const terminal = this.terminal(params.terminalId);
        return { output: terminal.output, truncated: false, ...(terminal.exitStatus ? { exitStatus: terminal.exitStatus } : {}) };
      })
      .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
        this.terminal(params.terminalId).kill();
        return {};
      })
      .onRequest(acp.methods.client.terminal.release, ({ params }) => {
        this.terminal(params.terminalId).kill();
        this.terminals.delete(params.terminalId);
        return {};
      });
  }

  private terminal(terminalId: string): FakeTerminal {
    const terminal = this.terminals.get(terminalId);
    if (!terminal) throw acp.RequestError.invalidParams({ terminalId }, "unknown or released terminal");
    return terminal;
  }

  /** Resolves with the index of the first wire event from `from` on that matches, or rejects after `timeoutMs`. */
  waitFor(predicate: (event: WireEvent) => boolean, from: number, timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        for (let i = from; i < this.wire.length; i++) {
          if (predicate(this.wire[i])) {
            resolve(i);
            return true;
          }
        }
        return false;
      };
      if (check()) return;
      const listener = () => {
        if (check()) done();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting on the wire`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      this.listeners.add(listener);
    });
  }
}

/** A terminal of the observer's client (see {@link LifecycleObserver}). */
class FakeTerminal {
  readonly output: string;
  exitStatus: acp.TerminalExitStatus | undefined;
  readonly exited: Promise<acp.TerminalExitStatus>;
  private exit!: (status: acp.TerminalExitStatus) => void;

  constructor(
    readonly command: string,
    readonly args: string[],
  ) {
    this.output = `${[command, ...args].join(" ")}\n`;
    this.exited = new Promise((resolve) => (this.exit = resolve));
    if (command !== "sleep") this.finish({ exitCode: command === "false" ? 1 : 0 });
  }

  kill(): void {
    this.finish({ exitCode: null, signal: "SIGKILL" });
  }

  private finish(status: acp.TerminalExitStatus): void {
    if (this.exitStatus) return;
    this.exitStatus = status;
    this.exit(status);
  }
}

/** One request of the lifecycle and what the client saw because of it. */
export interface LifecycleStep {
  name: string;
  method: string;
  params: unknown;
  /** The answer's `result`, raw (`undefined` if it was an error). */
  result?: unknown;
  /** The answer's `error`, raw. */
  error?: { code: number; message: string; data?: unknown };
  /** `session/update` params that arrived while the request was pending, in order, raw. */
  updates: acp.SessionNotification[];
  /** `session/update` params that arrived after the answer, before the next request's answer could. */
  after: acp.SessionNotification[];
  /** Requests the agent made while the request was pending, with the client's answers (raw). */
  clientRequests: Array<{ method: string; params: unknown; result?: unknown; error?: unknown }>;
  /** Every message that arrived from the agent while the request was pending (updates and requests). */
  incoming: Array<Record<string, unknown>>;
}

export interface LifecycleTranscript {
  /** The session created by `new`. */
  sessionId: string;
  /** The session created by `fork` (empty if the fork failed). */
  forkId: string;
  steps: LifecycleStep[];
  /** Every message of the run, both directions, in order. */
  wire: WireEvent[];
}

export interface LifecycleOptions {
  observer: LifecycleObserver;
  /**
   * The sessions' working directory (absolute). Use a scratch folder: if `clientCapabilities` leave out
   * `fs`, the agent's `read`/`edit` tools use the real disk under it (the content prompt appends a line
   * to `notes.txt` there).
   */
  cwd: string;
  /**
   * Sent in `initialize`. Default: fs read and write, terminal, boolean config options — everything the
   * observer's client implements.
   */
  clientCapabilities?: acp.ClientCapabilities;
  /** Longest wait for the agent (per request), in milliseconds. Default 10000. */
  timeoutMs?: number;
}

/** The step named `name` (the first, if several); throws if the run has none. */
export function findStep(transcript: LifecycleTranscript, name: string): LifecycleStep {
  const step = transcript.steps.find((s) => s.name === name);
  if (!step) throw new Error(`the lifecycle transcript has no step "${name}"`);
  return step;
}

/**
 * The extension request used as a barrier: the agent's answer (normally -32601) means everything the
 * agent sent before it has arrived. Not in `_cordon/`: that namespace is the host's, and a proxy built
 * with the SDK answers such a request itself, before it could reach the agent.
 */
const BARRIER_METHOD = "_lifecycle/barrier";

/** Small deterministic media for the content prompt. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString("base64");
const WAV = Buffer.from("RIFF\0\0\0\0WAVE").toString("base64");

/** The prompt of the `prompt` step: every command kind and every content block type. */
export function contentPrompt(cwd: string): acp.ContentBlock[] {
  return [
    {
      type: "text",
      text: [
        "title Lifecycle of a session",
        "hello lifecycle",
        "think weighing the options",
        "tool list files",
        "read notes.txt",
        "edit notes.txt second line",
        "run echo hello",
        "mirror",
      ].join("\n"),
    },
    { type: "resource_link", name: "notes.txt", uri: `file://${join(cwd, "notes.txt")}`, mimeType: "text/plain" },
    { type: "resource", resource: { uri: `file://${join(cwd, "spec.md")}`, mimeType: "text/markdown", text: "# Spec\nverbatim text\n" } },
    {
      type: "resource",
      resource: {
        uri: `file://${join(cwd, "data.bin")}`,
        mimeType: "application/octet-stream",
        blob: Buffer.from([0, 1, 2, 255]).toString("base64"),
      },
    },
    { type: "image", mimeType: "image/png", data: PNG, _meta: { "cordon.dev/test": "image" } },
    { type: "audio", mimeType: "audio/wav", data: WAV },
    { type: "text", text: "done" },
  ];
}

/**
 * Runs the lifecycle on `agent` (a connected client built with `options.observer`) and returns what
 * happened. Requests that fail are recorded, not thrown; only a dead connection or a timeout throws.
 */
export async function runLifecycle(agent: acp.ClientContext, options: LifecycleOptions): Promise<LifecycleTranscript> {
  const { observer, cwd } = options;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const steps: LifecycleStep[] = [];
  const transcript: LifecycleTranscript = { sessionId: "", forkId: "", steps, wire: observer.wire };
  const clientCapabilities = options.clientCapabilities ?? {
    fs: { readTextFile: true, writeTextFile: true },
    terminal: true,
    session: { configOptions: { boolean: {} } },
  };
  observer.files.set(join(cwd, "notes.txt"), "first line\n");

  const isUpdateFor = (sessionId: string) => (e: WireEvent) =>
    e.direction === "in" &&
    e.message.method === acp.methods.client.session.update &&
    (e.message.params as { sessionId?: unknown })?.sessionId === sessionId;

  /** Sends one request, waits for its answer and a barrier, and records the step. */
  async function exchange(
    name: string,
    method: string,
    params: unknown,
    whilePending?: (from: number) => Promise<void>,
  ): Promise<LifecycleStep> {
    const from = observer.wire.length;
    const answered = agent.request(method, params).catch(() => undefined);
    const sent = await observer.waitFor((e) => e.direction === "out" && e.message.method === method && "id" in e.message, from, timeoutMs);
    const id = observer.wire[sent].message.id;
    if (whilePending) await whilePending(sent + 1);
    const answer = await observer.waitFor(
      (e) => e.direction === "in" && !("method" in e.message) && e.message.id === id,
      sent + 1,
      timeoutMs,
    );
    await answered;
    // A barrier: once it is answered, everything the agent sent before that answer has arrived.
    const barrierFrom = observer.wire.length;
    const barrierDone = agent.request(BARRIER_METHOD, {}).catch(() => undefined);
    const barrierSent = await observer.waitFor((e) => e.direction === "out" && e.message.method === BARRIER_METHOD, barrierFrom, timeoutMs);
    const barrierId = observer.wire[barrierSent].message.id;
    const barrierAnswer = await observer.waitFor(
      (e) => e.direction === "in" && !("method" in e.message) && e.message.id === barrierId,
      barrierSent + 1,
      timeoutMs,
    );
    await barrierDone;

    const response = observer.wire[answer].message as { result?: unknown; error?: LifecycleStep["error"] };
    const incoming = observer.wire
      .slice(sent + 1, answer)
      .filter((e) => e.direction === "in")
      .map((e) => e.message);
    const updatesIn = (events: WireEvent[]) =>
      events
        .filter((e) => e.direction === "in" && e.message.method === acp.methods.client.session.update)
        .map((e) => e.message.params as acp.SessionNotification);
    const clientRequests: LifecycleStep["clientRequests"] = [];
    for (let i = sent + 1; i < answer; i++) {
      const m = observer.wire[i].message;
      if (observer.wire[i].direction !== "in" || typeof m.method !== "string" || !("id" in m)) continue;
      // The client's answer follows its request (ids of the agent's requests are its own id space).
      const reply = observer.wire.slice(i + 1).find((e) => e.direction === "out" && !("method" in e.message) && e.message.id === m.id)
        ?.message as { result?: unknown; error?: unknown } | undefined;
      clientRequests.push({
        method: m.method,
        params: m.params,
        ...(reply && "result" in reply ? { result: reply.result } : {}),
        ...(reply && "error" in reply ? { error: reply.error } : {}),
      });
    }
    const step: LifecycleStep = {
      name,
      method,
      params,
      ...("result" in response ? { result: response.result } : {}),
      ...("error" in response ? { error: response.error } : {}),
      updates: updatesIn(observer.wire.slice(sent + 1, answer)),
      after: updatesIn(observer.wire.slice(answer + 1, barrierAnswer)),
      clientRequests,
      incoming,
    };
    steps.push(step);
    return step;
  }

  const prompt = (name: string, sessionId: string, blocks: acp.ContentBlock[] | string, whilePending?: (from: number) => Promise<void>) =>
    exchange(
      name,
      acp.methods.agent.session.prompt,
      { sessionId, prompt: typeof blocks === "string" ? [{ type: "text", text: blocks }] : blocks },
      whilePending,
    );

  await exchange("initialize", acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities,
    clientInfo: { name: "cordon-lifecycle", version: "1.0.0" },
  });

  const created = await exchange("new", acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const s = (created.result as { sessionId?: string } | undefined)?.sessionId ?? "";
  transcript.sessionId = s;

  // Turns: content and tools, permission allow / deny / cancel, cancel mid-turn.
  observer.permission = choose("allow");
  await prompt("prompt", s, contentPrompt(cwd));
  await prompt("permission allow", s, "permission deploy to staging");
  observer.permission = choose("reject");
  await prompt("permission deny", s, "permission deploy to production\nafter the refusal");
  observer.permission = cancelTurn;
  await prompt("permission cancel", s, "permission drop the database\nnever reached");
  observer.permission = choose("allow");
  await prompt("cancel", s, "before waiting\nwait\nnever reached", async (from) => {
    // Cancel once the turn is under way (its first update), as a user would.
    await observer.waitFor(isUpdateFor(s), from, timeoutMs).catch(() => undefined);
    await agent.notify(acp.methods.agent.session.cancel, { sessionId: s });
  });

  await exchange("close", acp.methods.agent.session.close, { sessionId: s });
  await prompt("prompt after close", s, "anyone there?");

  // List every page of this cwd's sessions.
  let cursor: string | undefined;
  for (let page = 1; page <= 20; page++) {
    const listed = await exchange(page === 1 ? "list" : `list ${page}`, acp.methods.agent.session.list, {
      cwd,
      ...(cursor ? { cursor } : {}),
    });
    cursor = (listed.result as { nextCursor?: string } | undefined)?.nextCursor ?? undefined;
    if (!cursor) break;
  }

  await exchange("load", acp.methods.agent.session.load, { sessionId: s, cwd, mcpServers: [] });
  await exchange("resume", acp.methods.agent.session.resume, { sessionId: s, cwd, mcpServers: [] });

  await exchange("set_mode", acp.methods.agent.session.setMode, { sessionId: s, modeId: "code" });
  await exchange("set_mode invalid", acp.methods.agent.session.setMode, { sessionId: s, modeId: "yolo" });
  await exchange("set_config_option", acp.methods.agent.session.setConfigOption, { sessionId: s, configId: "verbosity", value: "high" });
  await exchange("set_config_option invalid", acp.methods.agent.session.setConfigOption, {
    sessionId: s,
    configId: "verbosity",
    value: "deafening",
  });
  await exchange("set_config_option unknown", acp.methods.agent.session.setConfigOption, { sessionId: s, configId: "model", value: "gpt" });
  await exchange("set_config_option boolean", acp.methods.agent.session.setConfigOption, {
    sessionId: s,
    configId: "tool_calls_enabled",
    type: "boolean",
    value: false,
  });
  await prompt("prompt tools off", s, "tool list files\nstill talking");

  // Fork: the fork gets a copy; the source does not change.
  await exchange("load before fork", acp.methods.agent.session.load, { sessionId: s, cwd, mcpServers: [] });
  const forked = await exchange("fork", "session/fork" /* unstable: not among the stable SDK's method names */, {
    sessionId: s,
    cwd,
    mcpServers: [],
  });
  const f = (forked.result as { sessionId?: string } | undefined)?.sessionId ?? "";
  transcript.forkId = f;
  await prompt("prompt fork", f, "only in the fork");
  await exchange("load source", acp.methods.agent.session.load, { sessionId: s, cwd, mcpServers: [] });
  await exchange("load fork", acp.methods.agent.session.load, { sessionId: f, cwd, mcpServers: [] });

  // Controls persist: close, then resume.
  await exchange("close fork", acp.methods.agent.session.close, { sessionId: f });
  await exchange("close source", acp.methods.agent.session.close, { sessionId: s });
  await exchange("resume source", acp.methods.agent.session.resume, { sessionId: s, cwd, mcpServers: [] });

  // Errors: wrong cwd, unknown session.
  await exchange("load wrong cwd", acp.methods.agent.session.load, { sessionId: s, cwd: join(cwd, "elsewhere"), mcpServers: [] });
  await exchange("load unknown", acp.methods.agent.session.load, {
    sessionId: "sess-00000000-0000-4000-8000-000000000000",
    cwd,
    mcpServers: [],
  });

  // Delete: both, then once more (already gone), then try to use it.
  await exchange("delete fork", acp.methods.agent.session.delete, { sessionId: f });
  await exchange("delete", acp.methods.agent.session.delete, { sessionId: s });
  await exchange("delete again", acp.methods.agent.session.delete, { sessionId: s });
  await exchange("load deleted", acp.methods.agent.session.load, { sessionId: s, cwd, mcpServers: [] });
  await exchange("list after delete", acp.methods.agent.session.list, { cwd });

  return transcript;
}
