/**
 * A proxy initializes its successor once (see gates/successor-init.ts for why). The rule applies
 * the gate's verdict — refuse a second `initialize`, replay the first answer to a restarted
 * instance, or let the first one through — and remembers the successor's answer for replays.
 *
 * Cost: one state per proxy that initialized its successor, kept for the conductor's life (a
 * restarted instance needs it).
 */
import type { JsonRpcResponse } from "../../protocol/json-rpc.js";
import { Methods } from "../../protocol/methods.js";
import { isRequest } from "../envelope.js";
import { type SuccessorInitState, successorInit as verdictFor } from "../gates/successor-init.js";
import type { Hop } from "../hop.js";
import { PASS, type Rule } from "./rule.js";

export function successorInit(): Rule {
  const states = new Map<Hop, SuccessorInitState>();
  return {
    name: "successor-init",
    judges: (method) => method === Methods.initialize,
    call(cx, call, from) {
      if (call.method !== Methods.initialize) return PASS;
      const state = states.get(from) ?? { kind: "none" };
      const verdict = verdictFor(from, state);
      if (verdict.kind === "refuse") return verdict;
      if (verdict.kind === "forward") {
        if (isRequest(call)) states.set(from, { kind: "pending" });
        return PASS;
      }
      // A restarted proxy gets the answer its first instance got; the successor is not asked twice.
      if (state.kind === "answered") states.set(from, { ...state, generation: from.generation });
      if (isRequest(call)) cx.send(from, { ...verdict.answer, id: call.id });
      return { kind: "handled" };
    },
    answer(_cx, answer, { asker, method, askerGeneration }) {
      if (method !== Methods.initialize || asker.position.role !== "proxy") return undefined;
      // An error answer lets the proxy try again; a result is replayed to its restarted instances.
      const kept: JsonRpcResponse = { jsonrpc: "2.0", id: null, result: answer.result };
      states.set(asker, answer.error !== undefined ? { kind: "none" } : { kind: "answered", answer: kept, generation: askerGeneration });
      return undefined;
    },
  };
}
