/**
 * The one rule between what a version asks for and what the user gave: **requested ⊆ granted**.
 * A version's request is its manifest's grants and the WASI its component imports (both in the
 * lock); the grant is the chain entry's `grants`. `add`, `install`, `update` and `run` all check it
 * here, so a hand-edited lock that asks for more than the config gives is refused like an update.
 */
import { describeGrant } from "./grant-names.js";
import { type Requested, requestedAuthority } from "./package-contents.js";

/** What `requested` asks for that `granted` does not give, sorted. */
export const missingGrants = (requested: Requested, granted: readonly string[]) =>
  requestedAuthority(requested).filter((g) => !granted.includes(g));

/** One line per requested grant, in plain words: `  + terminal  it may run commands in a terminal…`. */
export function grantLines(grants: readonly string[], mark = " "): string[] {
  const width = Math.max(0, ...grants.map((g) => g.length));
  return grants.map((g) => `  ${mark} ${g.padEnd(width)}  ${describeGrant(g)}`);
}
