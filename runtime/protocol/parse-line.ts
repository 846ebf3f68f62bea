/**
 * One NDJSON line read as a message: `JSON.parse`'s value with the line's text attached
 * (raw-json.ts `attachRaw`), and for a notification written the way ACP's SDKs write one —
 * `{"jsonrpc":"2.0","method":"…","params":{…}}`, compact, in that order — a `CompactNotification`
 * (raw-json.ts), whose params' place then follows from its text without a walk.
 *
 * Why: a streamed `session/update` is most of what a conductor reads. To wrap it for a proxy,
 * routing needs its params' text, and finding it meant a walk of the whole line once per chunk
 * (`layoutFor`: ~0.7 µs of the ~9 µs a chunk cost through three watching proxies, in one process).
 * Here the params are read by a `JSON.parse` of their own text alone, which both parses them and
 * proves where they lie: if the text between `"params":` and the line's last `}` parses as one
 * value, nothing follows params, and the line is exactly the three members. Reading a line costs
 * what `JSON.parse` of it did (0.92–1.0 µs for a streamed update, `bench/hot-path.ts`); nothing is
 * stored beside the text for the lines no proxy wraps (a layout per line cost Cordon 0 ~0.1 µs a
 * chunk), and a common method is the interned constant (`COMMON`).
 *
 * The contract is one-sided: the value is the one `JSON.parse(line)` gives (the same members in
 * the same order), and a `CompactNotification` only where the shape above is proved. The method is
 * taken as written only if it has no escape and no control character (then its text is its
 * value); anything else — another order, whitespace, a request or an answer, a member after
 * params, a line that is not JSON — is parsed whole as before, so its error says what is wrong.
 * A line that starts like a notification but has something after its params costs one failed
 * parse of its tail first (checked to end in `}` so that an id written last never gets there).
 */
import { attachRaw, CompactNotification, COMPACT_HEAD as HEAD, COMPACT_PARAMS as PARAMS } from "./raw-json.js";

/**
 * The notifications nearly every line is: a method found among them is this (interned) string, not
 * a slice of the line — routing compares a method with its constants and looks its rules up by it,
 * and a slice is compared and hashed character by character each time.
 */
const COMMON = ["session/update", "session/cancel", "$/cancel_request"];

/** The method written between `HEAD` and the quote at `quote` (no escape in it). */
function methodAt(text: string, quote: number): string {
  const length = quote - HEAD.length;
  for (const method of COMMON) if (method.length === length && text.startsWith(method, HEAD.length)) return method;
  return text.slice(HEAD.length, quote);
}

/** The message a line holds (its text attached); throws as `JSON.parse` does for a line that is not JSON. */
export function parseLine(text: string): unknown {
  const notification = readNotification(text);
  if (notification !== undefined) return notification;
  const value: unknown = JSON.parse(text);
  if (typeof value === "object" && value !== null) attachRaw(value, text);
  return value;
}

/** A notification of the shape above, or undefined (the caller parses the line whole). */
function readNotification(text: string): object | undefined {
  if (!text.startsWith(HEAD)) return undefined;
  const quote = text.indexOf('"', HEAD.length);
  if (quote === -1 || !text.startsWith(PARAMS, quote)) return undefined;
  const start = quote + PARAMS.length;
  const end = text.length - 1;
  // params is an object, and the line ends right after it: `…}}`.
  if (text.charCodeAt(start) !== 0x7b || text.charCodeAt(end) !== 0x7d || text.charCodeAt(end - 1) !== 0x7d) return undefined;
  for (let i = HEAD.length; i < quote; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x5c) return undefined; // JSON has no raw control character in a string; an escape needs decoding
  }
  let params: unknown;
  try {
    params = JSON.parse(text.slice(start, end));
  } catch {
    return undefined; // more members after params (or not JSON at all): the whole line's parse decides
  }
  return attachRaw(new CompactNotification(methodAt(text, quote), params), text);
}
