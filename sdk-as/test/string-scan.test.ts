/**
 * `stringEnd` (assembly/string-scan.ts), the SDK's skip over a JSON string token, against a
 * reference written the plain way (a backslash takes the unit after it; the first other quote
 * ends the string). The SIMD path takes over after a string's first 32 code units and goes 64 at a
 * time, so the cases put quotes, backslash runs of every parity and units whose low byte is `"` or
 * `\` on both sides of every block boundary, and end the input inside a string (it must not be
 * read past). The function is compiled on its own with the SDK's flags (`-O3`, SIMD on).
 */
import { readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const ENTRY = join(HERE, "string-scan.entry.ts");
const SOURCE = `import { stringEnd } from "../assembly/string-scan";
export function end(p: usize, e: usize): usize { return stringEnd(p, e); }
export function buffer(units: i32): usize { return changetype<usize>(new ArrayBuffer(units << 1)); }`;

interface Scan {
  memory: WebAssembly.Memory;
  end(p: number, e: number): number;
  buffer(units: number): number;
}

let scan: Scan;
let base = 0;
const CAPACITY = 4096;

beforeAll(async () => {
  const asc = await import("assemblyscript/asc");
  let binary: Uint8Array | undefined;
  const stderr = asc.createMemoryStream();
  const result = await asc.main(
    [
      relative(process.cwd(), ENTRY),
      "--outFile",
      "out.wasm",
      "-O3",
      "--runtime",
      "stub",
      "--enable",
      "simd",
      "--exportRuntime",
      "--noColors",
    ],
    {
      stderr,
      readFile: async (name: string, dir: string) => {
        const file = resolve(dir, name);
        if (file === ENTRY) return SOURCE;
        try {
          return await readFile(file, "utf8");
        } catch {
          return null;
        }
      },
      writeFile: (name: string, contents: string | Uint8Array) => {
        if (name.endsWith(".wasm") && typeof contents !== "string") binary = contents;
      },
      listFiles: () => [],
    },
  );
  if (result.error || !binary) throw new Error(`asc: ${result.error?.message}\n${stderr.toString()}`);
  const { instance } = await WebAssembly.instantiate(binary as Uint8Array<ArrayBuffer>, { env: { abort: () => {} } });
  scan = instance.exports as unknown as Scan;
  base = scan.buffer(CAPACITY + 8) >>> 0;
}, 60_000);

/** The reference: index past the closing quote of the string opening at 0, or 0 (none before `length`). */
function reference(units: string, length: number): number {
  for (let i = 1; i < length; i++) {
    const c = units.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c === 0x5c) i++;
  }
  return 0;
}

/** What `stringEnd` finds in `units` (a quote first), reading its first `length` units only. */
function scanned(units: string, length = units.length): number {
  expect(units.length).toBeLessThanOrEqual(CAPACITY);
  const view = new Uint16Array(scan.memory.buffer, base, CAPACITY + 8);
  view.fill(0x22); // quotes after the input: a read past `length` would find one
  for (let i = 0; i < units.length; i++) view[i] = units.charCodeAt(i);
  const found = scan.end(base, base + 2 * length) >>> 0;
  return found === 0 ? 0 : (found - base) / 2;
}

/** A seeded generator, so a failure names a case that can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

// Plain units, the two that matter, and units a sloppy narrowing would confuse with them
// (low byte 0x22 or 0x5c, or above 0x7fff).
const ALPHABET = ["a", " ", "ü", "\n", '"', "\\", "\u0122", "\u015c", "\u5c22", "\u225c", "\u8022", "\uff5c", "\ud83d", "\u0000"];

describe("stringEnd", () => {
  it("agrees with the reference on strings made of runs of backslashes and quotes at every offset", () => {
    let cases = 0;
    // A run of `run` backslashes, then a quote, starting at `at`: the quote ends the string when
    // `run` is even. Runs up to 130 cross one or two block boundaries; `at` covers the short part
    // (units 1–32), the switch to blocks and three block boundaries after it.
    for (let at = 1; at < 230; at++) {
      for (const run of [0, 1, 2, 3, 4, 5, 31, 32, 33, 63, 64, 65, 66, 127, 128, 129, 130]) {
        const text = `"${"x".repeat(at - 1)}${"\\".repeat(run)}"${"y".repeat(80)}"`;
        expect(scanned(text), `at ${at}, run ${run}`).toBe(reference(text, text.length));
        cases++;
      }
    }
    expect(cases).toBeGreaterThan(3000);
  });

  it("agrees with the reference on 20,000 random strings, cut at random lengths", () => {
    const next = random(20261207);
    for (let n = 0; n < 20_000; n++) {
      const length = 2 + Math.floor(next() * (n % 2 ? 400 : 2000));
      // Mostly plain text with escapes every few units, some runs of backslashes, few quotes.
      let text = '"';
      while (text.length < length) {
        const r = next();
        if (r < 0.05) text += "\\".repeat(1 + Math.floor(next() * 70));
        else if (r < 0.5) text += ALPHABET[Math.floor(next() * ALPHABET.length)];
        else text += r < 0.52 ? '\\"' : "abcdefgh".slice(0, 1 + Math.floor(next() * 8));
      }
      text = text.slice(0, length);
      const cut = next() < 0.2 ? Math.floor(next() * length) : length;
      expect(scanned(text, cut), `case ${n} (cut at ${cut}): ${JSON.stringify(text.slice(0, 120))}…`).toBe(reference(text, cut));
    }
  });

  it("finds nothing in an unterminated string, however long, and reads nothing past the end", () => {
    for (const length of [1, 2, 33, 34, 97, 98, 160, 161, 162, 1000, 4000]) {
      expect(scanned(`"${"z".repeat(length - 1)}`)).toBe(0);
      // A final backslash escapes the quote just past the end, which is not looked at.
      expect(scanned(`"${"z".repeat(Math.max(0, length - 2))}\\`)).toBe(0);
    }
  });

  it("ends at the first unescaped quote of a long escape-dense text (the P3 prompt's)", () => {
    const text = JSON.stringify('x"ü\n'.repeat(500));
    expect(scanned(`${text}, "next"`)).toBe(text.length);
  });
});
