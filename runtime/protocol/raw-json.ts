/**
 * Byte-faithful forwarding: every message keeps the text it arrived as, and what the conductor
 * changes on the way (the id of each hop, an envelope around it or taken off it) is spliced into
 * that text, so every other byte — key order, whitespace, number spellings like `1.0` or
 * 2^53+1, escapes — reaches the next peer as its sender wrote it.
 *
 * The text travels on the parsed value itself, in a hidden field (hidden-field.ts) set by the
 * framing layer (`attachRaw`) and read back when the message is written (`serialize`). A spread or
 * `Object.assign` copy does not carry it, so a copy made to change a member never carries the
 * original's (now stale) text; nor is it seen by `JSON.stringify`, `Object.keys` or deep equality.
 * A message without text (built by Cordon, or edited) is written with `JSON.stringify`. (A WeakMap
 * did this first: its ephemeron table, touched by every scavenge, and its lookups cost about a
 * quarter of a watching proxy's crossing; then a non-enumerable symbol property, whose
 * `defineProperty` cost ~0.8 µs per message.)
 *
 * Finding a member is one pass over the text (a character loop for structure, `stringEnd` to jump
 * over string literals), no tokenising of numbers or literals; the input was already accepted by
 * `JSON.parse`, so the scanner need not validate. Where members lie is found once per text and kept
 * (`TextLayout`), or known without a walk.
 */

import { hiddenField } from "./hidden-field.js";

/**
 * A message's text with what is learnt about it: the text built on first read when it is lazy, and
 * room for what its message's owner keeps beside it without a second field on the message — the
 * message an envelope carries, the envelope's method and a notification's envelope
 * (envelope.ts), and where members lie (`layout`).
 * A class with every field set in its constructor: one fixed shape, one allocation (a function
 * with properties added cost a second one, for its property store).
 */
export class TextHolder {
  text: string | undefined;
  build: (() => string) | undefined;
  carried: object | undefined = undefined;
  envelopeMethod: string | undefined = undefined;
  /** For a copy `withMember` made: the message it was copied from, and the member it sets. */
  splicedFrom: object | undefined = undefined;
  splicedKey: string | undefined = undefined;
  layout: TextLayout | undefined = undefined;
  /** A notification's envelope around this message, and that envelope's method (envelope.ts). */
  wrapped: object | undefined = undefined;
  wrappedIn: string | undefined = undefined;
  /**
   * A long text built from pieces (a splice of a long text, an envelope put on or taken off): the
   * pieces, each flat or a slice of a flat text, whose concatenation is `text` (see `piecesOf`).
   */
  pieces: readonly string[] | undefined = undefined;

  constructor(text: string | undefined, build: (() => string) | undefined) {
    this.text = text;
    this.build = build;
  }
}

/**
 * A notification read from a line that is exactly `{"jsonrpc":"2.0","method":"…","params":{…}}`,
 * compact, its method without escapes: proved so by the reader that builds it (parse-line.ts), so
 * where its params lie follows from its text (`layoutFor`) — found without a walk, and without a
 * layout stored for each of the many lines that no proxy ever wraps. Its members are set in that
 * order, as `JSON.parse` would have set them.
 */
export class CompactNotification {
  readonly jsonrpc = "2.0";
  method: string;
  params: unknown;

  constructor(method: string, params: unknown) {
    this.method = method;
    this.params = params;
  }
}

/**
 * A `CompactNotification` whose params are not read yet: the reader checked that their text is
 * one JSON value nesting at most `MAX_NESTING_DEPTH` − 1 deep (json-check.ts), and `params` parses
 * it on first read. Most streamed updates are never read on their way through Cordon: their text
 * is forwarded. Its text is attached next (`attachRaw`).
 *
 * `params` is an accessor, not an own member: `JSON.stringify` reads it through `toJSON`, a walk
 * with `for…in` finds it (it is enumerable), and a copy is made with `plainCopy`, not a spread
 * (which would leave it behind).
 */
export class UnreadNotification {
  readonly jsonrpc = "2.0";
  method: string;
  #params: unknown = UNREAD;
  #depthChecked = true;
  /** Its envelope toward proxies and that envelope's method (see `envelopeIn`). */
  #wrapped: object | undefined = undefined;
  #wrappedIn: string | undefined = undefined;

  constructor(method: string) {
    this.method = method;
  }

  /**
   * The envelope kept for it with `method` (envelope.ts makes one per notification and every proxy
   * it crosses gets that one), or undefined. Kept here, in fields of its own class, rather than
   * beside its text as for other messages (`TextHolder.wrapped`): no text field looked up, no
   * holder made, for each streamed update. A copy (`plainCopy`) does not carry it.
   */
  envelopeIn(method: string): object | undefined {
    return this.#wrappedIn === method ? this.#wrapped : undefined;
  }

  keepEnvelope(method: string, envelope: object): void {
    this.#wrapped = envelope;
    this.#wrappedIn = method;
  }

  /** Whether its params are still the ones the reader checked (nesting.ts need not walk them). */
  get depthChecked(): boolean {
    return this.#depthChecked;
  }

  get params(): unknown {
    if (!(#params in this)) return undefined; // read off another object (a generic copy of this one's prototype)
    if (this.#params === UNREAD) {
      const text = rawOf(this)!;
      this.#params = JSON.parse(text.slice(...compactParams(text)));
    }
    return this.#params;
  }

  set params(value: unknown) {
    this.#params = value;
    this.#depthChecked = false;
  }

  toJSON(): { jsonrpc: "2.0"; method: string; params: unknown } {
    return { jsonrpc: this.jsonrpc, method: this.method, params: this.params };
  }
}
Object.defineProperty(UnreadNotification.prototype, "params", { enumerable: true });

/** What an `UnreadNotification` holds before its params are read. */
const UNREAD = Symbol("params unread");

/** `message` as a plain object with its members as own ones (an `UnreadNotification`'s params included), for a spread copy. */
export const plainCopy = <T extends object>(message: T): T =>
  message instanceof UnreadNotification ? (message.toJSON() as unknown as T) : message;

/** The text a `CompactNotification`'s starts with, up to its method's value, and what lies between that and its params. */
export const COMPACT_HEAD = '{"jsonrpc":"2.0","method":"';
export const COMPACT_PARAMS = '","params":';

/** Where a compact notification's params lie in its text (`CompactNotification`, `UnreadNotification`): after its method, up to its last `}`. */
const compactParams = (text: string): Range => [text.indexOf('"', COMPACT_HEAD.length) + COMPACT_PARAMS.length, text.length - 1];

type Raw = string | TextHolder;
/** The text field of every message that has text. */
const RAW = hiddenField<Raw>();
const setRaw = RAW.set;

/**
 * Remembers `text` as the exact spelling of `value` (an object `JSON.parse(text)` returned, or one
 * Cordon wrote its text for), with where its members lie when the writer knows (`TextLayout`).
 */
export function attachRaw<T extends object>(value: T, text: string, layout?: TextLayout): T {
  if (layout === undefined) setRaw(value, text);
  else {
    const holder = new TextHolder(text, undefined);
    holder.layout = layout;
    setRaw(value, holder);
  }
  return value;
}

/**
 * Like `attachRaw`, for a text made of `pieces` (the text is their concatenation, built here
 * without being flattened): kept as pieces when long (see `piecesOf`), flattened when short.
 */
export function attachPieces<T extends object>(value: T, pieces: readonly string[], layout?: TextLayout): T {
  const holder = new TextHolder(undefined, undefined);
  holder.layout = layout;
  holder.text = textOf(holder, pieces);
  setRaw(value, holder);
  return value;
}

/**
 * Like `attachRaw`, with the text built only if someone reads it (then kept); returns its holder.
 * An envelope Cordon wraps around a message is often taken apart again in-process (the MCP bridge,
 * an interest filter) without ever being written; building its text eagerly cost a few µs per hop.
 */
export function attachLazyRaw(value: object, build: () => string): TextHolder {
  const holder = new TextHolder(undefined, build);
  setRaw(value, holder);
  return holder;
}

/** Whether `value` has text (without building lazy text). */
export const hasRaw = (value: object): boolean => RAW.has(value);

export function rawOf(value: object): string | undefined {
  const raw = RAW.get(value);
  if (raw === undefined || typeof raw === "string") return raw;
  // Built once and kept on the holder, which stays in the field.
  if (raw.text === undefined) raw.text = flat(raw.build!());
  return raw.text;
}

/**
 * `text` made one flat string in place. A text built by concatenation is a tree of pieces in V8,
 * and everything read from it afterwards walks that tree: a character loop over a built envelope
 * ran 3–5× slower than over a flat one (measured), and a written text is read at least twice (the
 * copy into a guest, the check of what the guest hands back). Converting to a number flattens the
 * string first; the result is thrown away.
 *
 * A long text is left as built: it is mostly only written (a 100 KB prompt on its way to the
 * agent), and its writers take it as pieces (`piecesOf`); whatever scans it later with a regular
 * expression or `indexOf` has V8 flatten it then, once.
 */
function flat(text: string): string {
  if (text.length <= FLATTEN_UP_TO) Number(text);
  return text;
}

/** Texts up to this many UTF-16 units are flattened when built (`flat`); every streamed update is. */
const FLATTEN_UP_TO = 16 * 1024;

/**
 * The pieces of `value`'s text when it is a long text built from pieces, else undefined (a text
 * read from a line or a guest is one flat string already).
 *
 * Why pieces: anything that reads a concatenation whole has V8 flatten it first — a new string as
 * long as the text, which for a 100 KB prompt (150 K UTF-16 units) is a 300 KB allocation in the
 * large-object space, ~530 µs here, mostly page faults. Writing that text to a pipe flattened it
 * (and then its concatenation with the newline again: 1.4 ms of CPU per write), and so did copying
 * it into a guest (570 µs against 4 µs for its pieces one by one). Writers that take pieces — the
 * socket's `writev` (ndjson-channel.ts), the copy into a guest's memory (canonical-host.ts) — read
 * each piece where it lies; pieces are sliced, never the concatenation (`slicePieces`).
 * `text`: the value's text (`serialize`), when the caller has it already.
 */
export function piecesOf(value: object, text?: string): readonly string[] | undefined {
  // Only a text longer than FLATTEN_UP_TO is kept as pieces (`textOf`): a shorter one needs no look.
  if (text !== undefined && text.length <= FLATTEN_UP_TO) return undefined;
  const raw = RAW.get(value);
  if (raw === undefined || typeof raw === "string") return undefined;
  if (raw.text === undefined) rawOf(value);
  return raw.pieces;
}

/** `value`'s text as pieces: its pieces, or the text itself as the one piece. */
function piecesOrText(value: object, text: string): readonly string[] {
  return piecesOf(value) ?? [text];
}

/** The pieces of the concatenation of `pieces` from `start` to `end`: the pieces it covers, and slices of the two it cuts. */
export function slicePieces(pieces: readonly string[], start: number, end: number): string[] {
  const out: string[] = [];
  let at = 0;
  for (const piece of pieces) {
    const next = at + piece.length;
    if (next > start && at < end)
      out.push(start <= at && next <= end ? piece : piece.slice(Math.max(0, start - at), Math.min(piece.length, end - at)));
    at = next;
    if (at >= end) break;
  }
  return out;
}

/** The text of `pieces`, for the text `holder` holds (a lazy text's builder returns it): kept as pieces when long, else one flat string. */
export function textOf(holder: TextHolder, pieces: readonly string[]): string {
  let text = "";
  for (const piece of pieces) text += piece;
  if (text.length > FLATTEN_UP_TO) holder.pieces = pieces;
  return flat(text);
}

/**
 * Where the members routing splices or takes apart lie in a message's text, when that is known
 * without a walk: recorded by the I-JSON scan of a proxy's output (routing/admission.ts), or by
 * construction (envelope.ts). Each is the only member of its name (the scan refuses duplicates,
 * Cordon writes none), so it can be spliced or sliced where it lies. `inner*`: the method and
 * params inside an envelope's params.
 */
export interface TextLayout {
  id?: Range;
  params?: Range;
  innerMethod?: Range;
  innerParams?: Range;
  /**
   * The members of `params`, when the walk that found it went through them (`layoutFor`): four
   * offsets each — name literal start and end, value start and end — in text order. An edit
   * handed back in place (components/edited-forward.ts) is placed with them, without walking
   * past params' values again (a 100 KB prompt's text, say) to learn its members' names.
   */
  paramsMembers?: readonly number[];
}

/**
 * The holder in `value`'s text field (undefined without text), a plain text field turned into one
 * (the field exists, so this only replaces its value): a place to keep what is learnt about the text.
 */
export function holderOf(value: object): TextHolder | undefined {
  const raw = RAW.get(value);
  if (raw === undefined || typeof raw !== "string") return raw;
  const holder = new TextHolder(raw, undefined);
  RAW.set(value, holder);
  return holder;
}

/** Records where members lie in `value`'s text (see `TextLayout`); a value without text keeps nothing. */
export function setLayout(value: object, layout: TextLayout): void {
  const holder = holderOf(value);
  if (holder !== undefined) holder.layout = layout;
}

/** What is known of where members lie in `value`'s text, if anything. */
export function layoutOf(value: object): TextLayout | undefined {
  const raw = RAW.get(value);
  return raw === undefined || typeof raw === "string" ? undefined : raw.layout;
}

/**
 * The holder of `value`'s text when it has one already (a lazy text, or one something was learnt
 * about), without making one: where envelope.ts finds the message an envelope carries.
 */
export function lazyRawOf(value: object): TextHolder | undefined {
  const raw = RAW.get(value);
  return raw === undefined || typeof raw === "string" ? undefined : raw;
}

/** The text to write for `message`: as it arrived (with Cordon's splices), or freshly serialised. */
export function serialize(message: object): string {
  return rawOf(message) ?? JSON.stringify(message);
}

/** `[start, end)` of a member's value in the text. */
export type Range = readonly [number, number];

/** Whether the code unit `c` is JSON whitespace (false for NaN, past a text's end). */
export const isBlank = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The first position at or after `pos` that is not JSON whitespace (`text.length` past the end). */
export function skipWs(text: string, pos: number): number {
  while (isBlank(text.charCodeAt(pos))) pos++; // NaN past the end: stops there
  return pos;
}

/**
 * The rest of a string literal after an escape: runs of ordinary characters, each escape taken
 * whole, then the closing quote. Irregexp runs it as one native loop, about 3× faster than hopping
 * from quote to quote once a string has many escaped quotes (user text pasted into a prompt).
 */
const STRING_REST = /[^"\\]*(?:\\[\s\S][^"\\]*)*"/y;

/** Escaped quotes hopped over with `indexOf` before a string is left to `STRING_REST`. */
const MAX_HOPS = 4;

/**
 * The closing quote of the string literal in which `quote` is the first quote after the opening
 * one, found by hopping over up to `MAX_HOPS` escaped quotes with `indexOf` (native, a word at a
 * time: a 100 KB text with a newline escape per line but no quote in it costs one call, against
 * ~140 µs for the pattern); -1 for a string with more, or none (`STRING_REST` then).
 */
export function closingQuote(text: string, quote: number): number {
  for (let hops = 0; quote !== -1; hops++) {
    if (!escapedAt(text, quote)) return quote;
    if (hops === MAX_HOPS) return -1;
    quote = text.indexOf('"', quote + 1);
  }
  return -1;
}

/** Whether the character at `pos` is escaped: an odd run of backslashes before it. */
export function escapedAt(text: string, pos: number): boolean {
  let backslashes = 0;
  for (let k = pos - 1; text.charCodeAt(k) === 0x5c; k--) backslashes++;
  return backslashes % 2 === 1;
}

/** End (exclusive) of the string literal whose opening quote is at `pos` (the text's end if it has none). */
export function stringEnd(text: string, pos: number): number {
  const quote = closingQuote(text, text.indexOf('"', pos + 1));
  if (quote !== -1) return quote + 1;
  STRING_REST.lastIndex = pos + 1;
  return STRING_REST.test(text) ? STRING_REST.lastIndex : text.length;
}

/** End (exclusive) of the JSON value that starts at `pos`. */
export function valueEnd(text: string, pos: number): number {
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
  const pos = skipWs(text, start);
  if (text.charCodeAt(pos) !== 0x7b) return null;
  const offsets: number[] = [];
  objectEnd(text, pos, offsets);
  const members = new Map<string, Range>();
  for (let i = 0; i < offsets.length; i += 4) members.set(nameAt(text, offsets[i], offsets[i + 1]), [offsets[i + 2], offsets[i + 3]]);
  return members;
}

/** The member name whose literal (its quotes included) is `[start, end)` of `text`, escapes decoded. */
export function nameAt(text: string, start: number, end: number): string {
  const literal = text.slice(start, end);
  return literal.includes("\\") ? (JSON.parse(literal) as string) : literal.slice(1, -1);
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
  return memberRanges(text, [key], start)?.[0];
}

/**
 * `memberRange` for several keys in one walk: each key's range (the last one for a repeated key),
 * in the order of `keys`; null when there is no object at `start`.
 */
function memberRanges(text: string, keys: readonly string[], start = 0, paramsMembers?: number[]): (Range | undefined)[] | null {
  let pos = skipWs(text, start);
  if (text.charCodeAt(pos) !== 0x7b) return null;
  const found: (Range | undefined)[] = keys.map(() => undefined);
  pos = skipWs(text, pos + 1);
  while (pos < text.length && text.charCodeAt(pos) !== 0x7d) {
    const keyEnd = stringEnd(text, pos);
    // The name as written, or decoded when it has an escape (then longer than any name it spells).
    const length = keyEnd - pos - 2;
    const decoded = hasBackslash(text, pos + 1, keyEnd - 1) ? (JSON.parse(text.slice(pos, keyEnd)) as string) : undefined;
    let named = -1;
    for (let k = 0; k < keys.length && named < 0; k++) {
      const key = keys[k];
      if (decoded === undefined ? length === key.length && text.startsWith(key, pos + 1) : decoded === key) named = k;
    }
    pos = skipWs(text, skipWs(text, keyEnd) + 1); // past the colon
    // `params`' members are recorded on the way through it (the last params' members, as JSON.parse reads it).
    const members = paramsMembers !== undefined && named >= 0 && keys[named] === "params" && text.charCodeAt(pos) === 0x7b;
    if (members) paramsMembers.length = 0;
    const end = members ? objectEnd(text, pos, paramsMembers) : valueEnd(text, pos);
    if (named >= 0) found[named] = [pos, end];
    pos = skipWs(text, end);
    if (text.charCodeAt(pos) === 0x2c) pos = skipWs(text, pos + 1);
  }
  return found;
}

/** End (exclusive) of the object whose `{` is at `pos`, its members' offsets pushed onto `members` (see `TextLayout.paramsMembers`). */
function objectEnd(text: string, pos: number, members: number[]): number {
  pos = skipWs(text, pos + 1);
  while (pos < text.length && text.charCodeAt(pos) !== 0x7d) {
    const nameEnd = stringEnd(text, pos);
    const from = skipWs(text, skipWs(text, nameEnd) + 1); // past the colon
    const end = valueEnd(text, from);
    members.push(pos, nameEnd, from, end);
    pos = skipWs(text, end);
    if (text.charCodeAt(pos) === 0x2c) pos = skipWs(text, pos + 1);
  }
  return pos + 1;
}

/**
 * `JSON.stringify(value)`, with a finite number (an id: ids are finite, `json-rpc.ts` `isId`)
 * written by `String`: the same text (both write the shortest round-trip form), without the call
 * into the runtime — ~10 against ~50 ns, and an id is written at each hop a request or answer
 * crosses.
 */
export const jsonOf = (value: unknown): string =>
  typeof value === "number" && Number.isFinite(value) ? String(value) : JSON.stringify(value);

/**
 * A shallow copy of `message` with `key` set to `value`, its text the original's with only that
 * member's value replaced — in place, so key order is kept. When the original has no text, or no
 * such member, the copy has no text and is serialised whole.
 *
 * The id (set on every hop) and params are found through the text's layout: walked once per text
 * (`layoutFor`) or known without a walk, and the copy's layout follows from the original's, so a
 * message crossing several hops is walked at most once, however large it is.
 */
export function withMember<T extends object>(message: T, key: string, value: unknown): T {
  // The id, set twice per proxy a request or answer crosses, as a named member: V8 defines it with
  // a plain store after the spread, a computed key through a megamorphic one (~50 ns more a copy).
  const copy = (key === "id" ? { ...plainCopy(message), id: value } : { ...plainCopy(message), [key]: value }) as T;
  // A copy of a copy that set the same member, whose text is not built yet (a request's or an
  // answer's id is set twice per proxy it crosses: the guest's, then the next hop's), is spliced
  // from that copy's source: one splice of the text instead of two.
  const lazy = lazyRawOf(message);
  const source = lazy?.text === undefined && lazy?.splicedKey === key ? lazy.splicedFrom! : message;
  if (!hasRaw(source)) return copy;
  // Spliced when the copy's text is first read: most copies are written, but not all.
  const holder = attachLazyRaw(copy, () => {
    const text = rawOf(source)!;
    const laid = key === "id" || key === "params";
    const layout = laid ? layoutFor(source)! : undefined;
    const range = laid ? layout![key as "id" | "params"] : memberRange(text, key);
    if (range === undefined) return JSON.stringify(copy);
    const replacement = jsonOf(value);
    if (layout !== undefined) holder.layout = shifted(layout, range, replacement.length);
    if (text.length <= FLATTEN_UP_TO) return text.slice(0, range[0]) + replacement + text.slice(range[1]);
    const pieces = piecesOrText(source, text);
    return textOf(holder, [...slicePieces(pieces, 0, range[0]), replacement, ...slicePieces(pieces, range[1], text.length)]);
  });
  holder.splicedFrom = source;
  holder.splicedKey = key;
  return copy;
}

/**
 * A shallow copy of `message` with `params` set to `value`, its text the original's with the code
 * units `[at, end)` of its params' text replaced by `insert` (an edit a guest handed back in place
 * of a copy of the whole message: components/edited-forward.ts). The caller knows `value` is what
 * that text reads as. Without text or params text, the copy has no text and is serialised whole.
 */
export function withParamsEdit<T extends object>(message: T, value: unknown, at: number, end: number, insert: string): T {
  const copy = { ...plainCopy(message), params: value } as T;
  if (!hasRaw(message)) return copy;
  const holder = attachLazyRaw(copy, () => {
    const text = rawOf(message)!;
    const layout = layoutFor(message)!;
    if (layout.params === undefined) return JSON.stringify(copy);
    const cut: Range = [layout.params[0] + at, layout.params[0] + end];
    holder.layout = grown(layout, cut, insert.length);
    if (text.length <= FLATTEN_UP_TO) return text.slice(0, cut[0]) + insert + text.slice(cut[1]);
    const pieces = piecesOrText(message, text);
    return textOf(holder, [...slicePieces(pieces, 0, cut[0]), insert, ...slicePieces(pieces, cut[1], text.length)]);
  });
  return copy;
}

/** `layout` after the text at `cut` (inside one or more of its ranges) was replaced by `length` characters. */
function grown(layout: TextLayout, cut: Range, length: number): TextLayout {
  const delta = length - (cut[1] - cut[0]);
  const move = (r: Range | undefined): Range | undefined =>
    r === undefined
      ? undefined
      : r[0] <= cut[0] && cut[1] <= r[1]
        ? [r[0], r[1] + delta]
        : r[0] >= cut[1]
          ? [r[0] + delta, r[1] + delta]
          : r;
  const members = layout.paramsMembers;
  let paramsMembers: number[] | undefined;
  if (members !== undefined) {
    // The member the cut falls in grows; the ones after it move. A cut between two members (an
    // edit that is not inside one value) leaves them unknown.
    paramsMembers = [];
    let inside = false;
    for (let i = 0; i < members.length; i += 4) {
      const [ns, ne, vs, ve] = [members[i], members[i + 1], members[i + 2], members[i + 3]];
      if (vs <= cut[0] && cut[1] <= ve) {
        inside = true;
        paramsMembers.push(ns, ne, vs, ve + delta);
      } else if (ns >= cut[1]) paramsMembers.push(ns + delta, ne + delta, vs + delta, ve + delta);
      else paramsMembers.push(ns, ne, vs, ve);
    }
    if (!inside) paramsMembers = undefined;
  }
  return movedLayout(layout, move, paramsMembers);
}

/** `layout` with each range moved by `move`, and `paramsMembers`. */
function movedLayout(
  layout: TextLayout,
  move: (r: Range | undefined) => Range | undefined,
  paramsMembers: readonly number[] | undefined,
): TextLayout {
  return {
    id: move(layout.id),
    params: move(layout.params),
    innerMethod: move(layout.innerMethod),
    innerParams: move(layout.innerParams),
    paramsMembers,
  };
}

const LAID_KEYS = ["id", "params"] as const;

/** `layout` after the text at `range` was replaced by `length` characters. */
function shifted(layout: TextLayout, range: Range, length: number): TextLayout {
  const delta = length - (range[1] - range[0]);
  const move = (r: Range | undefined): Range | undefined =>
    r === undefined ? undefined : r === range ? [r[0], r[0] + length] : r[0] >= range[1] ? [r[0] + delta, r[1] + delta] : r;
  // params' members move with it; a new params value has others.
  let paramsMembers = layout.paramsMembers;
  if (paramsMembers !== undefined && range === layout.params) paramsMembers = undefined;
  else if (paramsMembers !== undefined && layout.params !== undefined && layout.params[0] >= range[1])
    paramsMembers = moved(paramsMembers, delta);
  return movedLayout(layout, move, paramsMembers);
}

/** Offsets all moved by `delta`. */
const moved = (offsets: readonly number[], delta: number): number[] => offsets.map((o) => o + delta);

/**
 * Where `value`'s text has its `id` and `params` (undefined without text): recorded when known
 * (admission's scan, a text Cordon wrote, a splice of a text with a layout), read off the text of
 * a `CompactNotification`, else one walk of the top-level members; kept for every later lookup.
 */
function layoutFor(value: object): TextLayout | undefined {
  const holder = holderOf(value);
  if (holder === undefined) return undefined;
  const text = rawOf(value)!; // a lazy text records its layout as it is built
  if (holder.layout === undefined && (value instanceof CompactNotification || value instanceof UnreadNotification)) {
    holder.layout = { params: compactParams(text) };
  } else if (holder.layout === undefined) {
    const members: number[] = [];
    const [id, params] = memberRanges(text, LAID_KEYS, 0, members) ?? [];
    holder.layout = { id, params, paramsMembers: params !== undefined && members.length > 0 ? members : undefined };
  }
  return holder.layout;
}

/**
 * The text of `message`'s `params` as it arrived (undefined without text or params), as pieces of
 * its text (see `piecesOf`: never made whole): its place is found once per message (`layoutFor`),
 * though routing wraps the message for every proxy it crosses.
 */
export function rawParamsPieces(message: object): string[] | undefined {
  const range = layoutFor(message)?.params;
  return range && rawSlicePieces(message, range[0], range[1]);
}

/** The pieces of `value`'s text from `start` to `end` (see `piecesOf`). */
export function rawSlicePieces(value: object, start: number, end: number): string[] {
  return slicePieces(piecesOrText(value, rawOf(value)!), start, end);
}
