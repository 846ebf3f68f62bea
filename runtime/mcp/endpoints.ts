/**
 * What the loopback listeners of the MCP bridge share: one endpoint per rewritten `{"type":"acp"}`
 * declaration, guarded by the secret of the session setup request it was made for.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { AddressInfo, Server } from "node:net";
import type { Logger } from "../log.js";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import type { McpLink } from "./link.js";

export interface Endpoint {
  /** Random, in the URL path (http) or the bridge command's arguments (stdio). */
  readonly id: string;
  /** The `serverId` of the declaration: what `mcp/message` (or `mcp/connect`) names. */
  readonly serverId: string;
  readonly name: string;
  /** Shared by the endpoints of one session setup request; only the agent is given it. */
  readonly secret: string;
  /** The ACP session, once known (from the setup params, or the `session/new` / `fork` answer). */
  sessionId: string | null;
  /** Open MCP sessions of the agent's client on this endpoint. */
  readonly links: Set<McpLink>;
}

export interface EndpointHost {
  endpoint(id: string): Endpoint | undefined;
  /** Starts an MCP session on `endpoint` (a link, see link.ts); `toClient` delivers to the agent's MCP client. */
  openLink(endpoint: Endpoint, toClient: (message: JsonRpcMessage) => void): McpLink;
  readonly log: Logger;
}

export const newSecret = (): string => randomBytes(32).toString("base64url");
export const newEndpointId = (): string => randomUUID();

/** Constant-time comparison of a presented secret with the expected one. */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Starts `server` on an ephemeral port of the loopback interface only; resolves with the port. */
export async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/**
 * A warning that may be provoked from outside (a flood of bad connections): the first is logged at
 * once, then at most one line per `intervalMs`, saying how many were left out meanwhile.
 */
export function throttledWarn(log: Logger, intervalMs = 5000): (message: string) => void {
  let last = -Infinity;
  let skipped = 0;
  return (message) => {
    const now = performance.now();
    if (now - last < intervalMs) {
      skipped++;
      return;
    }
    last = now;
    log.warn(skipped > 0 ? `${message} (and ${skipped} more like it since the last report)` : message);
    skipped = 0;
  };
}

/**
 * Runs `fn` from an I/O callback (a socket's data or close, an HTTP response's close): an
 * exception there would be uncaught and end the whole process, so it is logged instead and
 * `fallback` runs (e.g. to answer the message with an error). Returns whether `fn` completed.
 */
export function guarded(log: Logger, what: string, fn: () => void, fallback?: (error: unknown) => void): boolean {
  try {
    fn();
    return true;
  } catch (error) {
    log.error(`MCP bridge: internal error while handling ${what}: ${(error as Error)?.stack ?? String(error)}`);
    try {
      fallback?.(error);
    } catch {
      // Nothing more to do.
    }
    return false;
  }
}
