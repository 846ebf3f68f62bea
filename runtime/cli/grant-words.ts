/**
 * Grants in plain words, for `cordon inspect` (what a proxy asks for) and `cordon check` (what the
 * config gives): what the user hands over by granting each.
 */
import { GRANT_MEANINGS, type Grant } from "../routing/grants.js";

const WASI_MEANINGS: Record<string, string> = {
  "wasi:clocks": "read the wall clock (timing, timestamps)",
  "wasi:random": "get random numbers",
};

export function grantMeaning(grant: string): string {
  return GRANT_MEANINGS[grant as Grant] ?? WASI_MEANINGS[grant] ?? "(a grant Cordon does not know)";
}

/** One line per grant, `<indent><grant>  it may <meaning>`. */
export function grantLines(grants: readonly string[], indent: string): string[] {
  const width = Math.max(...grants.map((g) => g.length));
  return grants.map((g) => `${indent}${g.padEnd(width)}  it may ${grantMeaning(g)}`);
}
