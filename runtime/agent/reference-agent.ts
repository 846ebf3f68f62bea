/**
 * # The Cordon reference agent
 *
 * A deterministic, LLM-free ACP v1 agent implementing the session lifecycle of the ADK-Rust ACP server
 * (seed document 000): persistent sessions with load/resume/fork/close/delete/list, modes, config
 * options, slash commands, titles, verbatim content and permission-gated tool calls. `cordon
 * reference-agent` speaks newline-delimited JSON-RPC on stdin/stdout (logs, if any, go to stderr) and
 * exits when stdin closes. It is the agent behind Cordon's demo and a test peer for proxy authors: every
 * behaviour is triggered by the prompt, so what a proxy in front of it changes is visible in what comes
 * back.
 *
 * ## Prompt-command grammar
 *
 * The prompt's blocks are processed in order.
 *
 * - A **text block** is split into lines; blank lines are skipped. Each line is one command: its first
 *   word (case-insensitive, an optional leading `/` allowed, so `/think x` = `think x`) selects the
 *   command and the rest of the line, trimmed, is its argument.
 * - **Any other block** is echoed as a one-line description, as a message chunk:
 *   `echo: [resource_link name=<name> uri=<uri>]`, `echo: [image mimeType=<m> <n> bytes uri=<uri>]`,
 *   `echo: [audio mimeType=<m> <n> bytes]`, `echo: [resource uri=<uri> mimeType=<m> text="<json-quoted,
 *   first 200 chars>"]` or `echo: [resource uri=<uri> mimeType=<m> blob=<n> bytes]` — or, once a `mirror`
 *   line has been seen in the prompt, sent back verbatim: `agent_message_chunk` whose `content` is the
 *   block exactly as received (unknown fields and `_meta` included).
 *
 * Every message or thought chunk the agent composes is one `text` block ending in `\n`. Tool-call ids
 * are `tool-1`, `tool-2`, … per session (a fork continues its source's count). Paths given to `read` and
 * `edit` are resolved against the session's `cwd` and must lie inside it or one of its
 * `additionalDirectories`.
 *
 * | line | what the agent sends |
 * |---|---|
 * | anything that is not a command | `agent_message_chunk` `echo: <line>` |
 * | `echo <text>` | `agent_message_chunk` `echo: <text>` (to echo a line that starts with a command word) |
 * | `think <text>` | `agent_thought_chunk` `<text>` |
 * | `tool <title>` | `tool_call` {toolCallId, title, kind `execute`, status `pending`, rawInput {command: title}}; `tool_call_update` status `in_progress`; `tool_call_update` status `completed`, content [text `ran <title>`], rawOutput {output: `ran <title>`} |
 * | `permission <title>` | the same `tool_call`; then `session/request_permission` {toolCall, options [`allow` (allow_once), `reject` (reject_once)]}; then `agent_message_chunk` `permission <allowed\|rejected\|cancelled>: <title>[ (option <id>)]`; allowed → the two `tool_call_update`s of `tool`; rejected (a reject option, an unknown option, or an error answer) → `tool_call_update` status `failed`, content `not run: permission rejected`, and the turn goes on; cancelled (outcome `cancelled`, or `session/cancel` while waiting) → `tool_call_update` status `failed`, content `not run: turn cancelled`, and the turn ends with `cancelled` |
 * | `read <path>` | `tool_call` {title `Read <path>`, kind `read`, status `pending`, locations [{path}], rawInput {path}} (path absolute); `tool_call_update` `in_progress`; the text is read with `fs/read_text_file` {sessionId, path} if the client advertised `fs.readTextFile`, else from disk (≤ 1 MiB); `tool_call_update` `completed`, content [text <file text>], locations [{path}]. No permission is asked (reading has no side effect). Errors → `failed` `not read: <reason>` |
 * | `edit <path> <text>` | appends the line `<text>` to the file (creating it): reads the old text as `read` does (missing → `oldText: null`); `tool_call` {title `Edit <path>`, kind `edit`, status `pending`, content [{type `diff`, path, oldText, newText}], locations [{path, line: <the new line's number>}], rawInput {path, append: text}}; a permission request and outcome message as for `permission`; allowed → `tool_call_update` `in_progress`, the write (`fs/write_text_file` {sessionId, path, content} if the client advertised `fs.writeTextFile`, else to disk), `tool_call_update` `completed` with the same diff and locations; rejected / cancelled as for `permission` (nothing is written) |
 * | `run <command> [args…]` | `tool_call` {title `Run <command args>`, kind `execute`, status `pending`, rawInput {command, args, cwd}}; without `clientCapabilities.terminal: true` → `failed` `not run: the client offers no terminal …` (nothing is asked or run); else a permission request as for `permission`; allowed → `terminal/create` {sessionId, command, args (split on whitespace, no quoting), cwd, outputByteLimit 65536}, `tool_call_update` `in_progress` content [{type `terminal`, terminalId}], `terminal/wait_for_exit`, `terminal/output`, `terminal/release`, then `tool_call_update` `completed` (exit code 0) or `failed`, content [terminal, text <output>], rawOutput {exitCode, signal, output, truncated}. `session/cancel` while it runs → `$/cancel_request` for the pending request, `terminal/kill`, `terminal/release`, `failed` `cancelled: terminal killed`, turn `cancelled` |
 * | `title <text>` | sets the session title: `session_info_update` {title, updatedAt} (persisted; sent again on every activation) |
 * | `mirror` | nothing; later non-text blocks of this prompt are sent back verbatim (see above) |
 * | `secret [openai\|anthropic\|github\|aws]` | `agent_message_chunk` `here is a fake <flavour> API key: <key>` (openai, the default: `sk-FAKEcordon…`, 51 chars) |
 * | `wait` | `agent_message_chunk` `waiting for session/cancel`; holds the turn until `session/cancel`, then answers `stopReason: "cancelled"` |
 * | `sleep <ms>` | nothing; pauses `ms` (≤ 60000) milliseconds, `session/cancel` interrupts |
 * | `stop <end_turn\|max_tokens\|max_turn_requests\|refusal>` | ends the turn at once with that stop reason |
 * | `error <message>` | fails `session/prompt` with JSON-RPC error `-32603` `<message>` (updates already sent stay sent) |
 * | `use tool <server>::<tool> [json]` | calls a tool of an MCP server the session was given (see below): `tool_call` {title `<server>::<tool>`, kind `other`, status `pending`, rawInput {server, tool, arguments}}; `tool_call_update` `in_progress`; `tool_call_update` `completed` (or `failed` when the result says `isError`), content [text: the result's text blocks, one per line], rawOutput: the MCP result. An unknown server → `failed` `not run: no MCP server named …`; a connection or protocol error → `failed` `MCP error: <message>`, and the turn goes on. `json` must be an object (default `{}`) |
 * | `list tools <server>` | the same shape, title `list tools <server>`, content one line per tool `<name>: <description>`, rawOutput {tools} (`use` and `list` are announced in `available_commands_update` only to sessions given MCP servers; any other line starting with `use` or `list` is echoed) |
 * | `info` | `agent_message_chunk` listing session id, cwd, additionalDirectories, mcpServers, mode, config values, title, clientInfo, protocolVersion, clientCapabilities |
 * | `help` | `agent_message_chunk` listing these commands |
 * | a command word with bad arguments (`tool` alone, `sleep x`, `edit file`, …) | `agent_message_chunk` `usage: <command usage>` |
 *
 * With the config option `tool_calls_enabled` off, `tool`, `permission`, `read`, `edit` and `run` only
 * send `agent_message_chunk` `not run (tool_calls_enabled is off): <the line>`.
 *
 * The turn ends with `end_turn` after the last line. `session/cancel` aborts it: no further line runs and
 * the answer is `stopReason: "cancelled"` (so does `$/cancel_request` for the prompt request). The agent
 * never sends `usage_update`: it has no model, so no token counts and no context window to report.
 *
 * ## Protocol surface
 *
 * - `initialize` → `protocolVersion: 1`, `agentCapabilities: {loadSession: true, promptCapabilities:
 *   {image, audio, embeddedContext: true}, mcpCapabilities: {http: false, sse: false},
 *   sessionCapabilities: {list, delete, additionalDirectories, resume, close, fork: {}}}`, `authMethods:
 *   []`, `agentInfo: {name: "cordon-reference-agent", title, version}`. (`fork` is an unstable v1
 *   capability; the agent is built on `@agentclientprotocol/sdk/unstable`.)
 * - `session/new` {cwd, mcpServers, additionalDirectories?}: `cwd` and every additional directory must be
 *   absolute; MCP servers of the transports the agent advertises only (else -32602): stdio always,
 *   `http` and `acp` with `--mcp http`, `--mcp acp` (`--mcp acp,http` both; default stdio only, and
 *   `mcpCapabilities` says so: `{http, sse: false, acp?}`). They are recorded for `info` and
 *   connected on first use by `use tool` / `list tools` with the MCP SDK's client (`mcp.ts`); never
 *   stored. Answers `{sessionId, modes, configOptions}`.
 * - `session/load` {sessionId, cwd, mcpServers, additionalDirectories?}: the session must be in the
 *   store (else -32002) and `cwd` must be the session's own working directory (compared after
 *   normalising; else -32602 — as ADK-Rust validates it). Every stored user, agent, thought and tool event
 *   is replayed, in its original order, as `session/update`s before the answer `{modes, configOptions}`;
 *   a prompt replays as one `user_message_chunk` per block, exactly as received; updates exactly as sent.
 *   `additionalDirectories` replaces the stored list (omitted = none). Loading an active session is
 *   allowed (a snapshot of its history is replayed).
 * - `session/resume` {sessionId, cwd, mcpServers?, additionalDirectories?}: the same checks, no replay.
 * - `session/fork` {sessionId, cwd, mcpServers?, additionalDirectories?}: a new session (new id, the
 *   given absolute `cwd`) with a copy of the source's stored history, mode, config and title; the source
 *   is not changed. Answers `{sessionId, modes, configOptions}`; the fork is active.
 * - After answering `session/new`, `session/load`, `session/resume` and `session/fork`, the agent
 *   *activates* the session: it sends `available_commands_update` (the commands above) and, if the
 *   session has a title, `session_info_update` {title, updatedAt}. They follow the answer, so a client
 *   knows the session id by then (an SDK `ActiveSession` helper sees them as its first updates).
 * - `session/close` {sessionId}: cancels a running turn as `session/cancel` would, waits until its
 *   `session/prompt` has been answered (`cancelled`), then deactivates the session (it stays stored; load
 *   or resume it to use it again). A stored but inactive session → `{}`; unknown → -32002.
 * - `session/delete` {sessionId}: closes it if active and removes it from the store; already gone → `{}`.
 * - `session/list` {cwd?, cursor?}: stored sessions, most recently updated first, `pageSize` per page
 *   (`--page-size`, default 50), each `{sessionId, cwd, additionalDirectories (if any), title (if any),
 *   updatedAt}`; `nextCursor` (opaque) while more follow. `cwd` filters on the exact directory (absolute,
 *   else -32602); a cursor this agent did not make → -32602.
 * - Modes `ask` (the default) and `code`: `session/set_mode` records the mode, sends `current_mode_update`
 *   and answers `{}`; an unknown mode → -32602 and the current mode stays.
 * - Config options: `verbosity` (select low/normal/high, default normal) and `tool_calls_enabled`
 *   (boolean, default true — announced only to a client that advertised
 *   `clientCapabilities.session.configOptions.boolean`). `session/set_config_option` validates the value
 *   (unknown option, wrong type or value → -32602, nothing changes), records it, sends
 *   `config_option_update` with the full set and answers with the full set.
 * - Mode, config values and title are session state (`acp:mode`, `acp:config:<id>`, `acp:title`) and
 *   persist across load, resume and fork.
 * - `session/prompt`, `session/cancel`. Sessions are independent and may run prompts concurrently; one
 *   prompt at a time per session (a second → `-32600`). A session that is not active (never created,
 *   closed, deleted, or not yet loaded/resumed by this connection) → `-32002`. `$/cancel_request` ends a
 *   pending prompt as `cancelled`. Any other request → `-32601`; unknown notifications are ignored.
 *
 * Sessions are stored in a folder (see `store.ts` for the format): `--store <dir>`, else
 * `$CORDON_AGENT_STORE`, else `$XDG_STATE_HOME/cordon/sessions`, else `cordon-<uid>/sessions` under the
 * OS temp dir. Several agent processes may share one store; a restarted agent loads what an earlier one
 * stored.
 *
 * Layout: this file wires the ACP app and the stdio transport; `session.ts` holds active sessions;
 * `store.ts` the on-disk store; `controls.ts` modes, config options and commands; `commands.ts` parses
 * prompts; `turn.ts` runs a turn; `test/helpers/lifecycle.ts` is a reusable client-side driver of the whole lifecycle.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { parsePrompt } from "./commands.js";
import {
  availableCommands,
  configOptions,
  modeState,
  supportsBooleanOptions,
  validateConfigChange,
  validateMode,
} from "./controls.js";
import { McpClients, mcpCapabilities, parseMcpSupport, STDIO_ONLY, unsupportedServer, type McpSupport } from "./mcp.js";
import { ActiveSessions, replayUpdates, type AgentSession } from "./session.js";
import { defaultStoreDir, SessionStore, type StoredSession } from "./store.js";
import { runTurn } from "./turn.js";

export const AGENT_NAME = "cordon-reference-agent";
export const AGENT_TITLE = "Cordon reference agent";
/** Sessions per `session/list` page unless `pageSize` / `--page-size` says otherwise. */
export const DEFAULT_PAGE_SIZE = 50;

/** Options of {@link createReferenceAgent}. */
export interface ReferenceAgentOptions {
  /** Called with diagnostic lines; the stdio agent sends them to stderr when `--verbose` is given. */
  log?: (line: string) => void;
  /** The session store, or its folder (default: {@link defaultStoreDir}). */
  store?: SessionStore | string;
  /** Sessions per `session/list` page (default {@link DEFAULT_PAGE_SIZE}). */
  pageSize?: number;
  /** The MCP transports accepted and advertised besides stdio (default none). */
  mcp?: McpSupport;
}

/** A reference agent app and its state. One app serves one connection. */
export interface ReferenceAgent {
  app: acp.AgentApp;
  sessions: ActiveSessions;
  store: SessionStore;
  /**
   * Wraps the stream the app is connected to so that prompts are stored exactly as they arrived on the
   * wire (the SDK hands handlers schema-parsed params, which drop unknown fields). Without it the parsed
   * prompt is stored.
   */
  wrap(stream: acp.Stream): acp.Stream;
  /** The MCP clients of the sessions (closed when the connection ends). */
  mcp: McpClients;
}

/** What the agent advertises in `initialize` — exactly what it implements. */
export function agentCapabilities(mcp: McpSupport = STDIO_ONLY): acp.AgentCapabilities {
  return {
    loadSession: true,
    promptCapabilities: { image: true, audio: true, embeddedContext: true },
    mcpCapabilities: mcpCapabilities(mcp),
    sessionCapabilities: { list: {}, delete: {}, additionalDirectories: {}, resume: {}, close: {}, fork: {} },
  };
}

interface Setup {
  cwd: string;
  mcpServers: acp.McpServer[];
  additionalDirectories: string[];
}

/** Validates the setup fields shared by session/new, load, resume and fork (all -32602). */
function validateSetup(params: { cwd: string; mcpServers?: acp.McpServer[]; additionalDirectories?: string[] }, support: McpSupport): Setup {
  if (!isAbsolute(params.cwd)) {
    throw acp.RequestError.invalidParams({ cwd: params.cwd }, "cwd must be an absolute path");
  }
  const additionalDirectories = params.additionalDirectories ?? [];
  const relative = additionalDirectories.filter((d) => !isAbsolute(d));
  if (relative.length > 0) {
    throw acp.RequestError.invalidParams({ additionalDirectories: relative }, "additionalDirectories must be absolute paths");
  }
  const mcpServers = params.mcpServers ?? [];
  const unsupported = mcpServers.filter((s) => unsupportedServer(s, support) !== null);
  if (unsupported.length > 0) {
    throw acp.RequestError.invalidParams({ mcpServers: unsupported.map((s) => s.name) }, unsupportedServer(unsupported[0], support)!);
  }
  return { cwd: params.cwd, mcpServers, additionalDirectories };
}

/** load and resume reactivate a session only in its own working directory. */
function checkCwd(record: StoredSession, cwd: string): void {
  if (resolve(cwd) !== resolve(record.cwd)) {
    throw acp.RequestError.invalidParams(
      { sessionId: record.sessionId, cwd, sessionCwd: record.cwd },
      `cwd does not match the session's working directory ${record.cwd}`,
    );
  }
}

/** `session/list` cursors: the sort key of the last session of the previous page, base64url JSON. */
interface CursorKey {
  updatedAt: string;
  sessionId: string;
}
const encodeCursor = (key: CursorKey): string => Buffer.from(JSON.stringify({ v: 1, u: key.updatedAt, id: key.sessionId })).toString("base64url");
function decodeCursor(cursor: string): CursorKey {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { v?: unknown; u?: unknown; id?: unknown };
    if (value.v === 1 && typeof value.u === "string" && typeof value.id === "string") return { updatedAt: value.u, sessionId: value.id };
  } catch {
    // Falls through to the error below.
  }
  throw acp.RequestError.invalidParams({ cursor }, "not a session/list cursor from this agent");
}
/** Most recently updated first; ties by id. Negative: `a` comes first. */
function compareRecency(a: CursorKey, b: CursorKey): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt ? -1 : 1;
  return a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0;
}

/** Builds the reference agent as an SDK app (connect it to a stream, or in-process to a client app). */
export function createReferenceAgent(options: ReferenceAgentOptions = {}): ReferenceAgent {
  const log = options.log ?? (() => {});
  const store = typeof options.store === "object" ? options.store : new SessionStore(options.store ?? defaultStoreDir());
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const support = options.mcp ?? STDIO_ONLY;
  const sessions = new ActiveSessions(store);
  const mcp = new McpClients({ name: AGENT_NAME, version: cordonVersion() }, log);
  let client: { info?: acp.Implementation | null; capabilities?: acp.ClientCapabilities; protocolVersion?: number } = {};
  const booleanOptions = () => supportsBooleanOptions(client.capabilities);

  /** Prompts as they arrived on the wire, by request id, until their handler takes them. */
  const rawPrompts = new Map<string | number, unknown>();
  const takeRawPrompt = (requestId: acp.JsonRpcId | undefined, parsed: acp.ContentBlock[]): acp.ContentBlock[] => {
    if (requestId === undefined || requestId === null) return parsed;
    const raw = rawPrompts.get(requestId);
    rawPrompts.delete(requestId);
    return Array.isArray(raw) && raw.length === parsed.length ? (raw as acp.ContentBlock[]) : parsed;
  };
  const wrap = (stream: acp.Stream): acp.Stream => ({
    writable: stream.writable,
    readable: stream.readable.pipeThrough(
      new TransformStream<acp.AnyMessage, acp.AnyMessage>({
        transform(message, controller) {
          const m = message as { method?: unknown; id?: unknown; params?: { prompt?: unknown } };
          if (m.method === acp.methods.agent.session.prompt && (typeof m.id === "string" || typeof m.id === "number")) {
            rawPrompts.set(m.id, m.params?.prompt);
            // Bounded: an entry whose request never reached the handler (invalid params) is dropped eventually.
            if (rawPrompts.size > 1000) rawPrompts.delete(rawPrompts.keys().next().value as string | number);
          }
          controller.enqueue(message);
        },
      }),
    ),
  });

  const controls = (session: AgentSession) => ({
    modes: modeState(session.stored.state),
    configOptions: configOptions(session.stored.state, booleanOptions()),
  });

  const update = (peer: acp.AgentContext, session: AgentSession, u: acp.SessionUpdate) =>
    peer.notify(acp.methods.client.session.update, { sessionId: session.id, update: u });

  /**
   * Sends the activation updates of a session once the answer that activated it is on its way: the
   * answer is queued before any macrotask runs, and the connection writes in order.
   */
  const activated = (session: AgentSession, peer: acp.AgentContext) => {
    setImmediate(() => {
      if (sessions.get(session.id) !== session) return;
      void (async () => {
        const commands = availableCommands(session.setup.mcpServers.length > 0);
        await update(peer, session, { sessionUpdate: "available_commands_update", availableCommands: commands });
        const title = session.title;
        if (title !== undefined) await update(peer, session, { sessionUpdate: "session_info_update", title, updatedAt: session.updatedAt });
      })().catch((error: unknown) => log(`activation updates for ${session.id} not sent: ${String(error)}`));
    });
  };

  /** Deactivates a session after cancelling its turn and waiting for the prompt to be answered. */
  const close = async (session: AgentSession) => {
    await session.cancelAndWait();
    sessions.remove(session.id);
    await mcp.closeSession(session.id);
  };

  const app = acp
    .agent({ name: AGENT_NAME })
    .onConnect((connection) => {
      void connection.closed.then(() => {
        sessions.cancelAll();
        void mcp.closeAll();
      });
    })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      log(`initialize protocolVersion=${params.protocolVersion} client=${params.clientInfo?.name ?? "?"}`);
      client = { info: params.clientInfo, capabilities: params.clientCapabilities, protocolVersion: params.protocolVersion };
      return {
        // Only v1 is implemented: echo 1 whatever the client asked for; a client that cannot speak 1 disconnects.
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: agentCapabilities(support),
        authMethods: [],
        agentInfo: { name: AGENT_NAME, title: AGENT_TITLE, version: cordonVersion() },
      };
    })
    .onRequest(acp.methods.agent.session.new, ({ params, client: peer }) => {
      const session = sessions.create(validateSetup(params, support));
      log(`session/new ${session.id} cwd=${params.cwd}`);
      activated(session, peer);
      return { sessionId: session.id, ...controls(session) };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, signal, client: peer }) => {
      const setup = validateSetup(params, support);
      checkCwd(sessions.stored(params.sessionId), setup.cwd);
      const session = sessions.activate(params.sessionId);
      await mcp.closeSession(session.id);
      session.reattach(setup.mcpServers, setup.additionalDirectories);
      const replay = replayUpdates(sessions.store.history(session.id));
      log(`session/load ${session.id}: replaying ${replay.length} updates`);
      for (const u of replay) {
        if (signal.aborted) throw acp.RequestError.requestCancelled({ sessionId: session.id }, "session/load cancelled during replay");
        await update(peer, session, u);
      }
      activated(session, peer);
      return controls(session);
    })
    .onRequest(acp.methods.agent.session.resume, async ({ params, client: peer }) => {
      const setup = validateSetup(params, support);
      checkCwd(sessions.stored(params.sessionId), setup.cwd);
      const session = sessions.activate(params.sessionId);
      await mcp.closeSession(session.id);
      session.reattach(setup.mcpServers, setup.additionalDirectories);
      log(`session/resume ${session.id}`);
      activated(session, peer);
      return controls(session);
    })
    .onRequest(acp.methods.agent.session.fork, ({ params, client: peer }) => {
      const setup = validateSetup(params, support);
      const session = sessions.fork(params.sessionId, setup);
      log(`session/fork ${params.sessionId} → ${session.id}`);
      activated(session, peer);
      return { sessionId: session.id, ...controls(session) };
    })
    .onRequest(acp.methods.agent.session.close, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (session) {
        await close(session);
        log(`session/close ${params.sessionId}`);
      } else if (!store.has(params.sessionId)) {
        throw acp.RequestError.sessionNotFound(params.sessionId);
      }
      return {};
    })
    .onRequest(acp.methods.agent.session.delete, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (session) await close(session);
      const existed = store.delete(params.sessionId);
      log(`session/delete ${params.sessionId}${existed ? "" : " (already gone)"}`);
      return {};
    })
    .onRequest(acp.methods.agent.session.list, ({ params }) => {
      let cwd: string | undefined;
      if (params.cwd !== undefined && params.cwd !== null) {
        if (!isAbsolute(params.cwd)) throw acp.RequestError.invalidParams({ cwd: params.cwd }, "cwd must be an absolute path");
        cwd = resolve(params.cwd);
      }
      const after = params.cursor !== undefined && params.cursor !== null ? decodeCursor(params.cursor) : undefined;
      const keyOf = (r: StoredSession): CursorKey => ({ updatedAt: r.updatedAt, sessionId: r.sessionId });
      const matching = store
        .list()
        .filter((r) => cwd === undefined || resolve(r.cwd) === cwd)
        .filter((r) => after === undefined || compareRecency(keyOf(r), after) > 0)
        .sort((a, b) => compareRecency(keyOf(a), keyOf(b)));
      const page = matching.slice(0, pageSize);
      const last = page[page.length - 1];
      return {
        sessions: page.map((r) => {
          const title = r.state["acp:title"];
          return {
            sessionId: r.sessionId,
            cwd: r.cwd,
            ...(r.additionalDirectories.length > 0 ? { additionalDirectories: r.additionalDirectories } : {}),
            ...(typeof title === "string" ? { title } : {}),
            updatedAt: r.updatedAt,
          };
        }),
        ...(matching.length > page.length && last ? { nextCursor: encodeCursor(keyOf(last)) } : {}),
      };
    })
    .onRequest(acp.methods.agent.session.setMode, async ({ params, client: peer }) => {
      const session = sessions.require(params.sessionId);
      const modeId = validateMode(params.modeId);
      session.setMode(modeId);
      await update(peer, session, { sessionUpdate: "current_mode_update", currentModeId: modeId });
      log(`session/set_mode ${session.id} ${modeId}`);
      return {};
    })
    .onRequest(acp.methods.agent.session.setConfigOption, async ({ params, client: peer }) => {
      const session = sessions.require(params.sessionId);
      const change = validateConfigChange(params, booleanOptions());
      session.setConfig(change.option.id, change.value);
      const options = configOptions(session.stored.state, booleanOptions());
      await update(peer, session, { sessionUpdate: "config_option_update", configOptions: options });
      log(`session/set_config_option ${session.id} ${change.option.id}=${String(change.value)}`);
      return { configOptions: options };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, signal, requestId, client: peer }) => {
      const session = sessions.require(params.sessionId);
      const prompt = takeRawPrompt(requestId, params.prompt);
      const turn = session.beginTurn(signal);
      try {
        session.record({ kind: "user", prompt });
        const steps = parsePrompt(prompt);
        log(`session/prompt ${session.id}: ${steps.map((s) => s.kind).join(" ") || "(empty)"}`);
        const stopReason = await runTurn(session, steps, turn.signal, {
          emit: (u) => update(peer, session, u),
          requestPermission: (request) => peer.request(acp.methods.client.session.requestPermission, request),
          request: <T>(method: string, requestParams: unknown, cancellationSignal?: AbortSignal) =>
            peer.request<T>(method, requestParams, { cancellationSignal }),
          clientCapabilities: () => client.capabilities ?? {},
          describeConnection: () => [
            `client ${client.info ? `${client.info.name} ${client.info.version}` : "(no clientInfo)"}`,
            `protocolVersion ${client.protocolVersion ?? "?"}`,
            `clientCapabilities ${JSON.stringify(client.capabilities ?? {})}`,
          ],
          mcp: {
            listTools: (server, mcpSignal) => mcp.listTools({ sessionId: session.id, cwd: session.setup.cwd, server, peer }, mcpSignal),
            callTool: (server, tool, args, mcpSignal) => mcp.callTool({ sessionId: session.id, cwd: session.setup.cwd, server, peer }, tool, args, mcpSignal),
          },
        });
        log(`session/prompt ${session.id} → ${stopReason}`);
        return { stopReason };
      } finally {
        session.endTurn(turn);
      }
    })
    // Registered after session/prompt so a cancel never overtakes the prompt it follows.
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      const cancelled = sessions.get(params.sessionId)?.cancel() ?? false;
      log(`session/cancel ${params.sessionId}${cancelled ? "" : " (no prompt running)"}`);
    })
    // Request-scoped notifications of MCP-over-ACP servers (e.g. progress) reach the call they belong to.
    .onNotification(acp.methods.agent.mcp.message, mcp.caller.handleNotification);

  return { app, sessions, store, wrap, mcp };
}

/** Parses the `cordon reference-agent` arguments. */
function parseArgs(args: string[]): { verbose: boolean; help: boolean; store?: string; pageSize?: number; mcp?: McpSupport; error?: string } {
  const result: { verbose: boolean; help: boolean; store?: string; pageSize?: number; mcp?: McpSupport } = { verbose: false, help: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = (): string | undefined => inline ?? args[++i];
    if (flag === "--verbose" || flag === "-v") result.verbose = true;
    else if (flag === "--help" || flag === "-h") result.help = true;
    else if (flag === "--store") {
      const dir = value();
      if (!dir) return { ...result, error: "--store needs a folder" };
      result.store = dir;
    } else if (flag === "--page-size") {
      const text = value();
      const n = Number(text);
      if (!text || !/^\d+$/.test(text) || n < 1 || n > 1000) return { ...result, error: "--page-size needs a whole number from 1 to 1000" };
      result.pageSize = n;
    } else if (flag === "--mcp") {
      const text = value();
      if (text === undefined) return { ...result, error: "--mcp needs a list of transports, e.g. acp,http" };
      try {
        result.mcp = parseMcpSupport(text);
      } catch (error) {
        return { ...result, error: (error as Error).message };
      }
    } else return { ...result, error: `unknown argument ${arg}` };
  }
  return result;
}

const USAGE = `usage: cordon reference-agent [--store <dir>] [--page-size <n>] [--mcp <transports>] [--verbose]

Runs the Cordon reference agent: a deterministic ACP v1 agent on stdin/stdout (newline-delimited
JSON-RPC). It exits when stdin closes. Send the prompt "help" for its prompt commands.

  --store <dir>     the session store folder (sessions survive restarts; several agents may share it).
                    Default: $CORDON_AGENT_STORE, else $XDG_STATE_HOME/cordon/sessions, else
                    cordon-<uid>/sessions under the OS temp dir (now: ${defaultStoreDir()})
  --page-size <n>   sessions per session/list page (default ${DEFAULT_PAGE_SIZE})
  --mcp <list>      MCP transports accepted in session setup besides stdio, and advertised in
                    mcpCapabilities: a comma list of acp, http (default: stdio only)
  --verbose         log each request on stderr
`;

/** `cordon reference-agent`: serves one ACP connection on stdin/stdout; resolves when stdin closes. */
export async function runReferenceAgent(args: string[]): Promise<void> {
  const options = parseArgs(args);
  if (options.error) {
    process.stderr.write(`cordon reference-agent: ${options.error}\n${USAGE}`);
    // The CLI's dispatcher turns a normal return into exit code 0, so a usage error exits here.
    process.exit(2);
  }
  if (options.help) {
    process.stderr.write(USAGE);
    return;
  }
  const log = options.verbose ? (line: string) => process.stderr.write(`[${AGENT_NAME}] ${line}\n`) : undefined;
  const store = new SessionStore(resolve(options.store ?? defaultStoreDir()));
  try {
    store.ensure();
  } catch (error) {
    process.stderr.write(`cordon reference-agent: cannot create the session store ${store.dir}: ${String(error)}\n`);
    process.exit(1);
  }
  log?.(`session store ${store.dir}`);
  const agent = createReferenceAgent({ log, store, pageSize: options.pageSize, mcp: options.mcp });
  const stream = acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const connection = agent.app.connect(agent.wrap(stream));
  await connection.closed;
  await agent.mcp.closeAll();
  log?.("stdin closed; exiting");
}

let version: string | undefined;

/** Cordon's version, from the nearest `package.json` named `cordon` above this module. */
export function cordonVersion(): string {
  if (version !== undefined) return version;
  version = "0.0.0";
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      try {
        const pkg = JSON.parse(readFileSync(candidate, "utf8")) as { name?: string; version?: string };
        if (pkg.name === "cordon" && typeof pkg.version === "string") {
          version = pkg.version;
          break;
        }
      } catch {
        // Not readable JSON: keep looking upwards.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return version;
}
