import { describe, expect, it } from "vitest";
import { mutate, seeded } from "../../test/helpers/mutation.js";
import { isJsonValue } from "./json-check.js";

/** Whether `JSON.parse` accepts `text`. */
const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

const check = (text: string, maxDepth = 1000) => isJsonValue(text, 0, text.length, maxDepth);

/** A random JSON value (the same ones for the same seed), written compact or with blanks. */
function* values(seed: number, count: number): Generator<string> {
  const random = seeded(seed);
  const strings = ["", "a", 'q"uote', "back\\slash", "tab\tnew\nline", "é😀", "\u0001", "\ud800", "}]", "\u2028"];
  const value = (depth: number): unknown => {
    const k = random(depth > 3 ? 5 : 7);
    if (k === 0) return strings[random(strings.length)];
    if (k === 1) return [0, -0, 1.5, -12e-3, 1e21, 123456789, -1][random(7)];
    if (k === 2) return [true, false, null][random(3)];
    if (k === 3 || k === 4) return random(10);
    if (k === 5) return Array.from({ length: random(4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: random(4) }, () => [strings[random(strings.length)], value(depth + 1)]));
  };
  for (let i = 0; i < count; i++) yield JSON.stringify(value(0), null, random(4) === 0 ? 1 : undefined);
}

/** `texts`, each mutated (`mutate`), the same ones for the same `seed`. */
function* mutated(texts: Iterable<string>, alphabet: string, seed: number): Generator<string> {
  const random = seeded(seed);
  for (const text of texts) yield mutate(text, alphabet, random);
}

describe("isJsonValue", () => {
  it("takes what JSON.parse takes and refuses what it refuses", () => {
    const valid = [
      "{}",
      "[]",
      '""',
      "0",
      "-0",
      "0.5",
      "-1.25e+10",
      "1E-2",
      "1e999",
      "true",
      "false",
      "null",
      ' \t\r\n{ "a" : [ 1 , { } ] } \n',
      '{"a":1,"a":2}', // JSON, if not I-JSON: the router's other rules decide about duplicates
      '"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00"',
      '"\ud800 a lone surrogate, as JavaScript strings may hold"',
      '"\u007f and \u2028 need no escape"',
    ];
    const invalid = [
      "",
      " ",
      "{",
      "}",
      "[1,]",
      '{"a":1,}',
      "{,}",
      '{"a"}',
      '{"a" 1}',
      "{a:1}",
      "'a'",
      "01",
      "-",
      "1.",
      ".5",
      "1e",
      "1e+",
      "+1",
      "0x10",
      "NaN",
      "Infinity",
      "tru",
      "nul",
      "falsy",
      "true false",
      "[] []",
      '"unterminated',
      '"bad \\x escape"',
      '"short \\u00e"',
      '"raw \u0001 control"',
      '"raw \n newline"',
      '"\\',
      "[1 2]",
      "\u00a0{}", // a blank JSON does not know
    ];
    for (const text of valid) expect([text, check(text)]).toEqual([text, true]);
    for (const text of invalid) expect([text, check(text)]).toEqual([text, false]);
    for (const text of [...valid, ...invalid]) expect([text, check(text)]).toEqual([text, parses(text)]);
  });

  it("agrees with JSON.parse on 30,000 random values and their mutations", () => {
    const alphabet = '{}[]",:\\ 0123456789-+.eEtrufalsn\u0000\u001f\ud83d\n';
    let taken = 0;
    for (const seed of [1, 7, 42]) {
      for (const text of values(seed, 5_000)) {
        expect(check(text), text).toBe(true);
        taken++;
      }
      for (const text of mutated(values(seed + 100, 5_000), alphabet, seed)) {
        const result = check(text);
        expect(result, text).toBe(parses(text));
        if (result) taken++;
      }
    }
    expect(taken).toBeGreaterThan(16_000); // the mutations did not all break the grammar
  });

  it("checks only the range it is given, and bounds the nesting", () => {
    const line = '{"jsonrpc":"2.0","method":"m","params":{"a":[1,{"b":2}]}}';
    const start = line.indexOf('"params":') + 9;
    expect(isJsonValue(line, start, line.length - 1, 3)).toBe(true);
    expect(isJsonValue(line, start, line.length, 3)).toBe(false); // the line's own `}` follows the value
    expect(isJsonValue(line, start, line.length - 1, 2)).toBe(false); // three containers deep
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    expect(check(deep(127), 127)).toBe(true);
    expect(check(deep(128), 127)).toBe(false);
    expect(check(deep(70_000), 100_000)).toBe(false); // past its stack: refused, never overrun
  });

  it("leaves a text longer than its memory to the caller (undefined)", () => {
    const long = `"${"x".repeat(600_000)}"`;
    expect(isJsonValue(long, 0, long.length, 10)).toBeUndefined();
    const fits = `"${"x".repeat(500_000)}"`;
    expect(isJsonValue(fits, 0, fits.length, 10)).toBe(true);
  });
});
