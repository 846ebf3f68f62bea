/**
 * A proxy may address only its own successor, and only with one envelope. The conductor unwraps
 * exactly one `proxy/successor` layer; were the inner message another envelope, the next proxy
 * would take it for something its *own* successor sent and forward it toward the client under
 * its own grants — a proxy without grants could borrow a neighbour's `fs:read`. So an inner
 * envelope (either dialect) is refused, as is any spelling of the conductor's `proxy/initialize`.
 */
import { isProxyInitialize, isProxySuccessor } from "../../protocol/methods.js";
import { type Gate, refusal, sender } from "./gate.js";

/** The methods this gate judges: an envelope or a `proxy/initialize`, in either dialect. */
export const isEnvelopeMethod = (method: string): boolean => isProxySuccessor(method) || isProxyInitialize(method);

export const singleEnvelope: Gate = (inner, from) => {
  if (isProxySuccessor(inner.method)) {
    return refusal(
      "single-envelope",
      `${sender(from)} sent an envelope inside an envelope (${inner.method}); a proxy may address only its own successor, with one envelope`,
    );
  }
  if (isProxyInitialize(inner.method)) {
    return refusal("single-envelope", `${inner.method} is only sent by the conductor; ${sender(from)} may not send it to its successor`);
  }
  return null;
};
