/**
 * Today's gates as rules: a gate only refuses, so as a rule it refuses or passes. The gates stay
 * in `gates/` (pure functions of the call and its sender, each with its reason in its header).
 */
import type { Gate } from "../gates/gate.js";
import { PASS, type Rule } from "./rule.js";

export function gateRule(name: string, gate: Gate, judges?: (method: string) => boolean): Rule {
  return {
    name,
    judges,
    call: (_cx, call, from) => {
      const refusal = gate(call, from);
      return refusal ? { kind: "refuse", refusal } : PASS;
    },
  };
}
