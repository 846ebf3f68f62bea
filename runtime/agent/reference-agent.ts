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
 * | `read <path>` | `tool_call` {title `Read <path>`, kind `read`, status `pending`, locations [{path}], rawInput {path}} (path absolute); `tool_call_update` `in_progress`; the text is read with `fs/read_text_file` {sessionId, path}; without the client's `fs.readTextFile` → `failed` `not read: the client offers no fs.readTextFile …` (the agent never reads the local disk for a tool); `tool_call_update` `completed`, content [text <file text>], locations [{path}]. No permission is asked (reading has no side effect). Errors → `failed` `not read: <reason>` |
 * | `edit <path> <text>` | appends the line `<text>` to the file (creating it); needs the client's `fs.readTextFile` and `fs.writeTextFile` (else `tool_call` then `failed` `not edited: the client offers no fs.… …`, nothing asked, never the local disk); reads the old text as `read` does (missing → `oldText: null`); `tool_call` {title `Edit <path>`, kind `edit`, status `pending`, content [{type `diff`, path, oldText, newText}], locations [{path, line: <the new line's number>}], rawInput {path, append: text}}; a permission request and outcome message as for `permission`; allowed → `tool_call_update` `in_progress`, the write (`fs/write_text_file` {sessionId, path, content}), `tool_call_update` `completed` with the same diff and locations; rejected / cancelled as for `permission` (nothing is written) |
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
 * Layout (`runtime/agent/`): this file is the specification, with the agent's identity and what it
 * advertises; `app.ts` wires the ACP app (one handler per method); `setup.ts` validates session setups;
 * `session-list.ts` pages `session/list`; `raw-prompts.ts` keeps prompts as they arrived; `session.ts`
 * holds active sessions; `store.ts` the on-disk store; `controls.ts` modes, config options and
 * commands; `commands.ts` parses prompts; `turn.ts` runs a turn on a `TurnContext` (`turn-context.ts`),
 * with `permission.ts` and one module per tool family in `tools/` (`simulated`, `fs`, `terminal`,
 * `mcp`); `mcp.ts` is the MCP client; `version.ts` reads Cordon's version. The command line is
 * `runtime/cli/reference-agent.ts`; `test/helpers/lifecycle.ts` is a reusable client-side driver of
 * the whole lifecycle.
 */
import type { AgentCapabilities } from "@agentclientprotocol/sdk/unstable";
import { type McpSupport, mcpCapabilities, STDIO_ONLY } from "./mcp.js";

export const AGENT_NAME = "cordon-reference-agent";
export const AGENT_TITLE = "Cordon reference agent";

/** What the agent advertises in `initialize` — exactly what it implements. */
export function agentCapabilities(mcp: McpSupport = STDIO_ONLY): AgentCapabilities {
  return {
    loadSession: true,
    promptCapabilities: { image: true, audio: true, embeddedContext: true },
    mcpCapabilities: mcpCapabilities(mcp),
    sessionCapabilities: { list: {}, delete: {}, additionalDirectories: {}, resume: {}, close: {}, fork: {} },
  };
}
