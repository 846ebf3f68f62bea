/**
 * Failures as data. Every error Cordon answers on a component's behalf carries, beside its prose,
 * a machine-readable `data.cordon`: which component, what kind of failure, and what else is known
 * — so a client can tell "the redactor timed out" from "the agent exited" without parsing text.
 *
 *   { "code": -32603, "message": "proxy \"redact\" was stopped: receive used its fuel…",
 *     "data": { "cordon": { "component": "redact", "failure": "timeout" } } }
 *
 * Kinds: a sandbox's `trap`, `timeout`, `fault`, `crash`, `budget`; `exit` (a process ended);
 * `down` (the component had failed before and is restarting or given up); `refused` (a routing
 * gate refused the message; `gate` names it); `internal` (a bug in Cordon met the message).
 */
import type { FailureDetail } from "./peer.js";

export type FailureKind = "trap" | "timeout" | "fault" | "crash" | "budget" | "exit" | "down" | "refused" | "internal" | (string & {});

export interface FailureData {
  cordon: { component: string; failure: FailureKind; [more: string]: unknown };
}

/** `data` for an error about `component` (its trace name), from what its peer reported. */
export function failureData(component: string, fallback: FailureKind, detail?: FailureDetail): FailureData {
  const { kind, ...rest } = detail ?? {};
  return { cordon: { component, failure: kind ?? fallback, ...rest } };
}
