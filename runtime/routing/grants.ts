/**
 * Authority a proxy may be granted. A proxy can always *forward* the agent's own requests; what
 * needs a grant is a request the proxy *originates* toward the client that reaches outside the
 * conversation — reading or writing the user's files, running commands.
 *
 * "Forwarded" is decided by content: the proxy received that exact request (method and params,
 * compared canonically) from its successor and has not answered it. A request the proxy made up,
 * or one it altered (another path, another command), is its own and needs the grant.
 */
import type { CLIENT_METHODS } from "@agentclientprotocol/sdk";

export const GRANTS = ["fs:read", "fs:write", "terminal"] as const;
export type Grant = (typeof GRANTS)[number];

const FS_READ: (typeof CLIENT_METHODS)["fs_read_text_file"] = "fs/read_text_file";
const FS_WRITE: (typeof CLIENT_METHODS)["fs_write_text_file"] = "fs/write_text_file";
/** Every `terminal/*` method (create, output, wait_for_exit, kill, release, and any added later). */
const TERMINAL_PREFIX = "terminal/";

/** The grant a method needs when a proxy originates it, or null when it needs none. */
export function grantFor(method: string): Grant | null {
  if (method === FS_READ) return "fs:read";
  if (method === FS_WRITE) return "fs:write";
  if (method.startsWith(TERMINAL_PREFIX)) return "terminal";
  return null;
}

/** JSON text with object keys sorted, so equal values compare equal however they were built. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Requests a proxy has been handed by its successor and may pass on without a grant. */
export class Forwardable {
  private readonly open = new Map<string, number>();

  add(method: string, params: unknown): void {
    const key = `${method}\n${canonical(params)}`;
    this.open.set(key, (this.open.get(key) ?? 0) + 1);
  }

  /** Consumes one matching entry; false when the proxy was never given this request. */
  take(method: string, params: unknown): boolean {
    const key = `${method}\n${canonical(params)}`;
    const n = this.open.get(key) ?? 0;
    if (n === 0) return false;
    if (n === 1) this.open.delete(key);
    else this.open.set(key, n - 1);
    return true;
  }

  clear(): void {
    this.open.clear();
  }
}
