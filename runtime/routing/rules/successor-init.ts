/**
 * A proxy initializes its successor once (see gates/successor-init.ts for why). The rule applies
 * the gate's verdict — refuse a second `initialize`, replay the first answer to a restarted
 * instance, or let the first one through — and remembers the successor's answer for replays.
 */
import type { JsonRpcResponse } from "../../protocol/json-rpc.js";
import { Methods } from "../../protocol/methods.js";
import { isRequest } from "../envelope.js";
import { successorInit as verdictFor } from "../gates/successor-init.js";
import { PASS, type Rule } from "./rule.js";

export const successorInit: Rule = {
  name: "successor-init",
  call(cx, call, from) {
    if (call.method !== Methods.initialize) return PASS;
    const verdict = verdictFor(from);
    if (verdict.kind === "refuse") return verdict;
    if (verdict.kind === "forward") {
      from.initializingSuccessor(isRequest(call));
      return PASS;
    }
    // A restarted proxy gets the answer its first instance got; the successor is not asked twice.
    from.successorInitReplayed();
    if (isRequest(call)) cx.send(from, { ...verdict.answer, id: call.id });
    return { kind: "handled" };
  },
  answer(_cx, answer, { asker, method, askerGeneration }) {
    if (method !== Methods.initialize || asker.position.role !== "proxy") return undefined;
    // An error answer lets the proxy try again; a result is replayed to its restarted instances.
    const kept: JsonRpcResponse | null = answer.error !== undefined ? null : { jsonrpc: "2.0", id: null, result: answer.result };
    asker.successorInitialized(kept, askerGeneration);
    return undefined;
  },
};
