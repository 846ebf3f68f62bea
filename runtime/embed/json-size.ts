/**
 * How much a parsed JSON value weighs, roughly: what the embedding API's bounds count (orphan
 * updates held for a pending setup, tool-call state, events waiting for a reader). The estimate
 * is the value's JSON length give or take quoting and escapes: strings by their length, numbers
 * and literals by a few bytes, plus a byte or two of punctuation per member.
 *
 * Cost: a walk of the value, stopped as soon as the count passes `limit`, so asking whether a
 * 16 MiB update is over a 1 MiB bound costs a 1 MiB walk. Iterative, so depth costs no stack.
 */
export function approxJsonBytes(value: unknown, limit: number = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const v = stack.pop();
    if (typeof v === "string") total += v.length + 2;
    else if (v === null || typeof v !== "object") total += 5;
    else if (Array.isArray(v)) {
      total += 2 + v.length;
      for (const item of v) stack.push(item);
    } else {
      total += 2;
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        total += key.length + 4;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return total;
}
