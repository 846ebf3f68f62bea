/**
 * # The Cordon reference agent
 *
 * A deterministic, LLM-free ACP v1 agent. `cordon reference-agent` speaks newline-delimited JSON-RPC on
 * stdin/stdout (logs, if any, go to stderr) and exits when stdin closes. It is the agent behind Cordon's
 * demo and a test peer for proxy authors: every behaviour is triggered by the prompt, so what a proxy in
 * front of it changes is visible in what comes back.
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
 *   first 200 chars>"]` or `echo: [resource uri=<uri> mimeType=<m> blob=<n> bytes]`.
 *
 * Every message or thought chunk the agent sends is one `text` block ending in `\n`. Tool-call ids are
 * `tool-1`, `tool-2`, … per session.
 *
 * | line | what the agent sends |
 * |---|---|
 * | anything that is not a command | `agent_message_chunk` `echo: <line>` |
 * | `echo <text>` | `agent_message_chunk` `echo: <text>` (to echo a line that starts with a command word) |
 * | `think <text>` | `agent_thought_chunk` `<text>` |
 * | `tool <title>` | `tool_call` {toolCallId, title, kind `execute`, status `pending`, rawInput {command: title}}; `tool_call_update` status `in_progress`; `tool_call_update` status `completed`, content [text `ran <title>`], rawOutput {output: `ran <title>`} |
 * | `permission <title>` | the same `tool_call`; then `session/request_permission` {toolCall, options [`allow` (allow_once), `reject` (reject_once)]}; then `agent_message_chunk` `permission <allowed\|rejected\|cancelled>: <title>[ (option <id>)]`; allowed → the two `tool_call_update`s of `tool`; rejected (a reject option, an unknown option, or an error answer) → `tool_call_update` status `failed`, content `not run: permission rejected`, and the turn goes on; cancelled (outcome `cancelled`, or `session/cancel` while waiting) → `tool_call_update` status `failed`, content `not run: turn cancelled`, and the turn ends with `cancelled` |
 * | `secret [openai\|anthropic\|github\|aws]` | `agent_message_chunk` `here is a fake <flavour> API key: <key>` (openai, the default: `sk-FAKEcordon…`, 51 chars) |
 * | `wait` | `agent_message_chunk` `waiting for session/cancel`; holds the turn until `session/cancel`, then answers `stopReason: "cancelled"` |
 * | `sleep <ms>` | nothing; pauses `ms` (≤ 60000) milliseconds, `session/cancel` interrupts |
 * | `stop <end_turn\|max_tokens\|max_turn_requests\|refusal>` | ends the turn at once with that stop reason |
 * | `error <message>` | fails `session/prompt` with JSON-RPC error `-32603` `<message>` (updates already sent stay sent) |
 * | `info` | `agent_message_chunk` listing session id, cwd, additionalDirectories, mcpServers, clientInfo, protocolVersion, clientCapabilities |
 * | `help` | `agent_message_chunk` listing these commands |
 * | a command word with bad arguments (`tool` alone, `sleep x`, …) | `agent_message_chunk` `usage: <command usage>` |
 *
 * The turn ends with `end_turn` after the last line. `session/cancel` aborts it: no further line runs and
 * the answer is `stopReason: "cancelled"` (so does `$/cancel_request` for the prompt request).
 *
 * ## Protocol surface
 *
 * - `initialize` → `protocolVersion: 1`, `agentCapabilities: {loadSession: false, promptCapabilities:
 *   {image, audio, embeddedContext: true}, mcpCapabilities: {http: false, sse: false}}`, `authMethods: []`,
 *   `agentInfo: {name: "cordon-reference-agent", title, version}`.
 * - `session/new` (absolute `cwd` and `additionalDirectories`; stdio MCP servers only — they are recorded,
 *   shown by `info`, never launched), `session/prompt`, `session/cancel`. Sessions are independent and
 *   may run prompts concurrently; one prompt at a time per session (a second → `-32600`). Unknown
 *   session → `-32002`. Any other request → `-32601`; unknown notifications are ignored.
 *
 * Layout: this file wires the ACP app and the stdio transport; `session.ts` holds session state (and the
 * history a future `session/load` replays); `commands.ts` parses prompts; `turn.ts` runs a turn.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { parsePrompt } from "./commands.js";
import { SessionStore } from "./session.js";
import { runTurn } from "./turn.js";

export const AGENT_NAME = "cordon-reference-agent";
export const AGENT_TITLE = "Cordon reference agent";

/** Options of {@link createReferenceAgent}. */
export interface ReferenceAgentOptions {
  /** Called with diagnostic lines; the stdio agent sends them to stderr when `--verbose` is given. */
  log?: (line: string) => void;
}

/** A reference agent app and its state. One app serves one connection. */
export interface ReferenceAgent {
  app: acp.AgentApp;
  sessions: SessionStore;
}

/** What the agent advertises in `initialize` — exactly what it implements. */
export function agentCapabilities(): acp.AgentCapabilities {
  return {
    loadSession: false,
    promptCapabilities: { image: true, audio: true, embeddedContext: true },
    mcpCapabilities: { http: false, sse: false },
  };
}

/** Builds the reference agent as an SDK app (connect it to a stream, or in-process to a client app). */
export function createReferenceAgent(options: ReferenceAgentOptions = {}): ReferenceAgent {
  const log = options.log ?? (() => {});
  const sessions = new SessionStore();
  let client: { info?: acp.Implementation | null; capabilities?: acp.ClientCapabilities; protocolVersion?: number } = {};

  const app = acp
    .agent({ name: AGENT_NAME })
    .onConnect((connection) => {
      void connection.closed.then(() => sessions.cancelAll());
    })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      log(`initialize protocolVersion=${params.protocolVersion} client=${params.clientInfo?.name ?? "?"}`);
      client = { info: params.clientInfo, capabilities: params.clientCapabilities, protocolVersion: params.protocolVersion };
      return {
        // Only v1 is implemented: echo 1 whatever the client asked for; a client that cannot speak 1 disconnects.
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: agentCapabilities(),
        authMethods: [],
        agentInfo: { name: AGENT_NAME, title: AGENT_TITLE, version: cordonVersion() },
      };
    })
    .onRequest(acp.methods.agent.session.new, ({ params }) => {
      if (!isAbsolute(params.cwd)) {
        throw acp.RequestError.invalidParams({ cwd: params.cwd }, "cwd must be an absolute path");
      }
      const additionalDirectories = params.additionalDirectories ?? [];
      const relative = additionalDirectories.filter((d) => !isAbsolute(d));
      if (relative.length > 0) {
        throw acp.RequestError.invalidParams({ additionalDirectories: relative }, "additionalDirectories must be absolute paths");
      }
      const unsupported = params.mcpServers.filter((s) => "type" in s);
      if (unsupported.length > 0) {
        throw acp.RequestError.invalidParams(
          { mcpServers: unsupported.map((s) => s.name) },
          "only stdio MCP servers are supported (mcpCapabilities http and sse are false)",
        );
      }
      const session = sessions.create({ cwd: params.cwd, mcpServers: params.mcpServers, additionalDirectories });
      log(`session/new ${session.id} cwd=${params.cwd}`);
      return { sessionId: session.id };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, signal, client: peer }) => {
      const session = sessions.require(params.sessionId);
      const turn = session.beginTurn(signal);
      try {
        session.record({ kind: "user", prompt: params.prompt });
        const steps = parsePrompt(params.prompt);
        log(`session/prompt ${session.id}: ${steps.map((s) => s.kind).join(" ") || "(empty)"}`);
        const stopReason = await runTurn(session, steps, turn.signal, {
          emit: (update) => peer.notify(acp.methods.client.session.update, { sessionId: session.id, update }),
          requestPermission: (request) => peer.request(acp.methods.client.session.requestPermission, request),
          describeConnection: () => [
            `client ${client.info ? `${client.info.name} ${client.info.version}` : "(no clientInfo)"}`,
            `protocolVersion ${client.protocolVersion ?? "?"}`,
            `clientCapabilities ${JSON.stringify(client.capabilities ?? {})}`,
          ],
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
    });

  return { app, sessions };
}

/** Parses the `cordon reference-agent` arguments. */
function parseArgs(args: string[]): { verbose: boolean; help: boolean; error?: string } {
  const result = { verbose: false, help: false };
  for (const arg of args) {
    if (arg === "--verbose" || arg === "-v") result.verbose = true;
    else if (arg === "--help" || arg === "-h") result.help = true;
    else return { ...result, error: `unknown argument ${arg}` };
  }
  return result;
}

const USAGE = `usage: cordon reference-agent [--verbose]

Runs the Cordon reference agent: a deterministic ACP v1 agent on stdin/stdout (newline-delimited
JSON-RPC). It exits when stdin closes. --verbose logs each request on stderr.
Send the prompt "help" for its prompt commands.
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
  const { app } = createReferenceAgent({ log });
  const stream = acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const connection = app.connect(stream);
  await connection.closed;
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
