/** The statistics the bench's tables read off its samples. */

/** The `q` quantile of `sorted` (ascending): the sample at `floor(q × n)`, the last for q = 1. */
export const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** The median of `xs` in any order, as `quantile` reads it (the upper one of an even count). */
export const median = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

/** The standard error of the mean of `xs`: their spread (sample standard deviation) over the square root of their count. */
export function standardError(xs: number[]): number {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1);
  return Math.sqrt(variance / xs.length);
}
