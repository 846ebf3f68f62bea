/**
 * Methods only a conductor sends: `initialize` (to the agent), `proxy/initialize` and the
 * `proxy/successor` envelope (to proxies), in either dialect. The agent may send none of them;
 * a proxy may send `initialize` only inside its envelope (to its successor, see
 * `successor-init.ts`), never toward its predecessor.
 */
import { isProxyInitialize, isProxySuccessor, Methods } from "../../protocol/methods.js";
import { type Gate, refusal, sender } from "./gate.js";

export const isConductorMethod = (method: string): boolean =>
  method === Methods.initialize || isProxyInitialize(method) || isProxySuccessor(method);

export const conductorMethods: Gate = (call, from) =>
  isConductorMethod(call.method)
    ? refusal("conductor-method", `${call.method} is only sent by a conductor to the components it starts; ${sender(from)} may not send it`)
    : null;
