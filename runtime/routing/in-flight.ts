/**
 * Whether a request may be delivered at all: its target runs, its sender does not reuse the id of
 * a request still in flight (the answer could not be told apart), and the sender is within its
 * bound of requests in flight.
 *
 * A proxy can mint requests ten thousand per delivery; each costs a pending entry on two hops until
 * answered, so the count is bounded, generously for the client and the agent, tighter for a proxy.
 */
import { sanitizeForLog } from "../log.js";
import { ErrorCodes, idKey, type JsonRpcRequest } from "../protocol/json-rpc.js";
import { traceName } from "./events.js";
import { type FailureData, failureData } from "./failure.js";
import type { Hop } from "./hop.js";

/** Requests one peer may have waiting inside the chain at once. */
export const MAX_IN_FLIGHT = { proxy: 4_096, peer: 65_536 } as const;

/** Why the sender is refused. */
export interface Undeliverable {
  code: number;
  text: string;
  data?: FailureData;
}

/** Why `from`'s `request` cannot be delivered to `to` now, or null when it can. */
export function undeliverable(from: Hop, request: JsonRpcRequest, to: Hop): Undeliverable | null {
  if (!to.alive)
    return {
      code: ErrorCodes.internalError,
      text: `${to.label} is not running: it ${to.failure}`,
      data: failureData(traceName(to), "down"),
    };
  if (from.incoming.has(idKey(request.id))) {
    const id = sanitizeForLog(JSON.stringify(request.id), 80);
    return { code: ErrorCodes.invalidRequest, text: `request id ${id} is already in use by a request still in flight` };
  }
  const limit = from.position.role === "proxy" ? MAX_IN_FLIGHT.proxy : MAX_IN_FLIGHT.peer;
  if (from.incoming.size < limit) return null;
  const who = from.position.role === "client" ? "the client has" : `${from.label} has`;
  return { code: ErrorCodes.internalError, text: `${who} ${limit} requests in flight already (Cordon's limit); wait for answers` };
}
