// JSON plumbing the SDK needs on every message, kept cheap:
// - `RawObject` finds the members of one JSON object as raw source ranges without decoding them,
//   so a message can be routed and re-enveloped without parsing its payload;
// - `Builder` assembles an outgoing message from literal pieces and raw slices with one allocation;
// - safe typed getters over json-as `JSON.Obj`/`JSON.Arr` (json-as' own `getAs<T>` reinterprets
//   whatever is stored, so reading a string where the peer sent a number would read garbage).
import { JSON } from "json-as";
import { BACKSLASH, nextBackslash, QUOTE, quoteOrBackslashIn, stringEnd } from "./string-scan";

const COLON: u16 = 0x3a;
const COMMA: u16 = 0x2c;
const BRACE_LEFT: u16 = 0x7b;
const BRACE_RIGHT: u16 = 0x7d;
const BRACKET_LEFT: u16 = 0x5b;
const BRACKET_RIGHT: u16 = 0x5d;

// @ts-ignore: decorator
@inline function isSpace(c: u16): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

export function skipSpace(p: usize, end: usize): usize {
  // Compact JSON (what Cordon and agents write) has no blank between tokens: one test, and the
  // loop (whose header is a fuel check, fuel.ts) is entered only for a blank.
  if (p >= end || !isSpace(load<u16>(p))) return p;
  do p += 2;
  while (p < end && isSpace(load<u16>(p)));
  return p;
}

/**
 * Whether `bytes` bytes (a whole number of code units) at `a` and `b` are equal: eight at a time,
 * inline. Names and methods are short, and `memory.compare` is a call that first sorts out
 * alignment; routing compares a dozen names per message.
 */
// @ts-ignore: decorator
@inline function sameBytes(a: usize, b: usize, bytes: usize): bool {
  const end = a + bytes;
  while (a + 8 <= end) {
    if (load<u64>(a) != load<u64>(b)) return false;
    a += 8;
    b += 8;
  }
  while (a < end) {
    if (load<u16>(a) != load<u16>(b)) return false;
    a += 2;
    b += 2;
  }
  return true;
}

/** Set by a scan that met a backslash in a member name, or one that skipped a composite value holding one. */
let namesMayBeEscaped = false;

/** `stringEnd` for a member name: notes a backslash in it (`namesMayBeEscaped`). */
// @ts-ignore: decorator
@inline function nameEnd(p: usize, end: usize): usize {
  p += 2;
  // Four units at a time up to the quote or backslash (a name of eight units: two steps, not eight).
  while (p + 8 <= end && !quoteOrBackslashIn(load<u64>(p))) p += 8;
  while (p < end) {
    const c = load<u16>(p);
    if (c == QUOTE) return p + 2;
    if (c == BACKSLASH) {
      namesMayBeEscaped = true;
      p += 2;
    }
    p += 2;
  }
  return 0;
}

/**
 * Pointer just past the object or array starting at `p`, or 0; notes a backslash in any member
 * name inside it (`namesMayBeEscaped`), and only there: an escape in a string value (a newline in
 * a file's text) does not make the dispatcher bring every name to one spelling (names.ts), a pass
 * over the whole message. One pass: strings are skipped by `stringEnd`, the few units between
 * tokens one at a time (Cordon and agents write compact JSON).
 */
function compositeEnd(p: usize, end: usize): usize {
  let depth = 0;
  while (p < end) {
    const c = load<u16>(p);
    if (c == QUOTE) {
      const s = p;
      p = stringEnd(p, end);
      if (p == 0) return 0;
      if (!namesMayBeEscaped) {
        const q = skipSpace(p, end);
        if (q < end && load<u16>(q) == COLON && nextBackslash(s, p) < p) namesMayBeEscaped = true;
      }
      continue;
    }
    if (c == BRACE_LEFT || c == BRACKET_LEFT) depth++;
    else if ((c == BRACE_RIGHT || c == BRACKET_RIGHT) && --depth == 0) return p + 2;
    p += 2;
  }
  return 0;
}

/** Pointer just past the JSON value starting at `p` (a scalar ends at its terminator), or 0. */
function skipValue(p: usize, end: usize): usize {
  const c = load<u16>(p);
  if (c == QUOTE) return stringEnd(p, end);
  if (c == BRACE_LEFT || c == BRACKET_LEFT) return compositeEnd(p, end);
  while (p < end) {
    const d = load<u16>(p);
    if (d == COMMA || d == BRACE_RIGHT || d == BRACKET_RIGHT || isSpace(d)) return p;
    p += 2;
  }
  return 0;
}

/**
 * The members of one JSON object as raw ranges of its source string: keys without their quotes,
 * values exactly as written. Nothing is decoded; values are skipped in one pass (`skipValue`,
 * strings four code units at a time). Keys are compared as written: the dispatcher hands it text whose names were first
 * brought to one spelling (names.ts), so `"\u006dethod"` is found as `method`.
 */
export class RawObject {
  /** The string the pointers below point into (kept alive by this reference). */
  src: string;
  count: i32;
  /** Pointer just past the closing brace. */
  end: usize;
  /** The member scanned in the same pass (see `scan`'s `path`), or null. */
  nested: RawObject | null;
  nestedIndex: i32 = -1;
  /**
   * 0 for an object of its own; for one of the dispatcher's reused objects (`RawObject.reused`), the
   * receive it was filled for: it is valid only until the next one (`isCurrent`), so whatever keeps
   * it longer keeps a `clone` instead.
   */
  generation: u32;
  /**
   * Four pointers per member (key start, key end, value start, value end), at `at`: the first four
   * members in the fields below, in this object itself (every level of a streamed chunk has at
   * most four, so scanning one allocates one object, not an object and an array), more in `spill`.
   * Objects do not move in AssemblyScript's heap, so `at` may point into this one.
   */
  private at: usize;
  /** Slots at `at`. */
  private cap: i32 = 16;
  private spill: StaticArray<usize> | null;
  private m0: usize;
  private m1: usize;
  private m2: usize;
  private m3: usize;
  private m4: usize;
  private m5: usize;
  private m6: usize;
  private m7: usize;
  private m8: usize;
  private m9: usize;
  private m10: usize;
  private m11: usize;
  private m12: usize;
  private m13: usize;
  private m14: usize;
  private m15: usize;

  private constructor(src: string) {
    this.src = src;
    this.at = changetype<usize>(this) + offsetof<RawObject>("m0");
  }

  // @ts-ignore: decorator
  @inline private slot(k: i32): usize {
    return load<usize>(this.at + (<usize>k << alignof<usize>()));
  }

  /**
   * Scans the object whose text is the whole of `src`. Null when it is not a JSON object.
   * `path` names members to scan in the same pass, one per level (see `scan`).
   */
  static parse(src: string, path: StaticArray<string> | null = null): RawObject | null {
    const start = changetype<usize>(src);
    return RawObject.scan(src, start, start + (<usize>src.length << 1), path, 0);
  }

  /**
   * Like `parse`, into objects reused by every call (one per depth): the dispatcher's scan of each
   * received message allocates nothing. What they hold is valid until the next call; a message
   * that keeps one (its params view) clones it on first use (`Message._rawView`). Cost: a
   * streamed chunk is five levels deep, and five new objects per message were most of the SDK's
   * allocation per `receive` (and so of the collector's work).
   */
  static reused(src: string, path: StaticArray<string>): RawObject | null {
    if (++generation == 0) generation = 1; // 0 marks an object of its own
    namesMayBeEscaped = false;
    const start = changetype<usize>(src);
    return RawObject.scan(src, start, start + (<usize>src.length << 1), path, 0, true);
  }

  /**
   * Whether the last `reused` scan passed a member name written with an escape, among the names
   * it read or inside an array or object it skipped (`compositeEnd`). False means the text has
   * none (an escape in a string value is no name's), so bringing names to one spelling (names.ts)
   * would change nothing and its pass over the whole text can be skipped.
   */
  static get escapesSeen(): bool {
    return namesMayBeEscaped;
  }

  /** Whether this object is its own, or a reused one still holding the current receive's scan. */
  get isCurrent(): bool {
    return this.generation == 0 || this.generation == generation;
  }

  /** The reused object for `depth`, cleared, now scanning `src`. */
  private static pooled(src: string, depth: i32): RawObject {
    let o = unchecked(pool[depth]);
    if (o == null) {
      o = new RawObject(src);
      unchecked((pool[depth] = o));
    } else {
      // Stored without the write barrier's call below the top: the top object's store (with it)
      // already keeps `src` alive for the collector, and every level holds the same string.
      if (depth == 0) o.src = src;
      else store<usize>(changetype<usize>(o), changetype<usize>(src), offsetof<RawObject>("src"));
      o.count = 0;
      o.end = 0;
      store<usize>(changetype<usize>(o), 0, offsetof<RawObject>("nested")); // dropping a reference: no barrier
      o.nestedIndex = -1;
    }
    o.generation = generation;
    return o;
  }

  /** A copy of its own (nested levels too), valid after the scan it came from is reused. */
  clone(): RawObject {
    const out = new RawObject(this.src);
    const n = this.count;
    out.count = n;
    out.end = this.end;
    out.nestedIndex = this.nestedIndex;
    const units = <usize>(n << 2);
    if (units > 16) {
      const spill = new StaticArray<usize>(<i32>units);
      memory.copy(changetype<usize>(spill), this.at, units * sizeof<usize>());
      out.spill = spill;
      out.at = changetype<usize>(spill);
      out.cap = <i32>units;
    } else {
      memory.copy(out.at, this.at, units * sizeof<usize>());
    }
    const nested = this.nested;
    if (nested != null) out.nested = nested.clone();
    return out;
  }

  /**
   * Scans the object written in `src` from `start` (up to `end` at most). Null when it is not a
   * JSON object. When the member named `path[depth]` holds an object, that object is scanned in the
   * same pass (with `depth + 1`) and kept as `nested`: its bytes are walked once, instead of being
   * skipped now and walked again when someone looks inside. `reuse`: into the reused objects (see
   * `reused`).
   */
  static scan(
    src: string,
    start: usize,
    end: usize,
    path: StaticArray<string> | null = null,
    depth: i32 = 0,
    reuse: bool = false,
  ): RawObject | null {
    const out = reuse ? RawObject.pooled(src, depth) : new RawObject(src);
    let p = skipSpace(start, end);
    if (p >= end || load<u16>(p) != BRACE_LEFT) return null;
    p = skipSpace(p + 2, end);
    if (p < end && load<u16>(p) == BRACE_RIGHT) {
      out.end = p + 2;
      return out;
    }
    let dKey: usize = 0;
    let dUnits: usize = 0;
    if (path != null && depth < path.length) {
      const k = unchecked(path[depth]);
      dKey = changetype<usize>(k);
      dUnits = <usize>k.length << 1;
    }
    while (p < end) {
      if (load<u16>(p) != QUOTE) return null;
      const keyEnd = nameEnd(p, end);
      if (keyEnd == 0) return null;
      const keyStart = p + 2;
      p = skipSpace(keyEnd, end);
      if (p >= end || load<u16>(p) != COLON) return null;
      p = skipSpace(p + 2, end);
      if (p >= end) return null;
      let valueEnd: usize = 0;
      if (
        dKey != 0 &&
        load<u16>(p) == BRACE_LEFT &&
        keyEnd - 2 - keyStart == dUnits &&
        sameBytes(keyStart, dKey, dUnits)
      ) {
        const child = RawObject.scan(src, p, end, path, depth + 1, reuse);
        if (child == null) return null;
        // a reused child is reachable from the pool (a root) anyway: no write barrier's call
        if (reuse) store<usize>(changetype<usize>(out), changetype<usize>(child), offsetof<RawObject>("nested"));
        else out.nested = child;
        out.nestedIndex = out.count;
        valueEnd = child.end;
      } else {
        valueEnd = skipValue(p, end);
        if (valueEnd == 0 || valueEnd > end) return null;
      }
      out.push(keyStart, keyEnd - 2, p, valueEnd);
      p = skipSpace(valueEnd, end);
      if (p >= end) return null;
      const c = load<u16>(p);
      if (c == BRACE_RIGHT) {
        out.end = p + 2;
        return out;
      }
      if (c != COMMA) return null;
      p = skipSpace(p + 2, end);
    }
    return null;
  }

  private push(ks: usize, ke: usize, vs: usize, ve: usize): void {
    const i = this.count << 2;
    if (i + 4 > this.cap) {
      const bigger = new StaticArray<usize>(this.cap << 1);
      memory.copy(changetype<usize>(bigger), this.at, <usize>i * sizeof<usize>());
      this.spill = bigger;
      this.at = changetype<usize>(bigger);
      this.cap <<= 1;
    }
    const p = this.at + (<usize>i << alignof<usize>());
    store<usize>(p, ks);
    store<usize>(p, ke, sizeof<usize>());
    store<usize>(p, vs, 2 * sizeof<usize>());
    store<usize>(p, ve, 3 * sizeof<usize>());
    this.count++;
  }

  /** Index of the last member named `key` (JSON: last one wins), or -1. */
  indexOf(key: string): i32 {
    const units = <usize>key.length << 1;
    for (let i = this.count - 1; i >= 0; i--) {
      const ks = this.slot(i << 2);
      const ke = this.slot((i << 2) + 1);
      if (ke - ks == units && sameBytes(ks, changetype<usize>(key), units)) return i;
    }
    return -1;
  }

  has(key: string): bool {
    return this.indexOf(key) >= 0;
  }

  // @ts-ignore: decorator
  @inline valueStart(i: i32): usize {
    return this.slot((i << 2) + 2);
  }

  // @ts-ignore: decorator
  @inline valueEnd(i: i32): usize {
    return this.slot((i << 2) + 3);
  }

  /** First code unit of member `i`'s value: `"`, `{`, `[`, a digit, `t`, `f`, `n`. */
  // @ts-ignore: decorator
  @inline firstChar(i: i32): u16 {
    return load<u16>(this.valueStart(i));
  }

  /**
   * Whether member `i`'s value is the string `literal` — compared as written, without decoding it,
   * unless it is spelled with an escape (then decoded and compared). Routing compares methods so.
   */
  valueIs(i: i32, literal: string): bool {
    if (i < 0) return false;
    if (this.writtenAs(i, literal)) return true;
    const s = this.valueStart(i);
    const e = this.valueEnd(i);
    // An escape is longer than what it stands for: a token shorter than the literal cannot be it.
    if (load<u16>(s) != QUOTE || e - s < (<usize>literal.length << 1) + 4) return false;
    for (let p = s + 2; p < e; p += 2) if (load<u16>(p) == BACKSLASH) return decodeString(s, e) == literal;
    return false;
  }

  /** Whether member `i`'s value is written exactly as the string token `"literal"` (no decoding). */
  writtenAs(i: i32, literal: string): bool {
    const s = this.valueStart(i);
    const units = <usize>literal.length << 1;
    return this.valueEnd(i) - s - 4 == units && load<u16>(s) == QUOTE && sameBytes(s + 2, changetype<usize>(literal), units);
  }

  /** The raw JSON text of a member's value, or null when absent. */
  text(key: string): string | null {
    const i = this.indexOf(key);
    if (i < 0) return null;
    return slice(this.valueStart(i), this.valueEnd(i));
  }

  /** A member's value decoded as a string, or null when absent or not a string. */
  str(key: string): string | null {
    const i = this.indexOf(key);
    if (i < 0 || this.firstChar(i) != QUOTE) return null;
    return decodeString(this.valueStart(i), this.valueEnd(i));
  }

  /** A member's value as a nested RawObject, or null when absent or not an object. */
  obj(key: string): RawObject | null {
    return this.objAt(this.indexOf(key));
  }

  /** Member `i`'s value as a nested RawObject, or null when `i` < 0 or it is not an object. */
  objAt(i: i32): RawObject | null {
    if (i < 0 || this.firstChar(i) != BRACE_LEFT) return null;
    if (i == this.nestedIndex && this.isCurrent) return this.nested;
    return RawObject.scan(this.src, this.valueStart(i), this.valueEnd(i));
  }

  /** Pointer to the first non-space code unit inside member `i`'s array or object value. */
  innerStart(i: i32): usize {
    return skipSpace(this.valueStart(i) + 2, this.valueEnd(i));
  }
}

/** Counts `RawObject.reused` calls: a reused object filled by an earlier one is stale. */
let generation: u32 = 0;
/** `RawObject.reused`'s objects, by depth (a scan path is at most 7 members long). */
const pool = new StaticArray<RawObject | null>(8);

/** A new string holding the code units between two pointers. */
export function slice(start: usize, end: usize): string {
  const size = end - start;
  const out = __new(size, idof<string>());
  memory.copy(out, start, size);
  return changetype<string>(out);
}

function hexDigit(c: u16): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/**
 * Decodes the JSON string token between two pointers (quotes included), as `JSON.parse` does.
 * (json-as 1.6's own decoder turns `\/` into U+0000, so a token written `"abc\/def"` would reach a
 * hook as something other than what the client reads; this one is used everywhere instead.)
 * A plain copy when there is no escape; an escape the host would have refused (it parses every
 * message first) is kept as written.
 */
export function decodeString(start: usize, end: usize): string {
  if (end - start < 4) return "";
  const s = start + 2;
  const e = end - 2;
  let p = s;
  while (p < e && load<u16>(p) != BACKSLASH) p += 2;
  if (p >= e) return slice(s, e);
  const out = __new(e - s, idof<string>());
  memory.copy(out, s, p - s);
  let o = out + (p - s);
  while (p < e) {
    const c = load<u16>(p);
    if (c != BACKSLASH || p + 2 >= e) {
      store<u16>(o, c);
      o += 2;
      p += 2;
      continue;
    }
    const d = load<u16>(p + 2);
    let v: i32 = -1;
    let width: usize = 4;
    if (d == QUOTE || d == BACKSLASH || d == 0x2f) v = d;
    else if (d == 0x62) v = 0x08;
    else if (d == 0x66) v = 0x0c;
    else if (d == 0x6e) v = 0x0a;
    else if (d == 0x72) v = 0x0d;
    else if (d == 0x74) v = 0x09;
    else if (d == 0x75 && p + 12 <= e) {
      const h0 = hexDigit(load<u16>(p + 4));
      const h1 = hexDigit(load<u16>(p + 6));
      const h2 = hexDigit(load<u16>(p + 8));
      const h3 = hexDigit(load<u16>(p + 10));
      if ((h0 | h1 | h2 | h3) >= 0) {
        v = (h0 << 12) | (h1 << 8) | (h2 << 4) | h3;
        width = 12;
      }
    }
    if (v < 0) {
      store<u16>(o, c); // not an escape JSON knows: kept as written
      o += 2;
      p += 2;
      continue;
    }
    store<u16>(o, <u16>v);
    o += 2;
    p += width;
  }
  return changetype<string>(__renew(out, o - out));
}

/**
 * A string `JSON.Value` decoded as `JSON.parse` decodes it (use this rather than `v.get<string>()`,
 * see `decodeString`). The caller has checked `typeOf(v) == JSON.Types.String`.
 */
export function stringValue(v: JSON.Value): string {
  const lz = v.__lazySlice();
  if (lz != 0) return decodeString(<usize>(lz >>> 32), <usize>(<u32>lz));
  return v.get<string>();
}

/** `s` as a JSON string token, quotes and escapes included. */
export function quote(s: string): string {
  return JSON.stringify<string>(s);
}

/**
 * Assembles a string from pieces with a single allocation: literal strings and raw slices of other
 * strings (given as pointers; the slice's string is referenced until `build()`).
 * `Builder.begin()` reuses one shared instance, so sending a message allocates nothing but the
 * message; `new Builder()` works anywhere (also inside another build).
 */
export class Builder {
  private keep: StaticArray<string | null> = new StaticArray<string | null>(16);
  private ptrs: StaticArray<usize> = new StaticArray<usize>(32);
  private n: i32 = 0;
  private size: usize = 0;
  private busy: bool = false;

  private static shared: Builder | null = null;

  /** A cleared builder: the shared one when it is free, else a new one. */
  static begin(): Builder {
    let b = Builder.shared;
    if (b == null) {
      b = new Builder();
      Builder.shared = b;
    }
    if (b.busy) return new Builder();
    b.busy = true;
    return b;
  }

  str(s: string): Builder {
    const p = changetype<usize>(s);
    return this.slice(s, p, p + (<usize>s.length << 1));
  }

  /** Appends the code units of `owner` between two pointers into it. */
  slice(owner: string, start: usize, end: usize): Builder {
    const i = this.n;
    if (i == this.keep.length) this.grow();
    // A literal lives in static data and is never collected: kept without a write barrier's call.
    if (changetype<usize>(owner) >= __heap_base) unchecked((this.keep[i] = owner));
    unchecked((this.ptrs[i << 1] = start));
    unchecked((this.ptrs[(i << 1) + 1] = end));
    this.n = i + 1;
    this.size += end - start;
    return this;
  }

  private grow(): void {
    const cap = this.keep.length << 1;
    const keep = new StaticArray<string | null>(cap);
    const ptrs = new StaticArray<usize>(cap << 1);
    for (let i = 0; i < this.n; i++) {
      unchecked((keep[i] = this.keep[i]));
      unchecked((ptrs[i << 1] = this.ptrs[i << 1]));
      unchecked((ptrs[(i << 1) + 1] = this.ptrs[(i << 1) + 1]));
    }
    this.keep = keep;
    this.ptrs = ptrs;
  }

  /** Code units appended so far. */
  get units(): usize {
    return this.size >> 1;
  }

  /**
   * Assembles the pieces into one scratch area shared by every call (grown to the largest message,
   * never freed), not into a new string: for text that is copied out at once (what the proxy
   * sends: the host copies it before `send` returns), so sending allocates nothing. Returns its
   * pointer, valid until the next `assemble`; `units` is read before. Clears the builder as
   * `build` does.
   */
  assemble(): usize {
    const size = this.size;
    if (size > scratchBytes) {
      const bytes = max(size, scratchBytes << 1);
      scratch = scratch == 0 ? heap.alloc(bytes) : heap.realloc(scratch, bytes);
      scratchBytes = bytes;
    }
    this.copyTo(scratch);
    return scratch;
  }

  /** The assembled string; the builder is cleared (and released, if it was the shared one). */
  build(): string {
    const out = __new(this.size, idof<string>());
    this.copyTo(out);
    return changetype<string>(out);
  }

  /** Copies the pieces to `out` and clears the builder (releasing the shared one). */
  private copyTo(out: usize): void {
    let p = out;
    for (let i = 0, n = this.n; i < n; i++) {
      const s = unchecked(this.ptrs[i << 1]);
      const len = unchecked(this.ptrs[(i << 1) + 1]) - s;
      memory.copy(p, s, len);
      p += len;
      // cleared in place: dropping a reference needs no write barrier (nor its call)
      store<usize>(changetype<usize>(this.keep) + (<usize>i << alignof<usize>()), 0);
    }
    this.n = 0;
    this.size = 0;
    this.busy = false;
  }
}

/** `Builder#assemble`'s area (unmanaged memory: the collector neither scans nor frees it). */
let scratch: usize = 0;
let scratchBytes: usize = 0;

// ---- safe typed access to json-as dynamic values ----

/** The JSON type of a value without parsing it when it is still an unparsed slice. */
export function typeOf(v: JSON.Value): u16 {
  const lz = v.__lazySlice();
  if (lz != 0) {
    const c = load<u16>(<usize>(lz >>> 32));
    if (c == BRACE_LEFT) return JSON.Types.Object;
    if (c == BRACKET_LEFT) return JSON.Types.Array;
    return JSON.Types.String;
  }
  return v.type;
}

function isNumberType(t: u16): bool {
  return t >= JSON.Types.U8 && t <= JSON.Types.F64;
}

/** `obj[key]` when it is a string, else null. */
export function getString(obj: JSON.Obj, key: string): string | null {
  const v = obj.get(key);
  if (v == null || typeOf(v) != JSON.Types.String) return null;
  return stringValue(v);
}

/** `obj[key]` when it is an object (the same instance on every call, so edits stick), else null. */
export function getObj(obj: JSON.Obj, key: string): JSON.Obj | null {
  const v = obj.get(key);
  if (v == null || typeOf(v) != JSON.Types.Object) return null;
  return obj.getAs<JSON.Obj>(key);
}

/** `obj[key]` when it is an array (the same instance on every call, so edits stick), else null. */
export function getArr(obj: JSON.Obj, key: string): JSON.Arr | null {
  const v = obj.get(key);
  if (v == null || typeOf(v) != JSON.Types.Array) return null;
  return obj.getAs<JSON.Arr>(key);
}

/** `obj[key]` when it is a number, else `fallback`. */
export function getNumber(obj: JSON.Obj, key: string, fallback: f64 = NaN): f64 {
  const v = obj.get(key);
  if (v == null) return fallback;
  const t = typeOf(v);
  if (t == JSON.Types.F64) return v.get<f64>();
  if (isNumberType(t)) return parseFloat(v.toString());
  return fallback;
}

/** `obj[key]` when it is a boolean, else `fallback`. */
export function getBool(obj: JSON.Obj, key: string, fallback: bool = false): bool {
  const v = obj.get(key);
  if (v == null || typeOf(v) != JSON.Types.Bool) return fallback;
  return v.get<bool>();
}

/** The JSON text of `obj[key]` exactly as received when untouched, or null when absent. */
export function getJson(obj: JSON.Obj, key: string): string | null {
  const v = obj.get(key);
  if (v == null) return null;
  return JSON.stringify<JSON.Value>(v);
}

/** Element `i` of an array when it is an object (same instance on every call), else null. */
export function arrObj(arr: JSON.Arr, i: i32): JSON.Obj | null {
  if (i < 0 || i >= arr.length) return null;
  if (typeOf(arr.at(i)) != JSON.Types.Object) return null;
  return arr.getAs<JSON.Obj>(i);
}

/** Element `i` of an array when it is a string, else null. */
export function arrString(arr: JSON.Arr, i: i32): string | null {
  if (i < 0 || i >= arr.length) return null;
  const v = arr.at(i);
  if (typeOf(v) != JSON.Types.String) return null;
  return stringValue(v);
}

/**
 * A list of strings under `key`: an array's string elements (others are skipped); a single string
 * counts as a list of one; absent or any other type gives an empty list. (Config and tool-call
 * arguments read lists the same way.)
 */
export function getStrings(obj: JSON.Obj, key: string): string[] {
  const out = new Array<string>(0);
  const arr = getArr(obj, key);
  if (arr != null) {
    for (let i = 0, n = arr.length; i < n; i++) {
      const s = arrString(arr, i);
      if (s != null) out.push(s);
    }
    return out;
  }
  const one = getString(obj, key);
  if (one != null) out.push(one);
  return out;
}
