/**
 * Routing gates: small, named checks the conductor runs on a call before it forwards it. Each
 * direction has its ordered list (`index.ts`); the first gate that objects decides, and the call
 * is refused to its sender (a request gets a JSON-RPC error, a notification is dropped and logged).
 *
 * A gate sees only the call and the hop it came from. It must not throw on any value a peer can
 * send: methods and params are the peer's, and are hostile until checked.
 */
import { ErrorCodes } from "../../protocol/json-rpc.js";
import type { Call } from "../envelope.js";
import type { Hop } from "../hop.js";

export interface Refusal {
  /** The gate that refused (logs, tests). */
  gate: string;
  code: number;
  /** Says what was refused and why, for the sender and the operator. */
  message: string;
  /** The grant that would have let it pass, when one would. */
  grant?: string;
}

export type Gate = (call: Call, from: Hop) => Refusal | null;

/** The first refusal of `gates`, in order, or null when all let the call pass. */
export function check(gates: readonly Gate[], call: Call, from: Hop): Refusal | null {
  for (const gate of gates) {
    const refusal = gate(call, from);
    if (refusal) return refusal;
  }
  return null;
}

export const refusal = (gate: string, message: string, code: number = ErrorCodes.invalidRequest, grant?: string): Refusal =>
  grant === undefined ? { gate, code, message } : { gate, code, message, grant };

/** How a gate names a sender in its message: `proxy "redact"`, `the client`, `agent "x"`. */
export function sender(hop: Hop): string {
  return hop.position.role === "client" ? "the client" : hop.label;
}
