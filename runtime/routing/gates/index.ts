/**
 * The ordered gates of each direction. Cordon's own bookkeeping (`$/cancel_request` translation,
 * `_cordon/log`, `initialize` handling) runs before these; everything that passes is forwarded.
 *
 *   from the client (or a parent)  reserved-method
 *   proxy → its successor (inner)  single-envelope, reserved-method
 *   proxy → its predecessor        reserved-method, conductor-method, grant (last: it consumes)
 *   from the agent                 reserved-method, conductor-method
 */

import { conductorMethods } from "./conductor-methods.js";
import type { Gate } from "./gate.js";
import { grant } from "./grant.js";
import { reservedMethods } from "./reserved-methods.js";
import { singleEnvelope } from "./single-envelope.js";

export const Gates = {
  fromClient: [reservedMethods],
  proxyToSuccessor: [singleEnvelope, reservedMethods],
  proxyToPredecessor: [reservedMethods, conductorMethods, grant],
  fromAgent: [reservedMethods, conductorMethods],
} as const satisfies Record<string, readonly Gate[]>;

export { check, type Gate, type Refusal } from "./gate.js";
export { successorInit } from "./successor-init.js";
