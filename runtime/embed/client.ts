/**
 * The connection API: {@link connect} starts a chain in this process in front of an agent,
 * initializes it, and returns a {@link Connection} to drive sessions with.
 *
 * ```ts
 * const cordon = await connect({ chain: { proxies: [{ wasm: "proxies/dist/redact.wasm" }] }, agent: ["my-agent"] });
 * const session = await cordon.newSession({ cwd: process.cwd() });
 * for await (const event of session.prompt("hello")) if (event.type === "text") process.stderr.write(event.text);
 * await cordon.close();
 * ```
 *
 * The client speaks raw JSON-RPC to the chain (wire types from `@agentclientprotocol/sdk`): the
 * SDK's connection validates every `session/update` against the schema it ships and rejects kinds
 * it does not know, while this API must hand those to the application as `raw` events.
 */
import { isAbsolute } from "node:path";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { throttledWarn } from "../mcp/endpoints.js";
import { ErrorCodes, type JsonRpcMessage } from "../protocol/json-rpc.js";
import {
  acceptsMcpTransport,
  clientCapabilities,
  type FileSystemHandlers,
  offerMcpServers,
  requireSessionMethod,
  supports,
  type TerminalHandlers,
} from "./capabilities.js";
import { type ChainExit, type ChainOptions, type RunningChain, startChain } from "./chain.js";
import { AbortError, AgentError, ChainStartError, ConnectionClosedError, InvalidRequestError } from "./errors.js";
import { OrphanUpdates } from "./orphan-updates.js";
import { decide, type PermissionPolicy } from "./permissions.js";
import { type PromptEvent, type PromptRun, ToolCallTracker, toEvent } from "./prompt-stream.js";
import { ReadPressure } from "./read-pressure.js";
import { RequestError } from "./request-error.js";
import { type RequestOptions, RpcEndpoint } from "./rpc.js";
import { Session, type SessionHost } from "./session.js";

/** Everything {@link connect} takes: the chain (see {@link ChainOptions}) and the client's side of the contract. */
export interface ConnectOptions extends ChainOptions {
  /** Who the client is (`initialize.clientInfo`; default `cordon-embed`). */
  clientInfo?: acp.Implementation;
  /**
   * Answers the agent's permission requests: `"allow"`, `"deny"` (the default), or a callback.
   * Cancel maps to deny (see `permissions.ts`).
   */
  permissions?: PermissionPolicy;
  /** File access lent to the agent; `fs.readTextFile` / `fs.writeTextFile` are declared only for the methods given. */
  fs?: FileSystemHandlers;
  /** Terminals run for the agent; `terminal` is declared only when given. */
  terminal?: TerminalHandlers;
  /** Notifications other than `session/update` (`_cordon/notice`, extensions). */
  onNotification?(method: string, params: unknown): void;
  /** Requests the API does not handle itself (extension methods, `elicitation/create`); default: method not found. */
  onRequest?(method: string, params: unknown, signal: AbortSignal): unknown;
  /**
   * Updates for sessions this connection has no {@link Session} for (e.g. one set up by another
   * client of the agent), as they come. Nothing is kept for such sessions, so a `tool_call_update`
   * event's `call` shows only what that update says. Without this handler they are dropped (with a
   * throttled warning). See `orphan-updates.ts`.
   */
  onUpdate?(sessionId: string, event: PromptEvent): void;
  /** Aborting it closes the connection (during startup, `connect` rejects with {@link AbortError}). */
  signal?: AbortSignal;
  /** How long `close()` lets running turns end after cancelling them before the chain is shut down (default 2000 ms). */
  closeGraceMs?: number;
}

/** Options for setting up a session. */
export interface SessionOptions {
  /** The session's working directory, absolute (default: the current directory; for a fork, the source session's). */
  cwd?: string;
  /** MCP servers for the agent; only those over transports the agent accepts are offered (stdio always). */
  mcpServers?: acp.McpServer[];
  /** What to do with a server whose transport the agent does not accept: leave it out (default) or throw `UnsupportedError`. */
  onUnsupportedMcp?: "omit" | "error";
  /** More workspace roots (needs the agent's `sessionCapabilities.additionalDirectories`). */
  additionalDirectories?: string[];
  /** Passed through as the request's `_meta`. */
  _meta?: Record<string, unknown>;
  signal?: AbortSignal;
}

/** What the agent supports, as the chain presents it (proxies and the MCP bridge may change what the agent itself says). */
export interface Supports {
  loadSession: boolean;
  listSessions: boolean;
  resumeSession: boolean;
  forkSession: boolean;
  closeSession: boolean;
  deleteSession: boolean;
  additionalDirectories: boolean;
  prompt: { image: boolean; audio: boolean; embeddedContext: boolean };
  mcp: { stdio: boolean; http: boolean; sse: boolean; acp: boolean };
}

/**
 * Starts the chain in this process (`ChainOptions.chain`, in front of its agent), initializes it,
 * and returns the connection. Rejects with `ConfigError` for a config that does not validate,
 * {@link ChainStartError} when a component cannot start (nothing is left running), and
 * {@link AbortError} if `signal` fires first.
 */
export async function connect(options: ConnectOptions): Promise<Connection> {
  if (options.signal?.aborted) throw new AbortError("connect was aborted before the chain started");
  let connection!: Connection;
  const inbox: JsonRpcMessage[] = [];
  const chain = await startChain({ ...options, onMessage: (m) => (connection ? connection.receive(m) : inbox.push(m)) });
  connection = new Connection(chain, options);
  for (const m of inbox.splice(0)) connection.receive(m);
  try {
    await connection.initialize(options.signal);
  } catch (error) {
    await connection.close();
    if (error instanceof AgentError && startFailed(error)) throw new ChainStartError(error.rpcMessage, error.data);
    throw error;
  }
  return connection;
}

/**
 * Whether the error answering `initialize` means the chain never started: a component failed to
 * start (the conductor answers the first request so, conductor.ts `fromClientCall`), or the agent
 * exited or timed out before answering (`data.cordon.component` is `agent`).
 */
function startFailed(error: AgentError): boolean {
  if (error.rpcMessage.startsWith("Cordon could not start the chain")) return true;
  const cordon = (error.data as { cordon?: { component?: unknown } } | undefined)?.cordon;
  return cordon?.component === "agent";
}

/** A client connection to an agent through an in-process Cordon chain. Create it with {@link connect}. */
export class Connection implements SessionHost {
  private readonly rpc: RpcEndpoint;
  private readonly sessions = new Map<string, Session>();
  private readonly orphans: OrphanUpdates;
  /** @internal Backpressure from the prompt runs' readers toward the chain. */
  readonly readPressure: ReadPressure<PromptRun>;
  private init: acp.InitializeResponse | null = null;
  private closing: Promise<ChainExit> | null = null;
  private readonly policy: PermissionPolicy;
  /** Resolves when the chain has ended, whoever ended it: `code` 0 after {@link Connection.close}, non-zero if the agent died. */
  readonly closed: Promise<ChainExit>;

  /** @internal Use {@link connect}. */
  constructor(
    private readonly chain: RunningChain,
    private readonly options: ConnectOptions,
  ) {
    this.policy = options.permissions ?? "deny";
    // The chain is paused for a reader that is behind only while the application awaits nothing
    // else from it: a request of its own, or a turn other than the behind runs' (else: deadlock).
    this.readPressure = new ReadPressure<PromptRun>(
      (congested) => chain.congested(congested),
      (behind) => {
        const { prompts, others } = this.rpc.pendingCounts();
        let ownPrompts = 0;
        for (const run of behind) if (!run.done) ownPrompts++;
        return others > 0 || prompts > ownPrompts;
      },
    );
    const onUpdate = options.onUpdate;
    this.orphans = new OrphanUpdates(
      onUpdate &&
        ((sessionId, update) => {
          try {
            onUpdate.call(options, sessionId, toEvent(update, new ToolCallTracker()));
          } catch {
            // The application's handler must not break the connection.
          }
        }),
      throttledWarn(chain.log),
    );
    this.rpc = new RpcEndpoint(
      (m) => chain.write(m),
      {
        request: (method, params, signal) => this.handleRequest(method, params, signal),
        notification: (method, params) => this.handleNotification(method, params),
      },
      () => this.readPressure.recheck(),
    );
    this.closed = chain.exited.then((exit) => {
      this.rpc.close(
        new ConnectionClosedError(
          exit.code === 0 ? "the connection is closed" : `the chain ended (code ${exit.code}): the agent exited or could not start`,
        ),
      );
      for (const session of this.sessions.values()) session.markClosed();
      return exit;
    });
    options.signal?.addEventListener("abort", () => void this.close(), { once: true });
  }

  /** @internal */
  async initialize(signal?: AbortSignal): Promise<void> {
    this.init = await this.rpc.request<acp.InitializeResponse>(
      "initialize",
      {
        protocolVersion: 1,
        clientCapabilities: clientCapabilities(this.options.fs, this.options.terminal),
        clientInfo: this.options.clientInfo ?? { name: "cordon-embed", version: "0.1.0" },
      } satisfies acp.InitializeRequest,
      { signal },
    );
  }

  /** The chain's whole `initialize` answer. */
  get initializeResponse(): acp.InitializeResponse {
    return this.init!;
  }

  /** The agent's capabilities as the chain presents them. */
  get agentCapabilities(): acp.AgentCapabilities {
    return this.init?.agentCapabilities ?? {};
  }

  /** Who the agent says it is. */
  get agentInfo(): acp.Implementation | null | undefined {
    return this.init?.agentInfo;
  }

  /** The ACP protocol version the agent chose. */
  get protocolVersion(): number | undefined {
    return this.init?.protocolVersion;
  }

  /** The authentication methods the agent offers (see {@link Connection.authenticate}). */
  get authMethods(): acp.AuthMethod[] {
    return this.init?.authMethods ?? [];
  }

  /** The chain's components, client side first. */
  get components(): string[] {
    return this.chain.components;
  }

  /** The agent's process id (its process group is ended on close). */
  get agentPid(): number | undefined {
    return this.chain.agentPid;
  }

  /** What the agent supports, at a glance; the session methods throw `UnsupportedError` for what is false here. */
  get supports(): Supports {
    const caps = this.agentCapabilities;
    const prompt = caps.promptCapabilities ?? {};
    return {
      loadSession: supports(caps, "loadSession"),
      listSessions: supports(caps, "listSessions"),
      resumeSession: supports(caps, "resumeSession"),
      forkSession: supports(caps, "forkSession"),
      closeSession: supports(caps, "closeSession"),
      deleteSession: supports(caps, "deleteSession"),
      additionalDirectories: supports(caps, "additionalDirectories"),
      prompt: { image: prompt.image === true, audio: prompt.audio === true, embeddedContext: prompt.embeddedContext === true },
      mcp: {
        stdio: true,
        http: acceptsMcpTransport(caps, "http"),
        sse: acceptsMcpTransport(caps, "sse"),
        acp: acceptsMcpTransport(caps, "acp"),
      },
    };
  }

  /** A session this connection set up (or loaded, resumed, forked), by id. */
  session(sessionId: string): Session | undefined {
    return this.sessions.get(sessionId);
  }

  /** Authenticates with one of {@link Connection.authMethods}. */
  async authenticate(methodId: string, options: RequestOptions = {}): Promise<void> {
    this.ensureOpen();
    if (!this.authMethods.some((m) => m.id === methodId)) {
      throw new InvalidRequestError(
        `unknown authentication method ${JSON.stringify(methodId)}: the agent offers ${this.authMethods.map((m) => JSON.stringify(m.id)).join(", ") || "none"}; nothing was sent`,
      );
    }
    await this.rpc.request("authenticate", { methodId }, options);
  }

  /** Starts a new session (`session/new`). */
  async newSession(options: SessionOptions = {}): Promise<Session> {
    const setup = this.setupParams(options, process.cwd());
    const ended = this.orphans.setupStarted();
    try {
      return await this.rpc.request<acp.NewSessionResponse, Session>("session/new", setup.params, {
        signal: options.signal,
        onResult: (result) =>
          this.register(
            new Session(this, { ...setup.session, sessionId: result.sessionId, modes: result.modes, configOptions: result.configOptions }),
            result,
            ended,
          ),
      });
    } finally {
      ended();
    }
  }

  /**
   * Loads a stored session (`session/load`; needs `agentCapabilities.loadSession`). The agent
   * replays the conversation before it answers; the replay is in the session's `history`.
   */
  async loadSession(sessionId: string, options: SessionOptions = {}): Promise<Session> {
    requireSessionMethod(this.agentCapabilities, "loadSession");
    return this.reopen("session/load", sessionId, options);
  }

  /** Resumes a stored session without replay (`session/resume`; needs `sessionCapabilities.resume`). */
  async resumeSession(sessionId: string, options: SessionOptions = {}): Promise<Session> {
    requireSessionMethod(this.agentCapabilities, "resumeSession");
    return this.reopen("session/resume", sessionId, options);
  }

  /**
   * Forks a session into a new one with a copy of its history (`session/fork`; needs
   * `sessionCapabilities.fork`). The source is unchanged.
   */
  async forkSession(sessionId: string, options: SessionOptions = {}): Promise<Session> {
    requireSessionMethod(this.agentCapabilities, "forkSession");
    const setup = this.setupParams(options, this.sessions.get(sessionId)?.cwd ?? process.cwd());
    const ended = this.orphans.setupStarted();
    try {
      return await this.rpc.request<acp.ForkSessionResponse, Session>(
        "session/fork",
        { ...setup.params, sessionId },
        {
          signal: options.signal,
          onResult: (result) =>
            this.register(
              new Session(this, {
                ...setup.session,
                sessionId: result.sessionId,
                modes: result.modes,
                configOptions: result.configOptions,
              }),
              result,
              ended,
            ),
        },
      );
    } finally {
      ended();
    }
  }

  /** One page of the agent's stored sessions (`session/list`; needs `sessionCapabilities.list`). */
  async listSessions(options: { cwd?: string; cursor?: string; signal?: AbortSignal } = {}): Promise<acp.ListSessionsResponse> {
    requireSessionMethod(this.agentCapabilities, "listSessions");
    if (options.cwd !== undefined && !isAbsolute(options.cwd))
      throw new InvalidRequestError(`cwd must be an absolute path, not ${JSON.stringify(options.cwd)}; nothing was sent`);
    this.ensureOpen();
    const params: acp.ListSessionsRequest = {};
    if (options.cwd !== undefined) params.cwd = options.cwd;
    if (options.cursor !== undefined) params.cursor = options.cursor;
    return this.rpc.request("session/list", params, { signal: options.signal });
  }

  /** Every stored session, page after page (`session/list` with the cursors the agent gives). */
  async *allSessions(options: { cwd?: string; signal?: AbortSignal } = {}): AsyncIterable<acp.SessionInfo> {
    let cursor: string | undefined;
    do {
      const page = await this.listSessions({ ...options, cursor });
      yield* page.sessions;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /** Closes a session on the agent (`session/close`; needs `sessionCapabilities.close`). It stays stored; load or resume it to use it again. */
  async closeSession(sessionId: string, options: RequestOptions = {}): Promise<void> {
    requireSessionMethod(this.agentCapabilities, "closeSession");
    this.ensureOpen();
    await this.rpc.request("session/close", { sessionId }, { ...options, onResult: () => this.forget(sessionId) });
  }

  /** Deletes a stored session (`session/delete`; needs `sessionCapabilities.delete`). */
  async deleteSession(sessionId: string, options: RequestOptions = {}): Promise<void> {
    requireSessionMethod(this.agentCapabilities, "deleteSession");
    this.ensureOpen();
    await this.rpc.request("session/delete", { sessionId }, { ...options, onResult: () => this.forget(sessionId) });
  }

  /**
   * Sends any request through the chain, unchecked — for extension methods (`_vendor/…`). The
   * typed methods above check capabilities first; this does not.
   */
  request<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): Promise<T> {
    this.ensureOpen();
    return this.rpc.request<T>(method, params, options);
  }

  /** Sends any notification through the chain, unchecked (extension notifications). */
  notify(method: string, params?: unknown): void {
    this.ensureOpen();
    this.rpc.notify(method, params);
  }

  /**
   * Shuts down cleanly: running turns are cancelled and given `closeGraceMs` to end, then the
   * client side closes (as an editor closes the agent's stdin), every proxy stops and the agent's
   * process group is ended (EOF, then SIGTERM, then SIGKILL). Resolves with how the chain ended;
   * calling it again returns the same promise.
   */
  close(): Promise<ChainExit> {
    if (this.closing) return this.closing;
    this.closing = (async () => {
      this.readPressure.close(); // running turns must be able to end
      const running = [...this.sessions.values()].flatMap((s) => (s.currentRun ? [{ session: s, run: s.currentRun }] : []));
      if (!this.rpc.closed && running.length > 0) {
        for (const { session } of running) session.cancel();
        const grace = new Promise<void>((resolve) => setTimeout(resolve, this.options.closeGraceMs ?? 2000).unref());
        await Promise.race([Promise.allSettled(running.map(({ run }) => run.result)), grace, this.closed]);
      }
      this.rpc.close(new ConnectionClosedError("the connection was closed"));
      return this.chain.close();
    })();
    return this.closing;
  }

  // ---- SessionHost ---------------------------------------------------------------------

  /** @internal */
  ensureOpen(): void {
    if (this.closing || this.rpc.closed)
      throw new ConnectionClosedError(this.closing ? "the connection was closed" : "the chain has ended");
  }

  /** @internal */
  call<R, T = R>(method: string, params: unknown, options?: RequestOptions & { onResult?: (result: R) => T }): Promise<T> {
    return this.rpc.request<R, T>(method, params, options);
  }

  // ---- internals -----------------------------------------------------------------------

  private setupParams(options: SessionOptions, defaultCwd: string) {
    this.ensureOpen();
    const cwd = options.cwd ?? defaultCwd;
    if (!isAbsolute(cwd)) throw new InvalidRequestError(`cwd must be an absolute path, not ${JSON.stringify(cwd)}; nothing was sent`);
    const params: Record<string, unknown> = { cwd };
    if (options.additionalDirectories !== undefined) {
      requireSessionMethod(this.agentCapabilities, "additionalDirectories");
      const relative = options.additionalDirectories.find((d) => !isAbsolute(d));
      if (relative !== undefined)
        throw new InvalidRequestError(`additional directories must be absolute paths, not ${JSON.stringify(relative)}; nothing was sent`);
      params.additionalDirectories = options.additionalDirectories;
    }
    const { offered, omitted } = offerMcpServers(options.mcpServers ?? [], this.agentCapabilities, options.onUnsupportedMcp ?? "omit");
    params.mcpServers = offered;
    if (options._meta) params._meta = options._meta;
    return { params, session: { cwd, mcpServers: offered, omittedMcpServers: omitted } };
  }

  /** load / resume: the session exists before the request, so the replay that precedes the answer lands in it. */
  private async reopen(method: "session/load" | "session/resume", sessionId: string, options: SessionOptions): Promise<Session> {
    const setup = this.setupParams(options, this.sessions.get(sessionId)?.cwd ?? process.cwd());
    const previous = this.sessions.get(sessionId);
    const session = new Session(this, { ...setup.session, sessionId });
    this.sessions.set(sessionId, session);
    try {
      return await this.rpc.request<acp.LoadSessionResponse | null, Session>(
        method,
        { ...setup.params, sessionId },
        {
          signal: options.signal,
          onResult: (result) => this.register(session, result),
        },
      );
    } catch (error) {
      if (this.sessions.get(sessionId) === session) {
        if (previous) this.sessions.set(sessionId, previous);
        else this.sessions.delete(sessionId);
      }
      throw error;
    }
  }

  /**
   * A setup was answered: the session is known from now on. For `session/new` and `fork`, the
   * updates the agent sent for it before the answer (held as orphans) start its history, and the
   * setup stops holding orphans (`ended`) before any later message is looked at.
   */
  private register(
    session: Session,
    result: { modes?: acp.SessionModeState | null; configOptions?: acp.SessionConfigOption[] | null } | null,
    ended?: () => void,
  ): Session {
    const previous = this.sessions.get(session.id);
    if (previous && previous !== session) previous.markClosed();
    this.sessions.set(session.id, session);
    for (const update of this.orphans.claim(session.id)) session.update(update);
    ended?.();
    session.setupAnswered(result);
    return session;
  }

  /** @internal Orphan updates held now, and setups pending (for tests and diagnostics). */
  get orphanStats(): { pendingSetups: number; updates: number; bytes: number } {
    return this.orphans.stats;
  }

  private forget(sessionId: string): void {
    this.sessions.get(sessionId)?.markClosed();
    this.sessions.delete(sessionId);
  }

  /** @internal A message from the chain. */
  receive(message: JsonRpcMessage): void {
    this.rpc.receive(message);
  }

  private handleNotification(method: string, params: unknown): void {
    if (method !== "session/update") {
      try {
        this.options.onNotification?.(method, params);
      } catch {
        // The application's handler must not break the connection.
      }
      return;
    }
    const p = params as { sessionId?: unknown; update?: unknown } | undefined;
    const sessionId = typeof p?.sessionId === "string" ? p.sessionId : "";
    const session = this.sessions.get(sessionId);
    if (session) return session.update(p?.update);
    this.orphans.receive(sessionId, p?.update);
  }

  private async handleRequest(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    switch (method) {
      case "session/request_permission":
        return this.permission(params as acp.RequestPermissionRequest, signal);
      case "fs/read_text_file":
        return notFoundAsResource(this.lent(this.options.fs?.readTextFile, "fs.readTextFile", method), params);
      case "fs/write_text_file":
        return (await this.lent(this.options.fs?.writeTextFile, "fs.writeTextFile", method)(params)) ?? {};
      case "terminal/create":
        return this.lent(this.options.terminal?.create, "terminal", method)(params);
      case "terminal/output":
        return this.lent(this.options.terminal?.output, "terminal", method)(params);
      case "terminal/wait_for_exit":
        return this.lent(this.options.terminal?.waitForExit, "terminal", method)(params);
      case "terminal/kill":
        return (await this.lent(this.options.terminal?.kill, "terminal", method)(params)) ?? {};
      case "terminal/release":
        return (await this.lent(this.options.terminal?.release, "terminal", method)(params)) ?? {};
      default:
        if (this.options.onRequest) return this.options.onRequest(method, params, signal);
        throw RequestError.methodNotFound(method);
    }
  }

  /** The application's implementation of a client method, or an error saying the client never declared it. */
  private lent<P, R>(fn: ((params: P) => R) | undefined, capability: string, method: string): (params: unknown) => R {
    const owner = capability === "terminal" ? this.options.terminal : this.options.fs;
    if (!fn)
      throw new RequestError(ErrorCodes.methodNotFound, `Method not found: ${method} (the client did not declare ${capability})`, {
        method,
      });
    return (params) => fn.call(owner, params as P);
  }

  private async permission(request: acp.RequestPermissionRequest, withdrawn: AbortSignal): Promise<acp.RequestPermissionResponse> {
    const session = this.sessions.get(request?.sessionId);
    const options = Array.isArray(request?.options) ? request.options : [];
    const signal = anySignal([withdrawn, session?.turnSignal]);
    const toolCall = session
      ? session.previewToolCall(request.toolCall)
      : new ToolCallTracker().preview((request?.toolCall ?? {}) as Record<string, unknown>);
    const resolved = await decide(this.policy, { sessionId: request?.sessionId, toolCall, options, raw: request, signal }, (error) =>
      this.chain.log.warn(`the permission callback threw (${(error as Error)?.message ?? error}); answered as deny`),
    );
    session?.emit({
      type: "permission",
      toolCall,
      options,
      outcome: resolved.outcome,
      ...(resolved.optionId ? { optionId: resolved.optionId } : {}),
    });
    return resolved.response;
  }
}

/**
 * Runs an fs read, answering a Node `ENOENT` (what `readFile` throws for a missing file) as ACP's
 * -32002, which agents rely on to tell "no such file" from a failure.
 */
async function notFoundAsResource<R>(read: (params: unknown) => R, params: unknown): Promise<Awaited<R>> {
  try {
    return await read(params);
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code !== "ENOENT") throw error;
    const path = (params as { path?: unknown } | undefined)?.path;
    throw RequestError.resourceNotFound(typeof path === "string" ? path : undefined);
  }
}

/** A signal that fires when any of `signals` does. */
function anySignal(signals: Array<AbortSignal | undefined>): AbortSignal {
  const controller = new AbortController();
  for (const signal of signals) {
    if (!signal) continue;
    if (signal.aborted) {
      controller.abort();
      break;
    }
    signal.addEventListener("abort", () => controller.abort(), { once: true });
  }
  return controller.signal;
}
