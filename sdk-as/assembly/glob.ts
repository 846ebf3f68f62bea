// Glob patterns, the SDK's pattern helper (AssemblyScript has no RegExp: every RegExp call aborts,
// and the build tool refuses it). A pattern must match the whole text.
//
//   *        any run of characters, except `/` in path mode (the default)
//   **       any run of characters, `/` included; `**/` also matches no directory at all
//   ?        one character (not `/` in path mode)
//   [abc]    one of the listed characters; ranges `[a-z0-9]`; `[!abc]` or `[^abc]` negates
//   \x       the character x itself (`\*`, `\?`, `\[`)
//
//   import { Glob, globMatch } from "@cordon/sdk-as";
//   globMatch("src/**/*.ts", "src/a/b.ts");                       // true
//   const secrets = Glob.compile("**/.env*", Glob.IGNORE_CASE);   // compile once, match many
//   secrets.matches("app/.ENV.local");                            // true
//   Glob.compile("rm -rf*", Glob.TEXT).matches("rm -rf /tmp");    // TEXT: `*` crosses `/` too
//   const key = Glob.compile("sk-[a-z0-9]??*", Glob.TEXT);
//   const at = key.find(text);                                    // leftmost match in text, or -1;
//   text.substring(at, key.lastEnd);                              // the (longest) match there
//   key.canStart("… sk-a");                                       // could a continuation match?
//
// Characters are Unicode code points (`?` matches an emoji, not half of it). Matching simulates
// the pattern as an automaton over the text: O(pattern × text) time whatever the stars (no
// backtracking blow-up on hostile input), two small arrays of state per call, no recursion.

const LITERAL: u8 = 0;
const ONE: u8 = 1; // ?
const STAR: u8 = 2; // *
const GLOBSTAR: u8 = 3; // **
const GLOBSTAR_DIR: u8 = 4; // **/
const CLASS: u8 = 5; // [...]

const SLASH: i32 = 0x2f;

class Token {
  constructor(
    public kind: u8,
    public char: i32 = 0,
    /** For CLASS: inclusive [from, to] pairs. */
    public ranges: i32[] = [],
    public negated: bool = false,
  ) {}

  classHas(c: i32): bool {
    let inside = false;
    for (let i = 0; i + 1 < this.ranges.length; i += 2) {
      if (c >= this.ranges[i] && c <= this.ranges[i + 1]) {
        inside = true;
        break;
      }
    }
    return inside != this.negated;
  }
}

function codePoints(text: string): i32[] {
  const out = new Array<i32>(0);
  for (let i = 0, n = text.length; i < n; ) {
    const c = text.codePointAt(i);
    out.push(c);
    i += c > 0xffff ? 2 : 1;
  }
  return out;
}

export class Glob {
  /** Letters match in either case (the pattern and the text are compared lower-cased). */
  static readonly IGNORE_CASE: i32 = 1;
  /** Text mode: `*`, `?` and classes match `/` too (for commands and free text, not paths). */
  static readonly TEXT: i32 = 2;

  private tokens: Token[] = [];

  private constructor(
    /** The pattern as given. */
    public readonly pattern: string,
    public readonly flags: i32,
  ) {}

  /** Compiles `pattern` (see the top of this file) for matching many texts. */
  static compile(pattern: string, flags: i32 = 0): Glob {
    const glob = new Glob(pattern, flags);
    const p = codePoints((flags & Glob.IGNORE_CASE) != 0 ? pattern.toLowerCase() : pattern);
    const tokens = glob.tokens;
    const n = p.length;
    let i = 0;
    while (i < n) {
      const c = p[i];
      if (c == 0x2a /* * */) {
        if (i + 1 < n && p[i + 1] == 0x2a) {
          i += 2;
          while (i < n && p[i] == 0x2a) i++; // *** is **
          if (i < n && p[i] == SLASH) {
            i++;
            tokens.push(new Token(GLOBSTAR_DIR));
          } else tokens.push(new Token(GLOBSTAR));
        } else {
          i++;
          tokens.push(new Token(STAR));
        }
      } else if (c == 0x3f /* ? */) {
        i++;
        tokens.push(new Token(ONE));
      } else if (c == 0x5c /* \ */ && i + 1 < n) {
        tokens.push(new Token(LITERAL, p[i + 1]));
        i += 2;
      } else if (c == 0x5b /* [ */) {
        const end = Glob.classEnd(p, i);
        if (end < 0) {
          tokens.push(new Token(LITERAL, c)); // an unclosed [ is itself
          i++;
          continue;
        }
        let j = i + 1;
        let negated = false;
        if (p[j] == 0x21 /* ! */ || p[j] == 0x5e /* ^ */) {
          negated = true;
          j++;
        }
        const ranges = new Array<i32>(0);
        while (j < end) {
          let from = p[j];
          if (from == 0x5c && j + 1 < end) from = p[++j];
          j++;
          let to = from;
          if (j + 1 < end && p[j] == 0x2d /* - */) {
            to = p[++j];
            if (to == 0x5c && j + 1 < end) to = p[++j];
            j++;
          }
          ranges.push(from);
          ranges.push(to);
        }
        tokens.push(new Token(CLASS, 0, ranges, negated));
        i = end + 1;
      } else {
        tokens.push(new Token(LITERAL, c));
        i++;
      }
    }
    return glob;
  }

  /** Index of the `]` closing the class opened at `open`, or -1. A `]` right after `[` (or `[!`) is a member. */
  private static classEnd(p: i32[], open: i32): i32 {
    let j = open + 1;
    if (j < p.length && (p[j] == 0x21 || p[j] == 0x5e)) j++;
    if (j < p.length && p[j] == 0x5d) j++;
    for (; j < p.length; j++) {
      if (p[j] == 0x5c) {
        j++;
        continue;
      }
      if (p[j] == 0x5d) return j;
    }
    return -1;
  }

  /** Whether the pattern matches all of `text`. */
  matches(text: string): bool {
    const t = this.points(text);
    return this.longest(t, 0) == t.length;
  }

  /**
   * Whether `text` could be the start of a match: some continuation of it would match (e.g. a
   * streamed chunk's tail that must be held back until the next chunk says).
   */
  canStart(text: string): bool {
    const t = this.points(text);
    this.longest(t, 0);
    return this.alive;
  }

  /**
   * The UTF-16 index of the leftmost match of the pattern inside `text` at or after `from`, or
   * -1; `lastEnd` is then where that (longest) match ends, so `text.substring(i, glob.lastEnd)` is
   * it. Cost: O(pattern × text) per start tried; a pattern that begins with a literal dies at once
   * on most starts. (With IGNORE_CASE the indices are those of the lower-cased text, the same
   * as the text's for all but a few letters such as U+0130.)
   */
  find(text: string, from: i32 = 0): i32 {
    const t = this.points(text);
    const at = this.offsets;
    for (let i = 0; i <= t.length; i++) {
      if (at[i] < from) continue;
      const end = this.longest(t, i);
      if (end >= 0) {
        this.lastEnd = at[end];
        return at[i];
      }
    }
    this.lastEnd = -1;
    return -1;
  }

  /** End (UTF-16 index) of the match `find` returned last; -1 after a failed `find`. */
  lastEnd: i32 = -1;
  // After `longest`: whether the automaton was still alive at the text's end.
  private alive: bool = false;
  // UTF-16 index of each code point of the last text (and its length at the end).
  private offsets: i32[] = [];

  private points(text: string): i32[] {
    const src = (this.flags & Glob.IGNORE_CASE) != 0 ? text.toLowerCase() : text;
    const out = new Array<i32>(0);
    const at = new Array<i32>(0);
    for (let i = 0, n = src.length; i < n; ) {
      const c = src.codePointAt(i);
      out.push(c);
      at.push(i);
      i += c > 0xffff ? 2 : 1;
    }
    at.push(src.length);
    this.offsets = at;
    return out;
  }

  /** Runs the automaton over t[start..]: the end of the longest match starting at `start`, or -1. */
  private longest(t: i32[], start: i32): i32 {
    const tokens = this.tokens;
    const n = tokens.length;
    const paths = (this.flags & Glob.TEXT) == 0;
    let cur = new StaticArray<bool>(n + 1);
    let next = new StaticArray<bool>(n + 1);
    cur[0] = true;
    Glob.close(tokens, cur);
    let best = cur[n] ? start : -1;
    this.alive = true;
    for (let i = start, tn = t.length; i < tn; i++) {
      const c = t[i];
      const sep = paths && c == SLASH;
      for (let s = 0; s <= n; s++) next[s] = false;
      for (let s = 0; s < n; s++) {
        if (!cur[s]) continue;
        const tok = tokens[s];
        const kind = tok.kind;
        if (kind == LITERAL) {
          if (tok.char == c) next[s + 1] = true;
        } else if (kind == ONE) {
          if (!sep) next[s + 1] = true;
        } else if (kind == CLASS) {
          if (!sep && tok.classHas(c)) next[s + 1] = true;
        } else if (kind == STAR) {
          if (!sep) next[s] = true;
        } else if (kind == GLOBSTAR) {
          next[s] = true;
        } else {
          // GLOBSTAR_DIR: any run of whole directories, each ending in `/`
          next[s] = true;
          if (c == SLASH) next[s + 1] = true;
        }
      }
      Glob.close(tokens, next);
      let any = false;
      for (let s = 0; s <= n; s++) any = any || next[s];
      if (!any) {
        this.alive = false;
        return best;
      }
      const swap = cur;
      cur = next;
      next = swap;
      if (cur[n]) best = i + 1;
    }
    return best;
  }

  /** Adds the states reachable without reading a character: past each star or globstar, which may match nothing. */
  private static close(tokens: Token[], states: StaticArray<bool>): void {
    for (let s = 0; s < tokens.length; s++) {
      const kind = tokens[s].kind;
      if (states[s] && (kind == STAR || kind == GLOBSTAR || kind == GLOBSTAR_DIR)) states[s + 1] = true;
    }
  }
}

/** Whether glob `pattern` matches all of `text` (see `Glob`; `flags`: `Glob.IGNORE_CASE`, `Glob.TEXT`). Compiles each call: keep a `Glob` to match many texts. */
export function globMatch(pattern: string, text: string, flags: i32 = 0): bool {
  return Glob.compile(pattern, flags).matches(text);
}
