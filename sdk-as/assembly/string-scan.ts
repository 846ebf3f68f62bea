// Scanning inside JSON string tokens, the walk every received message goes through: the
// dispatcher skips each string value it does not read (a prompt's text, a file's contents) to find
// the members after it. Texts are UTF-16 code units in guest memory; pointers are byte addresses.
//
// A string's first 32 code units (all of most names and values) go four at a time up to each quote
// or backslash. The rest goes 64 units at a time (`endInBlocks`): two 64-bit masks per block, of
// quotes and of backslashes, from SIMD compares, and which units the backslashes escape from the
// parity of each run of them — simdjson's branch-free method. So a text dense with escapes (`\"`
// and `\n` every few units) costs what plain text does: issue 20's 100 KB prompt, two escapes in
// every six units, took 8.16 M fuel units through the pass-through proxy and takes 0.40 M.

/** The two code units a string token's end depends on (json.ts and names.ts use them too). */
export const QUOTE: u16 = 0x22;
export const BACKSLASH: u16 = 0x5c;

/** Four UTF-16 code units: one in each lane, and each lane's top bit. */
const LANES: u64 = 0x0001000100010001;
const LANE_TOPS: u64 = 0x8000800080008000;
const QUOTES: u64 = 0x0022002200220022;
const BACKSLASHES: u64 = 0x005c005c005c005c;

/** The first units of a string, walked four at a time (most strings end within them). */
const SHORT_BYTES: usize = 32 << 1;
/** A block: 64 code units, one bit each in a 64-bit mask. */
const BLOCK_BYTES: usize = 64 << 1;
/** Bits of the odd positions in a block's masks. */
const ODD_BITS: u64 = 0xaaaaaaaaaaaaaaaa;

/**
 * Whether any of the four units in `w` is `"` or `\`. Exact for the lowest such unit (a borrow
 * can only flag a unit above a real one), so a caller that sees true finds one in this word.
 */
// @ts-ignore: decorator
@inline export function quoteOrBackslashIn(w: u64): bool {
  const q = w ^ QUOTES;
  const b = w ^ BACKSLASHES;
  return ((((q - LANES) & ~q) | ((b - LANES) & ~b)) & LANE_TOPS) != 0;
}

/** Where the last `walk` or `endInBlocks` that found no closing quote stopped: the next unit to look at. */
let resumeAt: usize = 0;

/**
 * Pointer just past the closing quote of the string token starting at `p`, or 0. Four code units
 * at a time up to each quote or backslash, and again after each escape (`walk`); when at least 64
 * units follow the string's first 32, those go 64 at a time whatever the escapes (`endInBlocks`).
 */
export function stringEnd(p: usize, end: usize): usize {
  p += 2;
  if (p + SHORT_BYTES + BLOCK_BYTES <= end) {
    const found = walk(p, p + SHORT_BYTES);
    if (found != 0) return found;
    p = resumeAt;
    // Runs once, and is a loop so that fuel charges its call only to strings that get this far.
    while (p + BLOCK_BYTES <= end) {
      const inBlocks = endInBlocks(p, end);
      if (inBlocks != 0) return inBlocks;
      p = resumeAt; // fewer than 64 units are left
    }
  }
  return walk(p, end);
}

/**
 * The closing quote in [p, limit), four units at a time up to each quote or backslash: the pointer
 * past it, or 0 with `resumeAt` set to where the walk stopped (past `limit` by one unit when an
 * escape at its end took the unit after it).
 */
// @ts-ignore: decorator
@inline function walk(p: usize, limit: usize): usize {
  while (p < limit) {
    while (p + 8 <= limit && !quoteOrBackslashIn(load<u64>(p))) p += 8;
    // A quote or a backslash in the next four units (or fewer than four are left).
    while (p < limit) {
      const c = load<u16>(p);
      if (c == QUOTE) return p + 2;
      if (c == BACKSLASH) {
        p += 4; // the escape and the unit it escapes
        break;
      }
      p += 2;
    }
  }
  resumeAt = p;
  return 0;
}

/**
 * The closing quote of a string from `p` (not escaped: `p` follows a quote or an unescaped unit),
 * 64 code units at a time while 64 are left. Returns the pointer past it, or 0 with `resumeAt` set
 * to the first unit not yet looked at (past it when a block ended in an escaping backslash).
 *
 * Each unit is narrowed to a byte that is `"` or `\` only when the unit is (units above 0xFF become
 * 0xFF or 0), and compared sixteen at a time. A unit is escaped when it follows an odd-length run
 * of backslashes (in `\\\"` the quote is, in `\\"` it is not): `escapeCodes` marks, in one
 * subtraction, each backslash that escapes and each unit escaped.
 */
function endInBlocks(p: usize, end: usize): usize {
  const quotes = i8x16.splat(<i8>QUOTE);
  const slashes = i8x16.splat(<i8>BACKSLASH);
  let escapedFirst: u64 = 0; // 1: this block's first unit is escaped by the last one's last backslash
  while (p + BLOCK_BYTES <= end) {
    const u0 = i8x16.narrow_i16x8_u(v128.load(p), v128.load(p, 16));
    const u1 = i8x16.narrow_i16x8_u(v128.load(p, 32), v128.load(p, 48));
    const u2 = i8x16.narrow_i16x8_u(v128.load(p, 64), v128.load(p, 80));
    const u3 = i8x16.narrow_i16x8_u(v128.load(p, 96), v128.load(p, 112));
    const q = mask64(u0, u1, u2, u3, quotes);
    const b = mask64(u0, u1, u2, u3, slashes);
    const codes = escapeCodes(b & ~escapedFirst);
    const escaped = codes ^ (b | escapedFirst);
    const closing = q & ~escaped;
    if (closing != 0) return p + (<usize>ctz(closing) << 1) + 2;
    escapedFirst = (codes & b) >> 63;
    p += BLOCK_BYTES;
  }
  resumeAt = p + (<usize>escapedFirst << 1);
  return 0;
}

/** Bit i set where unit i of the 64 (narrowed to bytes in `u0`…`u3`) equals `c`'s lanes. */
// @ts-ignore: decorator
@inline function mask64(u0: v128, u1: v128, u2: v128, u3: v128, c: v128): u64 {
  return (
    <u64>(<u32>i8x16.bitmask(i8x16.eq(u0, c))) |
    (<u64>(<u32>i8x16.bitmask(i8x16.eq(u1, c))) << 16) |
    (<u64>(<u32>i8x16.bitmask(i8x16.eq(u2, c))) << 32) |
    (<u64>(<u32>i8x16.bitmask(i8x16.eq(u3, c))) << 48)
  );
}

/**
 * simdjson's `next_escape_and_terminal_code` (src/generic/stage1/json_escape_scanner.h): given the
 * backslashes `b` that may start an escape (none escaped by the block before), bit i is set when
 * unit i is a backslash that escapes the unit after it, or a unit other than a backslash that is
 * escaped. In a run of backslashes the first escapes the second, the third the fourth…; setting the
 * odd bits in the run's shifted bits and subtracting the run leaves that alternation, with a
 * borrow out of the run onto the unit after it exactly when the run is odd. XOR with `b` then
 * gives the escaped units (`endInBlocks`).
 */
// @ts-ignore: decorator
@inline function escapeCodes(b: u64): u64 {
  return (((b << 1) | ODD_BITS) - b) ^ ODD_BITS;
}

/** Pointer to the first backslash in [p, end), or `end` (four code units at a time). */
export function nextBackslash(p: usize, end: usize): usize {
  while (p + 8 <= end) {
    const x = load<u64>(p) ^ BACKSLASHES;
    if (((x - LANES) & ~x & LANE_TOPS) != 0) break; // a zero unit: a backslash here
    p += 8;
  }
  while (p < end && load<u16>(p) != BACKSLASH) p += 2;
  return p;
}
