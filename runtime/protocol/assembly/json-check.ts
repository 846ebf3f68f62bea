// AssemblyScript, compiled by `make build` to dist/json-check.wasm (see ../json-check.ts, which
// loads it). Whether UTF-16 text in this module's memory is exactly one JSON value (RFC 8259, the
// grammar `JSON.parse` accepts), nesting at most a given depth.
//
// Why WebAssembly: the host reads most lines only to route them, and `JSON.parse` builds a value
// no one reads. This check costs about a third of that parse for a streamed update (the copy into
// this memory included), where a check written in JavaScript costs as much as the parse.
//
// Memory: the text from address 0 (two bytes per code unit, as `Buffer#ucs2Write` lays it out),
// at most `STACK` bytes of it; above that, one byte per open container (1: object, 0: array).
// Nothing is allocated: the module runs on AssemblyScript's stub runtime.

const STACK: usize = 1 << 20;
const STACK_END: usize = STACK + (1 << 16);

// What the scanner expects next.
const VALUE = 0;
const AFTER_VALUE = 1;
const MEMBER_NAME = 2;

@inline function isBlank(c: u32): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}
@inline function isDigit(c: u32): bool {
  return c - 0x30 < 10;
}
@inline function isHex(c: u32): bool {
  return c - 0x30 < 10 || (c | 0x20) - 0x61 < 6;
}
@inline function skipBlanks(p: usize, to: usize): usize {
  while (p < to && isBlank(load<u16>(p))) p += 2;
  return p;
}

/**
 * 1 if the code units at byte offsets `[from, to)` are one JSON value, blanks allowed around it,
 * nesting at most `maxDepth` containers deep; else 0 (not JSON, something after the value, or
 * deeper). `from`, `to` even, `to` ≤ `STACK`.
 */
export function check(from: usize, to: usize, maxDepth: i32): i32 {
  if (to > STACK || maxDepth < 0 || <usize>maxDepth > STACK_END - STACK) return 0;
  let p = from;
  let depth: i32 = 0;
  let expect = VALUE;
  while (true) {
    p = skipBlanks(p, to);
    if (expect == AFTER_VALUE) {
      if (depth == 0) return p == to ? 1 : 0;
      if (p >= to) return 0;
      const c = <u32>load<u16>(p);
      const inObject = load<u8>(STACK + <usize>depth - 1) == 1;
      if (c == 0x2c) {
        p += 2;
        expect = inObject ? MEMBER_NAME : VALUE;
      } else if (c == (inObject ? 0x7d : 0x5d)) {
        p += 2;
        depth--;
      } else return 0;
      continue;
    }
    if (p >= to) return 0;
    const c = <u32>load<u16>(p);
    if (expect == MEMBER_NAME) {
      if (c != 0x22) return 0;
      p = stringEnd(p + 2, to);
      if (p == 0) return 0;
      p = skipBlanks(p, to);
      if (p >= to || load<u16>(p) != 0x3a) return 0;
      p += 2;
      expect = VALUE;
      continue;
    }
    // A value.
    expect = AFTER_VALUE;
    if (c == 0x22) {
      p = stringEnd(p + 2, to);
      if (p == 0) return 0;
    } else if (c == 0x7b || c == 0x5b) {
      if (depth >= maxDepth) return 0;
      const isObject = c == 0x7b;
      store<u8>(STACK + <usize>depth, isObject ? 1 : 0);
      depth++;
      p = skipBlanks(p + 2, to);
      if (p < to && <u32>load<u16>(p) == (isObject ? 0x7d : 0x5d)) {
        p += 2; // empty
        depth--;
      } else expect = isObject ? MEMBER_NAME : VALUE;
    } else if (c == 0x2d || isDigit(c)) {
      p = numberEnd(p, to);
      if (p == 0) return 0;
    } else if (c == 0x74 && p + 8 <= to && load<u64>(p) == 0x0065_0075_0072_0074) p += 8; // true
    else if (c == 0x6e && p + 8 <= to && load<u64>(p) == 0x006c_006c_0075_006e) p += 8; // null
    else if (c == 0x66 && p + 10 <= to && load<u64>(p + 2) == 0x0065_0073_006c_0061) p += 10; // false
    else return 0;
  }
}

/** After a string's opening quote: the offset past its closing quote, or 0 (a raw control character, a broken escape, no end). */
function stringEnd(p: usize, to: usize): usize {
  while (p < to) {
    const c = <u32>load<u16>(p);
    if (c == 0x22) return p + 2;
    if (c == 0x5c) {
      if (p + 4 > to) return 0;
      const e = <u32>load<u16>(p + 2);
      if (e == 0x75) {
        if (p + 12 > to || !isHex(load<u16>(p + 4)) || !isHex(load<u16>(p + 6)) || !isHex(load<u16>(p + 8)) || !isHex(load<u16>(p + 10)))
          return 0;
        p += 12;
      } else if (e == 0x22 || e == 0x5c || e == 0x2f || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 || e == 0x74) p += 4;
      else return 0;
    } else if (c < 0x20) return 0;
    else p += 2;
  }
  return 0;
}

/** A number `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?` from `p`: the offset past it, or 0. */
function numberEnd(p: usize, to: usize): usize {
  if (load<u16>(p) == 0x2d) {
    p += 2;
    if (p >= to) return 0;
  }
  const first = <u32>load<u16>(p);
  if (!isDigit(first)) return 0;
  p += 2;
  if (first != 0x30) while (p < to && isDigit(load<u16>(p))) p += 2;
  if (p < to && load<u16>(p) == 0x2e) {
    p += 2;
    if (p >= to || !isDigit(load<u16>(p))) return 0;
    while (p < to && isDigit(load<u16>(p))) p += 2;
  }
  if (p < to && (<u32>load<u16>(p) | 0x20) == 0x65) {
    p += 2;
    if (p < to && (load<u16>(p) == 0x2b || load<u16>(p) == 0x2d)) p += 2;
    if (p >= to || !isDigit(load<u16>(p))) return 0;
    while (p < to && isDigit(load<u16>(p))) p += 2;
  }
  return p;
}
