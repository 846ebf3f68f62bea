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
// Cost: in valid JSON a backslash occurs only inside a string, so the text is searched for
// backslashes four code units at a time; only a string holding one is walked, to its closing quote,
// to see whether a `:` follows (a name) — no nesting stack, and a message without a backslash (most
// streamed chunks) costs one word-at-a-time pass. The dispatcher skips even that when its own scan
// met no member name with a backslash, read or skipped (`RawObject.escapesSeen`): escapes in
// string values (every line of a file's text) do not make it run.
import { Builder, decodeString, quote, skipSpace } from "./json";
import { BACKSLASH, nextBackslash, QUOTE, stringEnd } from "./string-scan";

const COLON: u16 = 0x3a;

/** Pointer to the opening quote of the string holding the backslash at `b`. */
function openingQuote(start: usize, b: usize): usize {
  let p = b;
  while (p > start) {
    p -= 2;
    if (load<u16>(p) != QUOTE) continue;
    // A quote inside a string is escaped: an odd run of backslashes before it.
    let run = 0;
    let q = p;
    while (q > start && load<u16>(q - 2) == BACKSLASH) {
      run++;
      q -= 2;
    }
    if ((run & 1) == 0) return p;
  }
  return start;
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
  let p = nextBackslash(start, end);
  while (p < end) {
    // Inside a string: walk to its closing quote (`stringEnd` starts one unit past where it is
    // given, so from just before the backslash it walks from the backslash itself).
    const b = p;
    p = stringEnd(b - 2, end);
    if (p == 0) break; // an unterminated string: leave it to the reader
    const q = skipSpace(p, end);
    if (q < end && load<u16>(q) == COLON) {
      const open = openingQuote(start, b);
      const canonical = quote(decodeString(open, p));
      if (!(canonical.length == (p - open) >> 1 && memory.compare(changetype<usize>(canonical), open, p - open) == 0)) {
        if (out == null) out = new Builder();
        out.slice(text, copied, open).str(canonical);
        copied = p;
      }
    }
    p = nextBackslash(p, end);
  }
  if (out == null) return text;
  return out.slice(text, copied, end).build();
}
