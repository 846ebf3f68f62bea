// Member names as every reader sees them. JSON lets a sender spell a name with escapes
// (`"t\u0065xt"` is `text` to `JSON.parse`), but the SDK's readers — `RawObject` and json-as'
// `JSON.Obj` — compare names as written. Left alone, an escaped name hides a member from every hook
// (`redact` would never see the text it must mask, and forward it to a client that reads it).
// So each received message is first brought to one spelling per name: a name written with an
// escape is replaced by its decoded form, re-quoted with only the escapes JSON requires (`\"`,
// `\\`, control characters, lone surrogates). Nothing else changes; a message with no escaped name
// (all of them in practice) is returned as is, without an allocation.
//
// Repeated names are left in place: both readers take the last one, as `JSON.parse` does, and that
// is what a hook sees. The host refuses proxy output with repeated names, so a message that still
// has them when it is forwarded does not leave Cordon.
//
// Cost: one pass over the code units, hopping from quote to quote; a name is recognised by the `:`
// after its closing quote, so no nesting stack is kept.
import { Builder, decodeString, quote } from "./json";

const QUOTE: u16 = 0x22;
const BACKSLASH: u16 = 0x5c;
const COLON: u16 = 0x3a;

// @ts-ignore: decorator
@inline function isSpace(c: u16): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

/**
 * `text` with every member name spelled without needless escapes; `text` itself when no name has
 * an escape. Input that is not well-formed JSON comes back unchanged past the point where it stops
 * making sense (the reader after this one reports it).
 */
export function canonicalNames(text: string): string {
  const start = changetype<usize>(text);
  const end = start + (<usize>text.length << 1);
  let out: Builder | null = null;
  let copied = start;
  let p = start;
  while (p < end) {
    if (load<u16>(p) != QUOTE) {
      p += 2;
      continue;
    }
    const open = p;
    let escaped = false;
    p += 2;
    while (p < end) {
      const c = load<u16>(p);
      if (c == QUOTE) break;
      if (c == BACKSLASH) {
        escaped = true;
        p += 2;
      }
      p += 2;
    }
    if (p >= end) break; // an unterminated string: leave it to the reader
    p += 2; // past the closing quote
    if (!escaped) continue;
    let q = p;
    while (q < end && isSpace(load<u16>(q))) q += 2;
    if (q >= end || load<u16>(q) != COLON) continue; // a value, not a name
    const canonical = quote(decodeString(open, p));
    if (canonical.length == (p - open) >> 1 && memory.compare(changetype<usize>(canonical), open, p - open) == 0) continue;
    if (out == null) out = new Builder();
    out.slice(text, copied, open).str(canonical);
    copied = p;
  }
  if (out == null) return text;
  return out.slice(text, copied, end).build();
}
