/**
 * Capabilities as a contract, on the client side. The `initialize` exchange says what each side
 * implements, and this module holds the application to it before anything is sent:
 *
 * - the client declares `fs.readTextFile`, `fs.writeTextFile` and `terminal` only when the
 *   application passed implementations for them ({@link clientCapabilities});
 * - session methods the agent did not advertise (`session/load`, `list`, `resume`, `fork`,
 *   `close`, `delete`, additional directories) are refused with an {@link UnsupportedError}
 *   ({@link requireSessionMethod});
 * - prompt content the agent did not advertise (image, audio, embedded resources) is refused with
 *   an error naming the block and the capability ({@link checkPromptContent});
 * - MCP servers are offered only over transports the agent advertised: stdio always, `http`,
 *   `sse` and `acp` when `mcpCapabilities` says so ({@link offerMcpServers}). Behind Cordon's MCP
 *   bridge the chain advertises `acp` even when the agent does not, so a proxy's tools and an
 *   application's `acp` servers reach any agent;
 * - `setMode` / `setConfigOption` are checked against what the session announced
 *   ({@link checkMode}, {@link checkConfigValue}).
 */
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { InvalidRequestError, UnsupportedError } from "./errors.js";

/**
 * The filesystem the client lends the agent (`fs/read_text_file`, `fs/write_text_file`). Pass
 * either or both. A handler answers with an error by throwing a `RequestError`
 * (`RequestError.resourceNotFound(path)` for a file that does not exist, which agents take as
 * "create it"); a Node `ENOENT` error from `readTextFile` is answered the same way; anything else
 * thrown is answered -32603 with its message.
 */
export interface FileSystemHandlers {
  readTextFile?(request: acp.ReadTextFileRequest): acp.ReadTextFileResponse | Promise<acp.ReadTextFileResponse>;
  writeTextFile?(request: acp.WriteTextFileRequest): acp.WriteTextFileResponse | void | Promise<acp.WriteTextFileResponse | void>;
}

/** Terminals the client runs for the agent (`terminal/*`). All five methods are needed to declare `terminal`. */
export interface TerminalHandlers {
  create(request: acp.CreateTerminalRequest): acp.CreateTerminalResponse | Promise<acp.CreateTerminalResponse>;
  output(request: acp.TerminalOutputRequest): acp.TerminalOutputResponse | Promise<acp.TerminalOutputResponse>;
  waitForExit(request: acp.WaitForTerminalExitRequest): acp.WaitForTerminalExitResponse | Promise<acp.WaitForTerminalExitResponse>;
  kill(request: acp.KillTerminalRequest): acp.KillTerminalResponse | void | Promise<acp.KillTerminalResponse | void>;
  release(request: acp.ReleaseTerminalRequest): acp.ReleaseTerminalResponse | void | Promise<acp.ReleaseTerminalResponse | void>;
}

/** What the client declares in `initialize`: exactly what the application implements. */
export function clientCapabilities(fs: FileSystemHandlers | undefined, terminal: TerminalHandlers | undefined): acp.ClientCapabilities {
  return {
    fs: { readTextFile: typeof fs?.readTextFile === "function", writeTextFile: typeof fs?.writeTextFile === "function" },
    terminal: terminal !== undefined,
    // The API validates and sends boolean config options, so the agent may announce them.
    session: { configOptions: { boolean: {} } },
  };
}

/** The session methods whose use depends on the agent's capabilities. */
export type SessionMethod =
  | "loadSession"
  | "listSessions"
  | "resumeSession"
  | "forkSession"
  | "closeSession"
  | "deleteSession"
  | "additionalDirectories";

const SESSION_METHODS: Record<SessionMethod, { wire: string; capability: string; has: (c: acp.AgentCapabilities) => boolean }> = {
  loadSession: { wire: "session/load", capability: "agentCapabilities.loadSession", has: (c) => c.loadSession === true },
  listSessions: {
    wire: "session/list",
    capability: "agentCapabilities.sessionCapabilities.list",
    has: (c) => present(c.sessionCapabilities?.list),
  },
  resumeSession: {
    wire: "session/resume",
    capability: "agentCapabilities.sessionCapabilities.resume",
    has: (c) => present(c.sessionCapabilities?.resume),
  },
  forkSession: {
    wire: "session/fork",
    capability: "agentCapabilities.sessionCapabilities.fork",
    has: (c) => present(c.sessionCapabilities?.fork),
  },
  closeSession: {
    wire: "session/close",
    capability: "agentCapabilities.sessionCapabilities.close",
    has: (c) => present(c.sessionCapabilities?.close),
  },
  deleteSession: {
    wire: "session/delete",
    capability: "agentCapabilities.sessionCapabilities.delete",
    has: (c) => present(c.sessionCapabilities?.delete),
  },
  additionalDirectories: {
    wire: "additionalDirectories",
    capability: "agentCapabilities.sessionCapabilities.additionalDirectories",
    has: (c) => present(c.sessionCapabilities?.additionalDirectories),
  },
};

/** A capability object is advertised when present and not null (ACP's marker objects, e.g. `fork: {}`). */
const present = (v: unknown) => v !== undefined && v !== null && v !== false;

/** Whether the agent advertised what `method` needs. */
export function supports(caps: acp.AgentCapabilities, method: SessionMethod): boolean {
  return SESSION_METHODS[method].has(caps);
}

/** Throws {@link UnsupportedError} unless the agent advertised what `method` needs. */
export function requireSessionMethod(caps: acp.AgentCapabilities, method: SessionMethod): void {
  const spec = SESSION_METHODS[method];
  if (spec.has(caps)) return;
  const what = method === "additionalDirectories" ? "additional directories for a session" : `${method} (${spec.wire})`;
  throw new UnsupportedError(
    `the agent does not support ${what}: it did not advertise ${spec.capability}; nothing was sent`,
    spec.capability,
  );
}

const GATED: Record<string, { capability: keyof acp.PromptCapabilities; what: string }> = {
  image: { capability: "image", what: "an image" },
  audio: { capability: "audio", what: "audio" },
  resource: { capability: "embeddedContext", what: "an embedded resource" },
};

/** Throws {@link UnsupportedError} at the first block the agent did not advertise (text and resource links always pass). */
export function checkPromptContent(blocks: acp.ContentBlock[], caps: acp.AgentCapabilities): void {
  const prompt = caps.promptCapabilities ?? {};
  blocks.forEach((block, i) => {
    const gate = Object.hasOwn(GATED, block.type) ? GATED[block.type] : undefined;
    if (gate && prompt[gate.capability] !== true) {
      throw new UnsupportedError(
        `prompt block ${i} is ${gate.what}, but the agent did not advertise promptCapabilities.${gate.capability}; nothing was sent`,
        `agentCapabilities.promptCapabilities.${gate.capability}`,
      );
    }
  });
}

/** The MCP transport of a server declaration (`stdio` when it has no `type`). */
const mcpTransport = (server: acp.McpServer): string => ("type" in server && typeof server.type === "string" ? server.type : "stdio");

/** Whether the agent (as the chain presents it) accepts MCP servers over `transport`. */
export function acceptsMcpTransport(caps: acp.AgentCapabilities, transport: string): boolean {
  if (transport === "stdio") return true;
  const mcp = caps.mcpCapabilities as Record<string, unknown> | undefined;
  return mcp?.[transport] === true;
}

/**
 * Splits `servers` into what the agent accepts and what it does not. With `onUnsupported: "error"`
 * an unsupported server throws {@link UnsupportedError} instead of being left out.
 */
export function offerMcpServers(
  servers: acp.McpServer[],
  caps: acp.AgentCapabilities,
  onUnsupported: "omit" | "error",
): { offered: acp.McpServer[]; omitted: acp.McpServer[] } {
  const offered: acp.McpServer[] = [];
  const omitted: acp.McpServer[] = [];
  for (const server of servers) {
    const transport = mcpTransport(server);
    if (acceptsMcpTransport(caps, transport)) offered.push(server);
    else if (onUnsupported === "error") {
      throw new UnsupportedError(
        `MCP server "${server.name}" uses the ${transport} transport, but the agent did not advertise mcpCapabilities.${transport}; nothing was sent`,
        `agentCapabilities.mcpCapabilities.${transport}`,
      );
    } else omitted.push(server);
  }
  return { offered, omitted };
}

/** Throws unless `modeId` is one of the modes the session announced. */
export function checkMode(modes: acp.SessionModeState | null | undefined, modeId: string): void {
  if (!modes || !Array.isArray(modes.availableModes) || modes.availableModes.length === 0) {
    throw new UnsupportedError("this session announced no modes, so none can be set; nothing was sent", "session.modes");
  }
  if (!modes.availableModes.some((m) => m.id === modeId)) {
    const known = modes.availableModes.map((m) => JSON.stringify(m.id)).join(", ");
    throw new InvalidRequestError(`unknown mode ${JSON.stringify(modeId)}: the session announced ${known}; nothing was sent`);
  }
}

/** The values a select option offers (flattening groups). */
function selectValues(option: acp.SessionConfigOption): string[] {
  if (option.type !== "select" || !Array.isArray(option.options)) return [];
  return (option.options as Array<acp.SessionConfigSelectOption | acp.SessionConfigSelectGroup>).flatMap((o) =>
    "group" in o && Array.isArray(o.options) ? o.options.map((x) => x.value) : "value" in o ? [o.value] : [],
  );
}

/**
 * Throws unless `value` is valid for option `configId` as the session announced it (a select:
 * one of its values; a boolean: true or false). Returns the `session/set_config_option` params.
 */
export function checkConfigValue(
  options: acp.SessionConfigOption[] | null | undefined,
  sessionId: string,
  configId: string,
  value: string | boolean,
): acp.SetSessionConfigOptionRequest {
  if (!options || options.length === 0) {
    throw new UnsupportedError("this session announced no config options, so none can be set; nothing was sent", "session.configOptions");
  }
  const option = options.find((o) => o.id === configId);
  if (!option) {
    const known = options.map((o) => JSON.stringify(o.id)).join(", ");
    throw new InvalidRequestError(`unknown config option ${JSON.stringify(configId)}: the session announced ${known}; nothing was sent`);
  }
  if (option.type === "boolean") {
    if (typeof value !== "boolean")
      throw new InvalidRequestError(
        `config option ${JSON.stringify(configId)} is a boolean; ${JSON.stringify(value)} is not; nothing was sent`,
      );
    return { sessionId, configId, type: "boolean", value };
  }
  if (option.type === "select") {
    const values = selectValues(option);
    if (typeof value !== "string" || !values.includes(value)) {
      throw new InvalidRequestError(
        `${JSON.stringify(value)} is not a value of config option ${JSON.stringify(configId)} (one of ${values.map((v) => JSON.stringify(v)).join(", ")}); nothing was sent`,
      );
    }
    return { sessionId, configId, value };
  }
  throw new UnsupportedError(
    `config option ${JSON.stringify(configId)} has a type this client does not know (${JSON.stringify((option as { type?: unknown }).type)}); nothing was sent`,
    "session.configOptions",
  );
}
