/**
 * Mutated texts for the differential tests of the readers (a reader against `JSON.parse`): the
 * same texts for the same seed, so a failure can be replayed.
 */

/** A seeded pseudo-random source: `random(n)` is an integer in [0, n), the same sequence for the same seed. */
export function seeded(seed: number): (n: number) => number {
  return (n) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
}

/** `text` with one or two characters inserted, deleted or replaced at random, each drawn from `alphabet`. */
export function mutate(text: string, alphabet: ArrayLike<string>, random: (n: number) => number): string {
  for (let m = 1 + random(2); m > 0; m--) {
    const at = random(text.length + 1);
    const c = alphabet[random(alphabet.length)];
    const kind = random(3);
    text = text.slice(0, at) + (kind === 1 ? "" : c) + text.slice(kind === 0 ? at : at + 1);
  }
  return text;
}
