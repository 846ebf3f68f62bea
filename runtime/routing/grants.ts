/**
 * Authority a proxy may be granted. A proxy can always *forward* what it is handed; what needs a
 * grant is authority the proxy *originates*:
 * - toward the client, requests that reach outside the conversation: reading or writing the user's
 *   files (`fs:read`, `fs:write`), running commands (`terminal`);
 * - through the agent, which holds the user's authority: MCP servers the client did not declare
 *   (`agent:mcp`), sessions of its own (`agent:sessions`), prompts of its own (`agent:prompt`),
 *   the agent's mode, options and login (`agent:control`), and approving the agent's tool calls
 *   (`permission:allow`);
 * - through the agent's MCP client, from an MCP server the proxy serves: the agent's model
 *   (`mcp:sampling`), questions to the user in the agent's name (`mcp:elicitation`), and the
 *   user's workspace folders (`mcp:roots`) (rules/mcp-client.ts).
 *
 * "Forwarded" toward the client is decided by content: the proxy received that exact request
 * (method and params, compared canonically) from its successor and has not answered it. A request
 * the proxy made up, or one it altered (another path, another command), is its own and needs the
 * grant. Toward the agent, "forwarded" means the client's own call of that method, passed on or
 * altered (rules/agent-authority.ts); altered MCP declarations are judged on their own
 * (rules/mcp-servers.ts).
 */
import { createHash } from "node:crypto";
import type { AGENT_METHODS, CLIENT_METHODS } from "@agentclientprotocol/sdk/unstable";

export const GRANTS = [
  "fs:read",
  "fs:write",
  "terminal",
  "agent:mcp",
  "agent:sessions",
  "agent:prompt",
  "agent:control",
  "permission:allow",
  "mcp:sampling",
  "mcp:elicitation",
  "mcp:roots",
] as const;
export type Grant = (typeof GRANTS)[number];

/** What the user hands over by giving each grant, in plain words (`cordon inspect`, `cordon check`, README). */
export const GRANT_MEANINGS: Record<Grant, string> = {
  "fs:read": "read any file the client lets the agent read, for its own purposes",
  "fs:write": "write any file the client lets the agent write, for its own purposes",
  terminal: "run commands in a terminal the client opens, for its own purposes",
  "agent:mcp": "make the agent start programs or connect to URLs (MCP servers) that you did not configure",
  "agent:sessions": "open agent sessions of its own and load, resume, fork, close and delete those (never yours), out of your sight",
  "agent:prompt": "send the agent prompts of its own, which the agent acts on with your authority",
  "agent:control": "change the agent's mode and options, and log it in or out",
  "permission:allow": "approve the agent's tool calls in your place (allow once / always) without asking you",
  "mcp:sampling": "have the agent's model write text for it (MCP sampling), on your account",
  "mcp:elicitation": "ask you questions (MCP elicitation) that the agent shows you as its own",
  "mcp:roots": "learn your workspace folders (MCP roots/list), which the agent shares with its MCP servers",
};

/**
 * The grant an MCP request from a proxy's MCP server to the agent's MCP client needs (the inner
 * method of an `mcp/message` toward the agent), or null: `ping`, logging, progress and
 * `list_changed` are about the server itself.
 */
const MCP_CLIENT_GRANTS = new Map<string, Grant>([
  ["sampling/createMessage", "mcp:sampling"],
  ["elicitation/create", "mcp:elicitation"],
  ["roots/list", "mcp:roots"],
]);

export function mcpClientGrantFor(method: string): Grant | null {
  return MCP_CLIENT_GRANTS.get(method) ?? null;
}

const FS_READ: (typeof CLIENT_METHODS)["fs_read_text_file"] = "fs/read_text_file";
const FS_WRITE: (typeof CLIENT_METHODS)["fs_write_text_file"] = "fs/write_text_file";
/** Every `terminal/*` method (create, output, wait_for_exit, kill, release, and any added later). */
const TERMINAL_PREFIX = "terminal/";

/** The grant a method needs when a proxy originates it toward the client, or null when it needs none. */
export function grantFor(method: string): Grant | null {
  if (method === FS_READ) return "fs:read";
  if (method === FS_WRITE) return "fs:write";
  if (method.startsWith(TERMINAL_PREFIX)) return "terminal";
  return null;
}

type AgentMethod = (typeof AGENT_METHODS)[keyof typeof AGENT_METHODS];

/** Session setup: declares MCP servers the agent starts or connects to. */
export const SESSION_SETUP = new Set<string>(["session/new", "session/load", "session/resume", "session/fork"] satisfies AgentMethod[]);

/**
 * The grant a call toward the agent needs when a proxy originates it (not the client's own, passed
 * on or altered), or null. Reads (`session/list`, `session/status`, `auth/status`) and `mcp/message`
 * (its own MCP-over-ACP servers) need none.
 */
const AGENT_GRANTS = new Map<string, Grant>([
  ...(["session/new", "session/load", "session/resume", "session/fork", "session/close", "session/delete"] satisfies AgentMethod[]).map(
    (m) => [m, "agent:sessions"] as const,
  ),
  ...(["session/archive", "session/unarchive", "session/set_title"] satisfies AgentMethod[]).map((m) => [m, "agent:sessions"] as const),
  ["session/prompt" satisfies AgentMethod, "agent:prompt"],
  ...(
    [
      "session/set_mode",
      "session/set_config_option",
      "authenticate",
      "logout",
      "providers/set",
      "providers/disable",
    ] satisfies AgentMethod[]
  ).map((m) => [m, "agent:control"] as const),
]);

export function agentGrantFor(method: string): Grant | null {
  return AGENT_GRANTS.get(method) ?? null;
}

/** JSON text with object keys sorted, so equal values compare equal however they were built. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Unkeyed entries (notifications, which are never answered) kept per proxy; the oldest go first. */
const MAX_UNKEYED = 256;

/**
 * Requests a proxy has been handed by its successor and may pass on without a grant.
 *
 * Cost: one 32-byte digest and the hop's request key per open request (never the params: a
 * 16 MiB `fs/write_text_file` costs the same as a read). An entry leaves when the proxy passes
 * the request on (`take`), or answers it (`release`), or restarts (`clear`); so the tracker is
 * bounded by the requests in flight inside the proxy, plus `MAX_UNKEYED` notifications.
 */
export class Forwardable {
  /** Digest of method + canonical params → the hop keys of the open requests with that content. */
  private readonly open = new Map<string, (string | null)[]>();
  /** Hop key → digest, to release an answered request. */
  private readonly byKey = new Map<string, string>();
  private readonly unkeyed: string[] = [];

  /** `key`: the hop's key of the delivered request (null for a notification). */
  add(key: string | null, method: string, params: unknown): void {
    const digest = digestOf(method, params);
    const keys = this.open.get(digest);
    if (keys) keys.push(key);
    else this.open.set(digest, [key]);
    if (key !== null) this.byKey.set(key, digest);
    else if (this.unkeyed.push(digest) > MAX_UNKEYED) this.drop(this.unkeyed.shift()!, null);
  }

  /** Consumes one matching entry; false when the proxy was never given this request. */
  take(method: string, params: unknown): boolean {
    const digest = digestOf(method, params);
    const keys = this.open.get(digest);
    if (!keys) return false;
    const key = keys.shift()!;
    if (keys.length === 0) this.open.delete(digest);
    if (key !== null) this.byKey.delete(key);
    else this.unkeyed.splice(this.unkeyed.indexOf(digest), 1);
    return true;
  }

  /** The proxy answered the request it was handed as `key`: it can no longer pass it on. */
  release(key: string): void {
    const digest = this.byKey.get(key);
    if (digest === undefined) return;
    this.byKey.delete(key);
    this.drop(digest, key);
  }

  /** Open entries (tests: the tracker is bounded). */
  get size(): number {
    let n = 0;
    for (const keys of this.open.values()) n += keys.length;
    return n;
  }

  private drop(digest: string, key: string | null): void {
    const keys = this.open.get(digest);
    const at = keys?.indexOf(key) ?? -1;
    if (!keys || at < 0) return;
    keys.splice(at, 1);
    if (keys.length === 0) this.open.delete(digest);
  }
}

function digestOf(method: string, params: unknown): string {
  return createHash("sha256").update(method).update("\n").update(canonical(params)).digest("base64");
}
