/**
 * Whether a range of a text is one JSON value, without building it: the check of
 * `assembly/json-check.ts`, compiled by `make build` to `dist/json-check.wasm` and run here.
 *
 * Why: the router reads most lines only to route them. A streamed update's `params` were parsed
 * by `JSON.parse` into a value no one read on the way to the client (Cordon with no proxy, or
 * proxies that do not watch updates): ~0.9 µs of a chunk's ~1.5 µs in one process. This check
 * costs ~0.3 µs for the same text, the copy into the module's memory included (a check written
 * in JavaScript cost as much as the parse: README, P2). The value is parsed when something reads it
 * (raw-json.ts `UnreadNotification`).
 *
 * The contract the callers rely on is one-sided: a range checked true is one that `JSON.parse`
 * accepts (the differential test in json-check.test.ts holds the two to the same grammar). A
 * false (or undefined: the module is not built, or the text is longer than its memory) only means
 * the caller parses the text as before, which accepts or refuses it with its own message.
 *
 * Cost: one copy of the text into the module's memory (`Buffer#ucs2Write`, ~0.1 µs for 200
 * characters) and one pass over it; nothing allocated. Loaded on first use (~1 ms).
 */
import { readFileSync } from "node:fs";
import { packagePath } from "../package-root.js";
import { ucs2Write } from "./ucs2.js";

/** Code units the module's memory holds (its first MiB, two bytes each); longer texts are not checked here. */
const MAX_UNITS = (1 << 20) / 2;

interface Checker {
  view: Buffer;
  check: (from: number, to: number, maxDepth: number) => number;
}

/** The loaded module; null when it could not be loaded (not built): callers parse instead. */
let checker: Checker | null | undefined;

function load(): Checker | null {
  try {
    const module = new WebAssembly.Module(readFileSync(packagePath("dist", "json-check.wasm")));
    const exports = new WebAssembly.Instance(module, {}).exports as { memory: WebAssembly.Memory; check: Checker["check"] };
    // The module never grows its memory, so one view serves every call.
    return { view: Buffer.from(exports.memory.buffer), check: exports.check };
  } catch {
    return null;
  }
}

/**
 * Whether `text`'s code units `[start, end)` are one JSON value that nests at most `maxDepth`
 * containers deep (blanks around it allowed, as `JSON.parse` allows them); undefined when it cannot
 * tell (no module, or `text` longer than its memory holds).
 */
export function isJsonValue(text: string, start: number, end: number, maxDepth: number): boolean | undefined {
  if (checker === undefined) checker = load();
  if (checker === null || text.length > MAX_UNITS) return undefined;
  ucs2Write(checker.view, text, 0, end * 2);
  return checker.check(start * 2, end * 2, maxDepth) === 1;
}
