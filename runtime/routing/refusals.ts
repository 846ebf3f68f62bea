/**
 * How the router says no: who is told, in which shape, and what the operator reads. A request
 * gets a JSON-RPC error (with `data.cordon` naming the rule when a rule refused it, failure.ts); a
 * notification has no one to answer and is only logged. Every refusal is a `dropped` route event
 * (events.ts): a warning, rate-bounded per peer, and a trace record with the message itself.
 */
import { type Logger, sanitizeForLog } from "../log.js";
import { classify, ErrorCodes, errorResponse, type JsonRpcResponse } from "../protocol/json-rpc.js";
import type { Breach } from "./admission.js";
import { type Call, isRequest } from "./envelope.js";
import { type FailureData, failureData } from "./failure.js";
import type { Refusal } from "./gates/gate.js";
import type { Hop } from "./hop.js";

export class Refusals {
  constructor(
    /** A message Cordon did not forward, and why (the `dropped` route event). */
    private readonly dropped: (hop: Hop, why: string, message?: unknown) => void,
    private readonly log: Logger,
  ) {}

  /** Answers `message` (sent by `to`) with an error on behalf of the chain; a notification is only logged. */
  call(message: Call, code: number, text: string, to: Hop, data?: FailureData): void {
    if (isRequest(message)) to.peer.send(errorResponse(message.id, code, text, data));
    else this.dropped(to, `${to.label}: ${sanitizeForLog(text)} (notification ${sanitizeForLog(message.method, 80)} dropped)`, message);
  }

  /** A rule refused `message` from `from`: the sender is told (requests), the operator always. */
  gated(message: Call, refusal: Refusal, from: Hop): void {
    const what = isRequest(message) ? "request refused" : "notification dropped";
    this.dropped(from, `${refusal.gate}: ${sanitizeForLog(refusal.message)}; ${what}`, message);
    if (isRequest(message) && from.alive) {
      const data = failureData("cordon", "refused", refusal.grant ? { gate: refusal.gate, grant: refusal.grant } : { gate: refusal.gate });
      from.peer.send(errorResponse(message.id, refusal.code, refusal.message, data));
    }
  }

  /**
   * Refuses `value` from `hop` whole, before it is classified (admission.ts): a request gets an
   * error, a notification is dropped; an answer still answers its request — `reroute` takes the
   * error that travels back in its place.
   */
  whole(hop: Hop, value: unknown, { why, gate }: Breach, reroute: (answer: JsonRpcResponse) => void): void {
    const msg = value as Record<string, unknown>;
    const id = typeof msg.id === "string" || typeof msg.id === "number" ? msg.id : null;
    if (typeof msg.method === "string" || id === null) {
      const method = typeof msg.method === "string" ? sanitizeForLog(msg.method, 80) : "message";
      this.dropped(hop, `${hop.label} sent a ${method} that ${sanitizeForLog(why)}; refused`, { id, method });
      const data = gate === undefined ? undefined : failureData("cordon", "refused", { gate });
      if (id !== null) hop.peer.send(errorResponse(id, ErrorCodes.invalidRequest, `Invalid request: the message ${why}`, data));
      return;
    }
    this.dropped(hop, `${hop.label} answered with a message that ${sanitizeForLog(why)}; its requester gets an error`, { id });
    reroute(errorResponse(id, ErrorCodes.internalError, `${hop.label} answered with a result that ${why}`));
  }

  /** A bug in Cordon met this message: log it, answer a request with an error, and carry on. */
  fault(hop: Hop, value: unknown, error: unknown): void {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    this.log.error(`internal error while routing a message from ${hop.label}: ${sanitizeForLog(detail, 2000)}`);
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
}
