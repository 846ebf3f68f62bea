/**
 * Bounds how deeply a peer's JSON may nest.
 *
 * `JSON.parse` is iterative in V8, so a 10 KB line of `[[[[…` parses fine — but everything that
 * walks the value afterwards recursively (`JSON.stringify` when the message is forwarded, the grant
 * tracker's canonical form, a trace write) overflows the stack on it. So every message is measured
 * once, right after parsing and before anything else touches it, and one that nests deeper than
 * the limit is refused whole. A proxy's message is measured by the I-JSON scan of its text instead
 * (i-json.ts, `maxDepth`: one pass for both rules, routing/admission.ts); this walk measures the
 * rest (the client's and the agent's, and values without their text).
 *
 * Cost: one visit per container node, none per byte — a 10 MB string is one node. The walk itself
 * recurses at most `max` frames deep, so it cannot overflow on the input it is guarding against.
 * A message that still has the text it was parsed from (`attachRaw`) and is shorter than
 * 2 × (max + 1) characters is not walked at all: every level takes an opening and a closing
 * bracket, so such a text cannot nest deeper than `max`.
 */
import { rawOf, UnreadNotification } from "./raw-json.js";

/** Deepest nesting Cordon forwards. ACP's own shapes nest about 10 deep; tool inputs rarely 30. */
export const MAX_NESTING_DEPTH = 128;

/** Whether `value` nests objects/arrays more than `max` levels deep (the message itself is level 1). */
export function nestsDeeperThan(value: unknown, max: number = MAX_NESTING_DEPTH): boolean {
  if (typeof value !== "object" || value === null) return false;
  // Its params' text was checked to nest at most MAX_NESTING_DEPTH − 1 deep when it was read (parse-line.ts).
  if (value instanceof UnreadNotification && value.depthChecked && max >= MAX_NESTING_DEPTH) return false;
  const text = rawOf(value);
  if (text !== undefined && text.length < 2 * (max + 1)) return false;
  return exceeds(value, max);
}

function exceeds(value: unknown, budget: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (budget === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (exceeds(item, budget - 1)) return true;
    return false;
  }
  for (const key in value) {
    if (exceeds((value as Record<string, unknown>)[key], budget - 1)) return true;
  }
  return false;
}
