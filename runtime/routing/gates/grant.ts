/**
 * A proxy's calls toward the client that reach outside the conversation (the user's files, a
 * terminal) need a grant from the chain config — requests and notifications alike — unless the
 * proxy is passing on exactly what its successor asked for (`Forwardable`, see grants.ts).
 * Run last: a pass consumes the forwardable entry.
 */
import { grantFor } from "../grants.js";
import { type Gate, refusal, sender } from "./gate.js";

export const grant: Gate = (call, from) => {
  const needed = grantFor(call.method);
  if (!needed || from.forwardable.take(call.method, call.params) || from.grants.has(needed)) return null;
  return refusal("grant", `${call.method} needs the "${needed}" grant, which ${sender(from)} does not have`);
};
