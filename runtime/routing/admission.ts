/**
 * What a message must be before the router classifies it, and how one that is not is refused.
 *
 * - Every peer's message nests at most `MAX_NESTING_DEPTH` levels (nesting.ts: what walks it later
 *   recurses).
 * - A proxy's text is I-JSON (i-json.ts): the rules read `JSON.parse`'s reading of it, and Cordon
 *   forwards the text itself, so it must read alike to every reader.
 *
 * A proxy's message is scanned once for both: the I-JSON scan of its text also bounds its depth
 * (`maxDepth`), and the refusal still says which rule it broke. A message without text (one Cordon
 * built) and the client's and the agent's messages only have their depth measured.
 *
 * A message refused whole is refused before it is classified: a request gets an error, a
 * notification is dropped (both logged, rate-bounded); an answer still answers its request, with
 * an error saying why.
 */
import { type Logger, sanitizeForLog } from "../log.js";
import { iJsonViolation } from "../protocol/i-json.js";
import { classify, ErrorCodes, errorResponse, type JsonRpcResponse } from "../protocol/json-rpc.js";
import { MAX_NESTING_DEPTH, nestsDeeperThan } from "../protocol/nesting.js";
import { rawOf } from "../protocol/raw-json.js";
import { failureData } from "./failure.js";
import type { Hop } from "./hop.js";

/** A rule a message broke: `why` completes "the message …"; `gate` names the rule in the error's data. */
export interface Breach {
  why: string;
  gate?: string;
}

const TOO_DEEP: Breach = { why: `nests deeper than ${MAX_NESTING_DEPTH} levels (Cordon's limit for any message)` };

/** The rule `value` breaks, if any; `proxy`: it came from a proxy (its text must be I-JSON too). */
export function breachOf(value: unknown, proxy: boolean): Breach | null {
  const text = proxy && typeof value === "object" && value !== null ? rawOf(value) : undefined;
  if (text === undefined) return nestsDeeperThan(value) ? TOO_DEEP : null;
  const violation = iJsonViolation(text, { maxDepth: MAX_NESTING_DEPTH });
  if (violation === null) return null;
  if (violation.rule === "nesting") return TOO_DEEP;
  return { why: `breaks I-JSON (RFC 7493): ${violation.detail}`, gate: "i-json" };
}

/**
 * Refuses `value` from `hop` whole. `dropped` warns (and traces); an answer's error is handed to
 * `reroute`, to travel back as the answer would have.
 */
export function refuseWhole(
  hop: Hop,
  value: unknown,
  { why, gate }: Breach,
  dropped: (why: string, message: unknown) => void,
  reroute: (answer: JsonRpcResponse) => void,
): void {
  const msg = value as Record<string, unknown>;
  const id = typeof msg.id === "string" || typeof msg.id === "number" ? msg.id : null;
  if (typeof msg.method === "string" || id === null) {
    const method = typeof msg.method === "string" ? sanitizeForLog(msg.method, 80) : "message";
    dropped(`${hop.label} sent a ${method} that ${sanitizeForLog(why)}; refused`, { id, method });
    const data = gate === undefined ? undefined : failureData("cordon", "refused", { gate });
    if (id !== null) hop.peer.send(errorResponse(id, ErrorCodes.invalidRequest, `Invalid request: the message ${why}`, data));
    return;
  }
  dropped(`${hop.label} answered with a message that ${sanitizeForLog(why)}; its requester gets an error`, { id });
  reroute(errorResponse(id, ErrorCodes.internalError, `${hop.label} answered with a result that ${why}`));
}

/** A bug in Cordon met this message: log it, answer a request with an error, and carry on. */
export function internalFault(log: Logger, hop: Hop, value: unknown, error: unknown): void {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  log.error(`internal error while routing a message from ${hop.label}: ${sanitizeForLog(detail, 2000)}`);
  try {
    const c = classify(value);
    if (c.kind === "request" && hop.alive) {
      const text = `Cordon failed to route ${sanitizeForLog(c.message.method, 80)}: ${(error as Error)?.message ?? error}`;
      hop.peer.send(errorResponse(c.message.id, ErrorCodes.internalError, text, failureData("cordon", "internal")));
    }
  } catch {
    // Nothing more can be said about this message.
  }
}
