/**
 * A proxy initializes its successor once. A second `initialize` — while the first is still
 * unanswered, or after it was answered — could hand the successor forged client capabilities, so
 * it is refused. The one exception is a restarted proxy: its new instance sends `initialize`
 * again, and gets the answer its predecessor instance got, without the successor being asked twice.
 */
import type { JsonRpcResponse } from "../../protocol/json-rpc.js";
import type { Hop } from "../hop.js";
import { type Refusal, refusal, sender } from "./gate.js";

export type SuccessorInit = { kind: "forward" } | { kind: "replay"; answer: JsonRpcResponse } | { kind: "refuse"; refusal: Refusal };

/** Where a proxy is with initializing its successor. */
export type SuccessorInitState =
  | { kind: "none" }
  | { kind: "pending" }
  /** `generation`: the instance that last got this answer (the first, or a restarted one by replay). */
  | { kind: "answered"; answer: JsonRpcResponse; generation: number };

/** What to do with `initialize` from `proxy` toward its successor, where it is at `state`. */
export function successorInit(proxy: Hop, state: SuccessorInitState): SuccessorInit {
  if (state.kind === "none") return { kind: "forward" };
  if (state.kind === "answered" && state.generation !== proxy.generation) return { kind: "replay", answer: state.answer };
  const why = state.kind === "pending" ? "its first initialize is still unanswered" : "it was answered already";
  return {
    kind: "refuse",
    refusal: refusal(
      "successor-init",
      `${sender(proxy)} sent initialize to its successor twice (${why}); a proxy initializes its successor once`,
    ),
  };
}
