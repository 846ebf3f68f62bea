/**
 * What a message must be before the router classifies it, and how one that is not is refused.
 *
 * - Every peer's message nests at most `MAX_NESTING_DEPTH` levels (nesting.ts: what walks it later
 *   recurses).
 * - A proxy's text is I-JSON (i-json.ts): the rules read `JSON.parse`'s reading of it, and Cordon
 *   forwards the text itself, so it must read alike to every reader.
 *
 * A proxy's message is scanned once for both: the I-JSON scan of its text also bounds its depth
 * (`maxDepth`), and the refusal still says which rule it broke. A message without text (one Cordon
 * built) and the client's and the agent's messages only have their depth measured.
 *
 * A message that breaks either is refused whole, before it is classified (refusals.ts).
 */
import { iJsonViolation } from "../protocol/i-json.js";
import { MAX_NESTING_DEPTH, nestsDeeperThan } from "../protocol/nesting.js";
import { rawOf, setLayout, type TextLayout } from "../protocol/raw-json.js";

/** A rule a message broke: `why` completes "the message …"; `gate` names the rule in the error's data. */
export interface Breach {
  why: string;
  gate?: string;
}

const TOO_DEEP: Breach = { why: `nests deeper than ${MAX_NESTING_DEPTH} levels (Cordon's limit for any message)` };

/** The rule `value` breaks, if any; `proxy`: it came from a proxy (its text must be I-JSON too). */
export function breachOf(value: unknown, proxy: boolean): Breach | null {
  const text = proxy && typeof value === "object" && value !== null ? rawOf(value) : undefined;
  if (text === undefined) return nestsDeeperThan(value) ? TOO_DEEP : null;
  // The same pass records where the members routing splices lie, so no later step walks the text again.
  const layout: TextLayout = {};
  const violation = iJsonViolation(text, { maxDepth: MAX_NESTING_DEPTH, layout });
  if (violation === null) {
    setLayout(value as object, layout);
    return null;
  }
  if (violation.rule === "nesting") return TOO_DEEP;
  return { why: `breaks I-JSON (RFC 7493): ${violation.detail}`, gate: "i-json" };
}
