/**
 * `cordon reference-agent`: the reference agent (`runtime/agent/`) on stdin/stdout, newline-delimited
 * JSON-RPC, one connection; it exits when stdin closes. Logs (only with `--verbose`) go to stderr.
 *
 * Exit codes: 0 when stdin closed (or `--help`), 2 for a usage error, 1 when the session store
 * cannot be created.
 */
import { resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import { ndJsonStream } from "@agentclientprotocol/sdk/unstable";
import { createReferenceAgent } from "../agent/app.js";
import { type McpSupport, parseMcpSupport } from "../agent/mcp.js";
import { AGENT_NAME } from "../agent/reference-agent.js";
import { DEFAULT_PAGE_SIZE } from "../agent/session-list.js";
import { defaultStoreDir, SessionStore } from "../agent/store.js";

const USAGE = () => `usage: cordon reference-agent [--store <dir>] [--page-size <n>] [--mcp <transports>] [--verbose]

Runs the Cordon reference agent: a deterministic ACP v1 agent on stdin/stdout (newline-delimited
JSON-RPC). It exits when stdin closes. Send the prompt "help" for its prompt commands.
Files are read and written only through the client (fs/read_text_file, fs/write_text_file): when the
client offers no fs, "read" and "edit" fail with a tool error; the local disk is never used for them.

  --store <dir>     the session store folder (sessions survive restarts; several agents may share it).
                    Default: $CORDON_AGENT_STORE, else $XDG_STATE_HOME/cordon/sessions, else
                    cordon-<uid>/sessions under the OS temp dir (now: ${defaultStoreDir()})
  --page-size <n>   sessions per session/list page (default ${DEFAULT_PAGE_SIZE})
  --mcp <list>      MCP transports accepted in session setup besides stdio, and advertised in
                    mcpCapabilities: a comma list of acp, http (default: stdio only)
  --verbose         log each request on stderr
`;

/** The parsed `cordon reference-agent` arguments. */
export interface ReferenceAgentArgs {
  verbose: boolean;
  help: boolean;
  store?: string;
  pageSize?: number;
  mcp?: McpSupport;
}

const OPTIONS = {
  store: { type: "string" },
  "page-size": { type: "string" },
  mcp: { type: "string" },
  verbose: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
} as const;

/**
 * Parses the arguments; throws an `Error` whose message says what is wrong (`unknown argument <arg>`
 * for anything that is not one of the options, a positional or `--` included).
 */
export function parseReferenceAgentArgs(args: string[]): ReferenceAgentArgs {
  // Not strict: the tokens are checked here so that every mistake gets this command's own message.
  const { values, tokens } = parseArgs({ args, options: OPTIONS, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind !== "option" || !Object.hasOwn(OPTIONS, token.name)) throw new Error(`unknown argument ${args[token.index]}`);
  }
  const result: ReferenceAgentArgs = { verbose: values.verbose !== undefined, help: values.help !== undefined };
  if (values.store !== undefined) {
    if (typeof values.store !== "string" || values.store === "") throw new Error("--store needs a folder");
    result.store = values.store;
  }
  const pageSize = values["page-size"];
  if (pageSize !== undefined) {
    const n = Number(pageSize);
    if (typeof pageSize !== "string" || !/^\d+$/.test(pageSize) || n < 1 || n > 1000)
      throw new Error("--page-size needs a whole number from 1 to 1000");
    result.pageSize = n;
  }
  if (values.mcp !== undefined) {
    if (typeof values.mcp !== "string") throw new Error("--mcp needs a list of transports, e.g. acp,http");
    result.mcp = parseMcpSupport(values.mcp);
  }
  return result;
}

/** Serves one ACP connection on stdin/stdout; resolves with the exit code when stdin closes. */
export async function referenceAgentCommand(args: string[]): Promise<number> {
  let options: ReferenceAgentArgs;
  try {
    options = parseReferenceAgentArgs(args);
  } catch (error) {
    process.stderr.write(`cordon reference-agent: ${(error as Error).message}\n${USAGE()}`);
    return 2;
  }
  if (options.help) {
    process.stderr.write(USAGE());
    return 0;
  }
  const log = options.verbose ? (line: string) => process.stderr.write(`[${AGENT_NAME}] ${line}\n`) : undefined;
  const store = new SessionStore(resolve(options.store ?? defaultStoreDir()));
  try {
    store.ensure();
  } catch (error) {
    process.stderr.write(`cordon reference-agent: cannot create the session store ${store.dir}: ${String(error)}\n`);
    return 1;
  }
  log?.(`session store ${store.dir}`);
  const agent = createReferenceAgent({ log, store, pageSize: options.pageSize, mcp: options.mcp });
  const stream = ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const connection = agent.app.connect(agent.wrap(stream));
  await connection.closed;
  await agent.mcp.closeAll();
  log?.("stdin closed; exiting");
  return 0;
}
