/**
 * One NDJSON line read as a message: `JSON.parse`'s value with the line's text attached
 * (raw-json.ts `attachRaw`), and, for a message written the way ACP's SDKs write one — compact,
 * its members in the order `jsonrpc`, `id`, `method`, `params` / `result` / `error` — where the
 * members routing splices or wraps lie, known without a walk of the text.
 *
 * Why: routing wraps a message for each proxy it crosses (which needs its params' text) and gives
 * it a new id on each hop (spliced where the id lies). Finding those places was a walk of the
 * whole text, once per message: ~0.7 µs of the ~9 µs a streamed chunk cost through three watching
 * proxies, ~160 µs for a 100 KB prompt. Here the last member's text is parsed by a `JSON.parse` of
 * its own, which both reads it and proves where it lies: if the text between `"params":` (or
 * `"result":`, `"error":`) and the line's last `}` parses as one value, nothing follows it, and
 * the line is exactly the members before it, compared as written, and that one.
 *
 * - A notification `{"jsonrpc":"2.0","method":"…","params":{…}}` is an `UnreadNotification`
 *   (raw-json.ts): its params are checked to be one JSON value (json-check.ts), not parsed, and
 *   parsed when first read; where the check cannot say (its module missing, a text past its memory,
 *   params it refuses), they are parsed here and it is a `CompactNotification`. Either way the
 *   params' place follows from the text: nothing is stored beside the text for the many lines no
 *   proxy wraps (a layout per line cost Cordon 0 ~0.1 µs a chunk).
 * - A request `{"jsonrpc":"2.0","id":…,"method":"…","params":…}` and an answer
 *   `{"jsonrpc":"2.0","id":…,"result"|"error":…}` have their id's place (and a request's params')
 *   recorded with the text; the id is an integer as JSON writes one, or a string without escapes.
 *   A request's params of 4 KB or more are read member by member the same way (`objectAlone`), so
 *   their members' places are recorded too: an edit in a 100 KB prompt is placed without a walk.
 *
 * Reading a streamed update costs ~0.1 µs more than `JSON.parse` with its text attached, measured
 * alone (1.0–1.1 against 0.91–0.96 µs, `bench/hot-path.ts`; within noise in a chain), and saves
 * each walk that finds a place later; a common method is the interned constant (`COMMON`).
 *
 * The contract is one-sided: the value is the one `JSON.parse(line)` gives (the same members in
 * the same order; an `UnreadNotification`'s params through its accessor, `toJSON` and
 * `plainCopy`), and a place is known only where the shape above is proved. A method or id is
 * taken as written only if it has no escape and no control character (then its text is its
 * value); anything else — another order, whitespace, a member after the last one above, a line
 * that is not JSON — is parsed whole as before, so its error says what is wrong. A line that
 * starts like one of these but has something after its last member costs one failed parse of its
 * tail first (a notification's is checked to end in `}}`, so that a request with its id written
 * last never gets there).
 */

import { isJsonValue } from "./json-check.js";
import { MAX_NESTING_DEPTH } from "./nesting.js";
import {
  attachRaw,
  CompactNotification,
  COMPACT_HEAD as HEAD,
  isBlank,
  COMPACT_PARAMS as PARAMS,
  stringEnd,
  UnreadNotification,
  valueEnd,
} from "./raw-json.js";

/** How every message an ACP SDK writes begins; a request or an answer has its id next. */
const JSONRPC = '{"jsonrpc":"2.0",';
const ID = '"id":';
/** What may follow the id: a request's method, an answer's result or error. */
const METHOD = ',"method":"';
const RESULT = ',"result":';
const ERROR = ',"error":';

/**
 * Whether `literal` is written in `text` at `at`. `String#startsWith` compares ~2.5 ns a character
 * here (~70 ns for the 27 of a notification's head); an equality with a slice ~1 ns (measured).
 */
const writtenAt = (text: string, literal: string, at: number): boolean => text.slice(at, at + literal.length) === literal;

/** What follows `JSONRPC` in a notification: its method (HEAD is the two together). */
const METHOD_NEXT = HEAD.slice(JSONRPC.length);

/**
 * The methods nearly every line carries: a method found among them is this (interned) string, not
 * a slice of the line — routing compares a method with its constants and looks its rules up by it,
 * and a slice is compared and hashed character by character each time.
 */
const COMMON = ["session/update", "session/cancel", "$/cancel_request", "session/prompt", "session/request_permission"];

/** The method written from `from` to the quote at `quote` (no escape in it). */
function methodAt(text: string, from: number, quote: number): string {
  const length = quote - from;
  for (const method of COMMON) if (method.length === length && writtenAt(text, method, from)) return method;
  return text.slice(from, quote);
}

/** Whether `[from, to)` of `text` holds no escape and no control character: a string literal's text that is its value. */
function plainText(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x5c) return false; // JSON has no raw control character in a string; an escape needs decoding
  }
  return true;
}

/** The message a line holds (its text attached); throws as `JSON.parse` does for a line that is not JSON. */
export function parseLine(text: string): unknown {
  const compact = writtenAt(text, JSONRPC, 0) ? (readNotification(text) ?? readWithId(text)) : undefined;
  if (compact !== undefined) return compact;
  const value: unknown = JSON.parse(text);
  if (typeof value === "object" && value !== null) attachRaw(value, text);
  return value;
}

/** A notification of the shape above, or undefined (the caller parses the line whole). */
function readNotification(text: string): object | undefined {
  if (!writtenAt(text, METHOD_NEXT, JSONRPC.length)) return undefined; // JSONRPC: checked by the caller
  const quote = text.indexOf('"', HEAD.length);
  if (quote === -1 || !writtenAt(text, PARAMS, quote)) return undefined;
  const start = quote + PARAMS.length;
  const end = text.length - 1;
  // params is an object, and the line ends right after it: `…}}`.
  if (text.charCodeAt(start) !== 0x7b || text.charCodeAt(end) !== 0x7d || text.charCodeAt(end - 1) !== 0x7d) return undefined;
  if (!plainText(text, HEAD.length, quote)) return undefined;
  // Checked, not parsed: most are forwarded as their text, and `params` parses it if read.
  if (isJsonValue(text, start, end, MAX_NESTING_DEPTH - 1) === true)
    return attachRaw(new UnreadNotification(methodAt(text, HEAD.length, quote)), text);
  const params = parsedAlone(text, start, end);
  if (params === NOT_ALONE) return undefined;
  return attachRaw(new CompactNotification(methodAt(text, HEAD.length, quote), params), text);
}

/**
 * A request `{"jsonrpc":"2.0","id":…,"method":"…","params":…}` or an answer
 * `{"jsonrpc":"2.0","id":…,"result"|"error":…}`, compact and in that order, its id an integer or
 * a string without escapes; or undefined. The last member's text is parsed alone, which proves
 * nothing follows it, so the id written here is the message's only one: its place (and a request's
 * params') is recorded with the text, and the id a proxy hop splices in place is found without a
 * walk of the message (a 100 KB prompt's took ~160 µs).
 */
function readWithId(text: string): object | undefined {
  const at = JSONRPC.length + ID.length;
  if (!writtenAt(text, ID, JSONRPC.length)) return undefined;
  const idEnd = idTokenEnd(text, at);
  if (idEnd === -1) return undefined;
  const end = text.length - 1;
  if (text.charCodeAt(end) !== 0x7d) return undefined;
  const id = text.charCodeAt(at) === 0x22 ? text.slice(at + 1, idEnd - 1) : Number(text.slice(at, idEnd));
  if (writtenAt(text, METHOD, idEnd)) {
    const from = idEnd + METHOD.length;
    const quote = text.indexOf('"', from);
    if (quote === -1 || !writtenAt(text, PARAMS, quote) || !plainText(text, from, quote)) return undefined;
    const start = quote + PARAMS.length;
    if (isBlank(text.charCodeAt(start)) || isBlank(text.charCodeAt(end - 1))) return undefined; // the range recorded is the value's own
    const members: number[] | undefined = end - start >= MEMBERWISE_MIN ? [] : undefined;
    const read = members === undefined ? NOT_ALONE : objectAlone(text, start, end, members);
    const params = read === NOT_ALONE ? parsedAlone(text, start, end) : read;
    if (params === NOT_ALONE) return undefined;
    const layout = { id: [at, idEnd] as const, params: [start, end] as const, paramsMembers: read === NOT_ALONE ? undefined : members };
    return attachRaw({ jsonrpc: "2.0", id, method: methodAt(text, from, quote), params }, text, layout);
  }
  const isResult = writtenAt(text, RESULT, idEnd);
  if (!isResult && !writtenAt(text, ERROR, idEnd)) return undefined;
  const value = parsedAlone(text, idEnd + (isResult ? RESULT : ERROR).length, end);
  if (value === NOT_ALONE) return undefined;
  const answer = isResult ? { jsonrpc: "2.0", id, result: value } : { jsonrpc: "2.0", id, error: value };
  return attachRaw(answer, text, { id: [at, idEnd] });
}

/**
 * End of the id token at `at`, followed by a comma: an integer as JSON writes one (then `Number`
 * reads it as `JSON.parse` does), or a string without escapes or control characters; else -1.
 */
function idTokenEnd(text: string, at: number): number {
  if (text.charCodeAt(at) === 0x22) {
    const quote = text.indexOf('"', at + 1);
    return quote !== -1 && plainText(text, at + 1, quote) && text.charCodeAt(quote + 1) === 0x2c ? quote + 1 : -1;
  }
  let i = text.charCodeAt(at) === 0x2d ? at + 1 : at; // a minus sign
  const first = text.charCodeAt(i);
  if (first < 0x30 || first > 0x39) return -1;
  i++;
  if (first !== 0x30) while (text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++; // no leading zero
  return text.charCodeAt(i) === 0x2c ? i : -1;
}

/** What `parsedAlone` returns when the text is not one JSON value (so something follows it). */
const NOT_ALONE = Symbol("not alone");

/**
 * Params at least this long are read member by member (`objectAlone`): below it, a walk of the
 * text when a proxy's edit needs one costs less than the extra parses of its members.
 */
const MEMBERWISE_MIN = 4096;

/**
 * Members read one by one before the reader gives up and parses the object whole: a params object
 * of many small members (no ACP request has more than a handful) would otherwise cost a `JSON.parse`
 * call for each, several times one parse of the whole.
 */
const MEMBERWISE_MAX = 32;

/**
 * `[start, end)` of `text` read as one compact JSON object member by member, each member's place
 * pushed onto `members` (name literal start and end, value start and end: raw-json.ts
 * `TextLayout.paramsMembers`); or `NOT_ALONE` (then the caller parses it whole).
 *
 * Why: a proxy that edits a long request in place (a block put before a 100 KB prompt,
 * edited-forward.ts) needs params' members to know the member it edits is the only one of its
 * name, and walking past the prompt's text to learn them cost ~150–200 µs, about what its parse
 * costs. Here the members are walked up to the one that ends the object, whose value is parsed
 * alone from its start to the object's `}`: if that parses as one value, it is the last member.
 * Each earlier one is walked and parsed alone, so every character is parsed once, as in one
 * `JSON.parse`, and only the members before the last are walked (a session's id, say).
 *
 * The value is `JSON.parse`'s: the same members in the same order (a repeated name keeps its first
 * place and its last value, as there), each member's value its text's parse. Only one parse to the
 * end is tried — at the first member whose value's first character can open what the object's
 * last character closes; after a failed one the rest is walked — so a text shaped to fail it
 * costs at most one more parse of a member, never one per member; past `MEMBERWISE_MAX` members
 * the object is left to one parse. Anything else — a blank between tokens, a name with a raw control character, a member
 * named `__proto__` (an own member in `JSON.parse`'s value; assigning it would set the prototype) —
 * is `NOT_ALONE`.
 */
export function objectAlone(text: string, start: number, end: number, members: number[]): object | typeof NOT_ALONE {
  const close = end - 1;
  if (text.charCodeAt(start) !== 0x7b || text.charCodeAt(close) !== 0x7d || close === start + 1) return NOT_ALONE;
  const last = text.charCodeAt(close - 1);
  const value: Record<string, unknown> = {};
  let tried = false;
  for (let pos = start + 1; ; ) {
    if (text.charCodeAt(pos) !== 0x22 || members.length === MEMBERWISE_MAX * 4) return NOT_ALONE;
    const nameEnd = stringEnd(text, pos);
    if (text.charCodeAt(nameEnd) !== 0x3a) return NOT_ALONE;
    // A name without escapes or control characters is its text; any other is parsed, which decodes
    // it or refuses it (a raw control character, a broken escape: the whole parse then says so).
    const name = plainText(text, pos + 1, nameEnd - 1) ? text.slice(pos + 1, nameEnd - 1) : parsedAlone(text, pos, nameEnd);
    if (typeof name !== "string" || name === "__proto__") return NOT_ALONE;
    const from = nameEnd + 1;
    if (!tried && mayClose(text.charCodeAt(from), last)) {
      tried = true;
      const tail = parsedAlone(text, from, close);
      if (tail !== NOT_ALONE) {
        value[name] = tail;
        members.push(pos, nameEnd, from, close);
        return value;
      }
    }
    const to = valueEnd(text, from);
    if (to > close || (to < close && text.charCodeAt(to) !== 0x2c)) return NOT_ALONE;
    const member = parsedAlone(text, from, to);
    if (member === NOT_ALONE) return NOT_ALONE;
    value[name] = member;
    members.push(pos, nameEnd, from, to);
    if (to === close) return value;
    pos = to + 1;
  }
}

/**
 * Whether a value starting with `first` may end with `last`: a container with its bracket, a
 * string with its quote, a number or a literal with neither (and neither end a blank: the place
 * recorded is the value's own).
 */
function mayClose(first: number, last: number): boolean {
  if (isBlank(first)) return false;
  if (first === 0x7b) return last === 0x7d;
  if (first === 0x5b) return last === 0x5d;
  if (first === 0x22) return last === 0x22;
  return last !== 0x7d && last !== 0x5d && last !== 0x22 && !isBlank(last);
}

/** `[start, end)` of `text` parsed as one JSON value, or `NOT_ALONE`. */
function parsedAlone(text: string, start: number, end: number): unknown {
  try {
    return JSON.parse(text.slice(start, end));
  } catch {
    return NOT_ALONE; // more members after it (or not JSON at all): the whole line's parse decides
  }
}
