/**
 * Byte-faithful forwarding: every message keeps the text it arrived as, and what the conductor
 * changes on the way (the id of each hop, an envelope around it or taken off it) is spliced into
 * that text, so every other byte — key order, whitespace, number spellings like `1.0` or
 * 2^53+1, escapes — reaches the next peer as its sender wrote it.
 *
 * The text travels on the parsed value itself, in a non-enumerable symbol-keyed field set by the
 * framing layer (`attachRaw`) and read back when the message is written (`serialize`). Being
 * non-enumerable, it is not copied by a spread or `Object.assign`, so a copy made to change a member
 * never carries the original's (now stale) text; nor is it seen by `JSON.stringify`, `Object.keys`
 * or deep equality. A message without text (built by Cordon, or edited) is written with
 * `JSON.stringify`. (A WeakMap did this before: its ephemeron table, touched by every scavenge, and
 * its lookups cost about a quarter of a watching proxy's crossing.)
 *
 * Finding a member is one pass over the text (a character loop for structure, `indexOf` to jump
 * over string literals), no tokenising of numbers or literals; the input was already accepted by
 * `JSON.parse`, so the scanner need not validate.
 */

const RAW = Symbol("cordon.raw");
type Raw = string | (() => string);
type Carrier = { [RAW]?: Raw };

/**
 * Sets the text field: defined once per object (non-enumerable), plainly assigned after that.
 * Messages are plain objects, never prototypes of one another, so a field read is an own field.
 */
function setRaw(value: object, raw: Raw): void {
  if ((value as Carrier)[RAW] !== undefined) (value as Carrier)[RAW] = raw;
  else Object.defineProperty(value, RAW, { value: raw, writable: true, configurable: true, enumerable: false });
}

/** Remembers `text` as the exact spelling of `value` (an object `JSON.parse(text)` returned). */
export function attachRaw<T extends object>(value: T, text: string): T {
  setRaw(value, text);
  return value;
}

/**
 * Like `attachRaw`, with the text built only if someone reads it (then kept). An envelope Cordon
 * wraps around a message is often taken apart again in-process (the MCP bridge, an interest
 * filter) without ever being written; building its text eagerly cost a few µs per hop.
 */
export function attachLazyRaw<T extends object>(value: T, build: () => string): T {
  setRaw(value, build);
  return value;
}

/** Whether `value` has text (without building lazy text). */
export const hasRaw = (value: object): boolean => (value as Carrier)[RAW] !== undefined;

export function rawOf(value: object): string | undefined {
  const raw = (value as Carrier)[RAW];
  if (typeof raw !== "function") return raw;
  // Built once and kept on the builder, which stays in the field (lazyRawOf hands it out).
  const lazy = raw as LazyText;
  if (lazy.text === undefined) lazy.text = raw();
  return lazy.text;
}

/**
 * A builder with its text once built, and room for what its message's owner keeps with it: the
 * message an envelope carries and the envelope's method (envelope.ts), and the text of `params`
 * once looked up (`rawParams`).
 */
export type LazyText = (() => string) & { text?: string; carried?: object; envelopeMethod?: string; params?: string | null };

/**
 * The builder `attachLazyRaw` set on `value` (undefined when its text is not lazy): a place to keep
 * something beside the text without a second field on the message (envelope.ts keeps the message
 * an envelope carries there).
 */
export function lazyRawOf(value: object): LazyText | undefined {
  const raw = (value as Carrier)[RAW];
  return typeof raw === "function" ? (raw as LazyText) : undefined;
}

/** The text to write for `message`: as it arrived (with Cordon's splices), or freshly serialised. */
export function serialize(message: object): string {
  return rawOf(message) ?? JSON.stringify(message);
}

/** `[start, end)` of a member's value in the text. */
export type Range = readonly [number, number];

function skipWs(text: string, pos: number): number {
  for (;;) {
    const c = text.charCodeAt(pos); // NaN past the end: stops there
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return pos;
    pos++;
  }
}

/** End (exclusive) of the string literal whose opening quote is at `pos`. */
function stringEnd(text: string, pos: number): number {
  let from = pos + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let backslashes = 0;
    for (let k = quote - 1; text.charCodeAt(k) === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** End (exclusive) of the JSON value that starts at `pos`. */
function valueEnd(text: string, pos: number): number {
  const c = text.charCodeAt(pos);
  if (c === 0x22) return stringEnd(text, pos);
  if (c === 0x7b || c === 0x5b) {
    // A character loop, jumping over string literals with indexOf: ~3× faster than a regex scan on ordinary messages.
    let depth = 0;
    const n = text.length;
    for (let i = pos; i < n; i++) {
      const ch = text.charCodeAt(i);
      if (ch === 0x22) i = stringEnd(text, i) - 1;
      else if (ch === 0x7b || ch === 0x5b) depth++;
      else if ((ch === 0x7d || ch === 0x5d) && --depth === 0) return i + 1;
    }
    return n;
  }
  // number, true, false, null: up to the next delimiter
  let end = pos;
  while (end < text.length) {
    const d = text.charCodeAt(end);
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
    end++;
  }
  return end;
}

/**
 * The members of the object whose `{` is the first non-blank character at or after `start`, by
 * key (the last one wins for a repeated key, as with `JSON.parse`). Null if no object starts there.
 */
export function objectMembers(text: string, start = 0): Map<string, Range> | null {
  let pos = skipWs(text, start);
  if (text.charCodeAt(pos) !== 0x7b) return null;
  const members = new Map<string, Range>();
  pos = skipWs(text, pos + 1);
  while (pos < text.length && text.charCodeAt(pos) !== 0x7d) {
    const keyEnd = stringEnd(text, pos);
    const literal = text.slice(pos, keyEnd);
    const key = literal.includes("\\") ? (JSON.parse(literal) as string) : literal.slice(1, -1);
    pos = skipWs(text, skipWs(text, keyEnd) + 1); // past the colon
    const end = valueEnd(text, pos);
    members.set(key, [pos, end]);
    pos = skipWs(text, end);
    if (text.charCodeAt(pos) === 0x2c) pos = skipWs(text, pos + 1);
  }
  return members;
}

function hasBackslash(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === 0x5c) return true;
  return false;
}

/**
 * `[start, end)` of member `key`'s value in the object whose `{` is the first non-blank character
 * at or after `start` (the last one for a repeated key, as with `JSON.parse`); undefined when there
 * is no object there or no such member. The same walk as `objectMembers`, without its Map or a
 * string per key: each name is compared where it lies (a name with an escape is decoded first).
 * Routing looks up one member per hop (`params`, `id`), so this is the hop's form.
 */
export function memberRange(text: string, key: string, start = 0): Range | undefined {
  let pos = skipWs(text, start);
  if (text.charCodeAt(pos) !== 0x7b) return undefined;
  let found: Range | undefined;
  pos = skipWs(text, pos + 1);
  while (pos < text.length && text.charCodeAt(pos) !== 0x7d) {
    const keyEnd = stringEnd(text, pos);
    const plain = keyEnd - pos - 2 === key.length && text.startsWith(key, pos + 1);
    const named = plain || (hasBackslash(text, pos + 1, keyEnd - 1) && JSON.parse(text.slice(pos, keyEnd)) === key);
    pos = skipWs(text, skipWs(text, keyEnd) + 1); // past the colon
    const end = valueEnd(text, pos);
    if (named) found = [pos, end];
    pos = skipWs(text, end);
    if (text.charCodeAt(pos) === 0x2c) pos = skipWs(text, pos + 1);
  }
  return found;
}

/**
 * A shallow copy of `message` with `key` set to `value`, its text the original's with only that
 * member's value replaced — in place, so key order is kept. When the original has no text, or no
 * such member, the copy has no text and is serialised whole.
 */
export function withMember<T extends object>(message: T, key: string, value: unknown): T {
  const copy = { ...message, [key]: value } as T;
  if (!hasRaw(message)) return copy;
  // Spliced when the copy's text is first read: most copies are written, but not all.
  setRaw(copy, () => {
    const text = rawOf(message)!;
    const range = memberRange(text, key);
    return range ? text.slice(0, range[0]) + JSON.stringify(value) + text.slice(range[1]) : JSON.stringify(copy);
  });
  return copy;
}

/**
 * The text of `message`'s `params` as it arrived (undefined without text or params), looked up once
 * per message: routing wraps the same message for every proxy it crosses, and each lookup walks
 * the message's top-level members. The first lookup turns a plain text field into a builder that
 * keeps the answer beside the text (a plain assignment: the field exists already).
 */
export function rawParams(message: object): string | undefined {
  const raw = (message as Carrier)[RAW];
  if (raw === undefined) return undefined;
  let lazy: LazyText;
  if (typeof raw === "function") lazy = raw as LazyText;
  else {
    lazy = (() => raw) as LazyText;
    lazy.text = raw;
    (message as Carrier)[RAW] = lazy;
  }
  if (lazy.params === undefined) {
    const text = rawOf(message)!;
    const range = memberRange(text, "params");
    lazy.params = range ? text.slice(range[0], range[1]) : null;
  }
  return lazy.params ?? undefined;
}

/** The text of member `key` of `message` as it arrived, if the message has text and the member. */
export function rawMember(message: object, key: string): string | undefined {
  const text = rawOf(message);
  const range = text === undefined ? undefined : memberRange(text, key);
  return range && text!.slice(range[0], range[1]);
}
