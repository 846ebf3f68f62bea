/**
 * The session setup fields shared by `session/new`, `session/load`, `session/resume` and
 * `session/fork` — `cwd`, `mcpServers`, `additionalDirectories` — and their validation. Every refusal
 * is -32602 (invalid params) with the offending values in `data`; nothing is changed by a refused setup.
 */
import { isAbsolute, resolve } from "node:path";
import { type McpServer, RequestError } from "@agentclientprotocol/sdk/unstable";
import { type McpSupport, unsupportedServer } from "./mcp.js";
import type { SessionSetup } from "./session.js";
import type { StoredSession } from "./store.js";

/**
 * Validates a setup: `cwd` and every additional directory must be absolute, and every MCP server must
 * use a transport the agent accepts (`support`). Omitted lists are empty.
 */
export function validateSetup(
  params: { cwd: string; mcpServers?: McpServer[]; additionalDirectories?: string[] },
  support: McpSupport,
): SessionSetup {
  if (!isAbsolute(params.cwd)) {
    throw RequestError.invalidParams({ cwd: params.cwd }, "cwd must be an absolute path");
  }
  const additionalDirectories = params.additionalDirectories ?? [];
  const relative = additionalDirectories.filter((d) => !isAbsolute(d));
  if (relative.length > 0) {
    throw RequestError.invalidParams({ additionalDirectories: relative }, "additionalDirectories must be absolute paths");
  }
  const mcpServers = params.mcpServers ?? [];
  const unsupported = mcpServers.filter((s) => unsupportedServer(s, support) !== null);
  if (unsupported.length > 0) {
    throw RequestError.invalidParams({ mcpServers: unsupported.map((s) => s.name) }, unsupportedServer(unsupported[0], support)!);
  }
  return { cwd: params.cwd, mcpServers, additionalDirectories };
}

/** Load and resume reactivate a session only in its own working directory (compared after normalising). */
export function checkCwd(record: StoredSession, cwd: string): void {
  if (resolve(cwd) !== resolve(record.cwd)) {
    throw RequestError.invalidParams(
      { sessionId: record.sessionId, cwd, sessionCwd: record.cwd },
      `cwd does not match the session's working directory ${record.cwd}`,
    );
  }
}
