/**
 * A proxy's `watches` (its manifest's interest filter, `components/interest-filter.ts`) in plain
 * words, for `cordon inspect` and `cordon check`: which messages enter its sandbox, and that
 * everything else passes it unseen — so "did redact see this?" can be answered before running it.
 */
import type { Watches } from "../sandbox/manifest.js";

const SESSION_UPDATE = "session/update";

/** Lines (the first after the field label, the rest at `indent`) saying what a proxy with these `watches` sees. */
export function watchLines(
  watches: Watches | undefined,
  indent: string,
  filtersOff = process.env.CORDON_INTEREST_FILTERS === "off",
): string[] {
  if (!watches) return ["every message (its manifest declares no watches)"];
  const methods = watches.methods ?? [];
  const allUpdates = methods.includes(SESSION_UPDATE);
  const updates = allUpdates ? [] : (watches.updates ?? []);
  const seen: string[] = [];
  const handled = methods.filter((m) => m !== SESSION_UPDATE);
  if (handled.length > 0) seen.push(`${handled.length === 1 ? "method" : "methods"} ${handled.join(", ")}`);
  if (allUpdates) seen.push("every session/update");
  else if (updates.length > 0) seen.push(`session/update ${updates.length === 1 ? "kind" : "kinds"} ${updates.join(", ")}`);
  const lines = seen.length > 0 ? [`only ${seen.join("; ")}`] : ["nothing: it declares no method and no update kind"];
  lines.push(`${indent}everything else passes it without entering its sandbox (it never sees it)`);
  const answers = watches.answers;
  if (answers !== undefined && handled.length > 0) {
    lines.push(
      answers.length === 0
        ? `${indent}the answers to what it forwards pass it too`
        : `${indent}of the answers to what it forwards, it sees only those to ${answers.join(", ")}; the rest pass it`,
    );
  }
  if (filtersOff) lines.push(`${indent}(ignored now: CORDON_INTEREST_FILTERS=off makes every proxy see every message)`);
  return lines;
}
