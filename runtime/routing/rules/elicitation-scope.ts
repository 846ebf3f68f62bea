/**
 * A request-scoped `elicitation/create` names, in `params.requestId`, a request its sender is
 * handling — by the id the sender knows it by, which is the sender's hop id. Going back, it must
 * name the same request by the id of the hop that sent it, like `$/cancel_request` going forward —
 * and go to that hop, past the proxies the request was routed past (`Hop.skips`), which never knew
 * it. Not request-scoped (or naming no request of this hop's): toward the client as any call.
 */
import { idKey, paramsObject } from "../../protocol/json-rpc.js";
import { Methods } from "../../protocol/methods.js";
import { PASS, type Rule } from "./rule.js";

export const elicitationScope: Rule = {
  name: "elicitation-scope",
  judges: (method) => method === Methods.elicitationCreate,
  call(cx, call, from) {
    if (call.method !== Methods.elicitationCreate) return PASS;
    const params = paramsObject(call.params);
    const requestId = params?.requestId;
    const pending = typeof requestId === "string" || typeof requestId === "number" ? from.outgoing.get(idKey(requestId)) : undefined;
    if (pending?.kind !== "forward" || cx.indexOf(pending.from) >= cx.indexOf(from)) return PASS;
    return { kind: "pass", call: { ...call, params: { ...params, requestId: pending.fromId } }, to: cx.indexOf(pending.from) };
  },
};
