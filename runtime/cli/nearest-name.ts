/**
 * "Did you mean …?" for a misspelt name: the known name nearest to what was written, when it is
 * near enough to be the likely intent. Near means few edits (insertions, deletions, substitutions,
 * swaps of neighbours; case ignored), or the one name that what was written begins (`receiveTimeout`
 * → `receiveTimeoutMs`). Costs O(length²) per known name; config key lists are a dozen names.
 */

/** Edits between `a` and `b` (optimal string alignment: a swap of neighbours counts as one). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        rows[0].push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2][j - 2] + 1);
      rows[i].push(d);
    }
  }
  return rows[a.length][b.length];
}

/** The known name `written` most likely meant, or null when none is near enough. */
export function nearestName(written: string, known: readonly string[]): string | null {
  const w = written.toLowerCase();
  const extended = known.filter((k) => k.toLowerCase().startsWith(w) && w.length >= 3);
  if (extended.length === 1) return extended[0];
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const d = editDistance(w, name.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  // Up to one edit in three characters (at least one, at most three): "wams" → wasm, not "args" → agent.
  const allowed = Math.min(3, Math.max(1, Math.floor(written.length / 3)));
  return best !== null && bestDistance <= allowed ? best : null;
}
