// redact: masks secrets in what the agent shows the client, before the client sees it.
//
// Where it looks (agent → client only):
// - `agent_message_chunk` and `agent_thought_chunk` text;
// - `tool_call` / `tool_call_update`: the title, text content blocks, diff `oldText`/`newText`,
//   and every string inside `rawInput` and `rawOutput`;
// - the tool call inside `session/request_permission` (same fields).
// What it looks for:
// - API-key-shaped tokens: `sk-…` (OpenAI, `sk-ant-…` Anthropic, `sk-proj-…`), GitHub `ghp_`/`gho_`/
//   `ghu_`/`ghs_`/`ghr_…` and `github_pat_…`, AWS access key ids `AKIA…`/`ASIA…`, Slack
//   `xoxa-`/`xoxb-`/`xoxp-`/`xoxr-…`, Google `AIza…`, and the token after `Bearer ` (20+ chars);
//   a token must start at a word boundary (`task-…` is not `sk-…`) and be long enough to be a key;
// - configured literal strings.
// Config: {"patterns": ["literal", ...], "mask": "[REDACTED]", "builtin": true}. Each masked
// secret is replaced by `mask`; the count is logged through `_cordon/log` (never the secret).
//
// Secrets split across chunks: the agent streams text in pieces, so a key can arrive as `sk-ab` +
// `cdef…`. Per session, the longest tail of a message (or thought) chunk that could be the start of
// a secret — a prefix of a literal, or a key whose characters run to the chunk's end — is held back
// and put before the next chunk of the same kind, then scanned with it. What is held leaves (masked
// if it is a secret) before any other update of the session, when the turn ends (before the
// `session/prompt` answer), and when the client sends `session/cancel`. A chunk held whole is not
// forwarded (its text leaves with the next one, and the rest of that update, `_meta` say, is
// dropped); at most the last 1024 characters are held. A chunk start counts as a word boundary.
//
// What it does NOT catch:
// - secrets in shapes other than the above (passwords, private keys, JWTs, connection strings),
//   unless configured as literals; literal patterns are case-sensitive;
// - anything in client → agent traffic, `plan` entries, `terminal` output (the client owns the
//   terminal), or `_meta`.
import {
  Config,
  JSON,
  LogLevel,
  Notification,
  PerSession,
  PermissionRequest,
  PromptRequest,
  Proxy,
  SessionUpdate,
  arrObj,
  getArr,
  getObj,
  getString,
  register,
  stringValue,
  typeOf,
} from "@cordon/sdk-as";

// @ts-ignore: decorator
@inline function isUpper(c: i32): bool {
  return c >= 0x41 && c <= 0x5a;
}
// @ts-ignore: decorator
@inline function isAlnum(c: i32): bool {
  return (c >= 0x30 && c <= 0x39) || isUpper(c) || (c >= 0x61 && c <= 0x7a);
}
/** A character that can be part of a key: letters, digits, `_` and `-`. */
// @ts-ignore: decorator
@inline function isKeyChar(c: i32): bool {
  return isAlnum(c) || c == 0x5f || c == 0x2d;
}
/** RFC 6750 bearer token characters. */
// @ts-ignore: decorator
@inline function isBearerChar(c: i32): bool {
  return isAlnum(c) || c == 0x2d || c == 0x2e || c == 0x5f || c == 0x7e || c == 0x2b || c == 0x2f || c == 0x3d;
}

const KEY = 0; // [A-Za-z0-9_-]
const ALNUM = 1; // [A-Za-z0-9]
const ALNUM_UNDERSCORE = 2; // [A-Za-z0-9_]
const SLACK = 3; // [A-Za-z0-9-]

function inClass(c: i32, cls: i32): bool {
  if (cls == KEY) return isKeyChar(c);
  if (cls == ALNUM) return isAlnum(c);
  if (cls == ALNUM_UNDERSCORE) return isAlnum(c) || c == 0x5f;
  return isAlnum(c) || c == 0x2d;
}

/** Length of the run of `cls` characters starting at `i`. */
function run(s: string, i: i32, cls: i32): i32 {
  let j = i;
  const n = s.length;
  while (j < n && inClass(s.charCodeAt(j), cls)) j++;
  return j - i;
}

function startsAt(s: string, i: i32, prefix: string): bool {
  const len = prefix.length;
  if (i + len > s.length) return false;
  return memory.compare(changetype<usize>(s) + (<usize>i << 1), changetype<usize>(prefix), <usize>len << 1) == 0;
}

/** Like `startsAt`, ASCII case-insensitively (`lowerPrefix` is lower case). */
function startsAtIgnoreCase(s: string, i: i32, lowerPrefix: string): bool {
  const len = lowerPrefix.length;
  if (i + len > s.length) return false;
  for (let k = 0; k < len; k++) {
    let c = s.charCodeAt(i + k);
    if (isUpper(c)) c += 0x20;
    if (c != lowerPrefix.charCodeAt(k)) return false;
  }
  return true;
}

/** Longest tail of a stream held back at once; a longer possible secret is sent on as it is. */
const HOLD_MAX = 1024;

/** Whether `s` from `i` is a prefix of `prefix`, or `prefix` and then `cls` characters to the end. */
function openEnded(s: string, i: i32, prefix: string, cls: i32): bool {
  const rest = s.length - i;
  if (rest <= prefix.length) return startsAt(prefix, 0, s.substring(i));
  return startsAt(s, i, prefix) && run(s, i + prefix.length, cls) == rest - prefix.length;
}

class Redactor {
  mask: string = "[REDACTED]";
  literals: string[] = [];
  builtin: bool = true;
  /** Secrets masked since the counter was last reset. */
  count: i32 = 0;
  // The match found by `matchAt`: the masked range [start, end).
  private start: i32 = 0;
  private end: i32 = 0;

  // Lookup tables for the scan loop, 3 × 128 entries over ASCII code units:
  // [0, 128):   what a code unit can start — 1 = a configured literal, 2.. = a built-in detector
  //             (one bit per first character);
  // [128, 256): for a second code unit, the bits of the first characters it can follow;
  // [256, 384): 1 for key characters (no word boundary before a code unit that follows one).
  // Literals starting with a non-ASCII code unit are listed in `litOther`.
  private firstAscii: StaticArray<u8> = new StaticArray<u8>(384);
  private litOther: i32[] = [];

  /** Rebuilds the tables after `literals` or `builtin` changed. */
  prepare(): void {
    const t = new StaticArray<u8>(384);
    const other = new Array<i32>(0);
    if (this.builtin) {
      // first character, the second characters it may be followed by:
      // sk-  gh?_ / github_pat_  AKIA ASIA AIza  xox?-  Bearer bearer BEARER
      const firsts = ["s", "g", "A", "x", "Bb"];
      const seconds = ["k", "hi", "KSI", "o", "eE"];
      for (let f = 0; f < firsts.length; f++) {
        const bit = <u8>((<i32>2) << f);
        for (let i = 0; i < firsts[f].length; i++) t[firsts[f].charCodeAt(i)] |= bit;
        for (let i = 0; i < seconds[f].length; i++) t[128 + seconds[f].charCodeAt(i)] |= bit;
      }
      for (let c = 0; c < 128; c++) if (isKeyChar(c)) t[256 + c] = 1;
    }
    for (let k = 0; k < this.literals.length; k++) {
      const lit = this.literals[k];
      if (lit.length == 0) continue;
      const c = lit.charCodeAt(0);
      if (c < 128) t[c] |= 1;
      else other.push(c);
    }
    this.firstAscii = t;
    this.litOther = other;
  }

  /** `s` with every secret masked; `s` itself when there is none. */
  redact(s: string): string {
    const n = s.length;
    const base = changetype<usize>(s);
    // The hot loop decides from one table load per character (two or three loads near a possible
    // key), through plain pointers, whether a secret can start here; only then does it call
    // `matchAt`.
    const table = changetype<usize>(this.firstAscii);
    const other = this.litOther;
    const hasOther = other.length > 0;
    let parts: string[] | null = null;
    let last = 0;
    let i = 0;
    while (i < n) {
      const p = base + (<usize>i << 1);
      const c = <i32>load<u16>(p);
      let candidate = false;
      if (c < 128) {
        const kind = <i32>load<u8>(table + <usize>c);
        if (kind & 1) {
          candidate = true;
        } else if (kind > 1) {
          // A built-in detector: its second character must fit (the table holds which) and the
          // first must sit at a word boundary.
          const d = i + 1 < n ? <i32>load<u16>(p + 2) : 0;
          if (d < 128 && (load<u8>(table + 128 + <usize>d) & kind) != 0) {
            const prev = i == 0 ? 0 : <i32>load<u16>(p - 2);
            candidate = prev >= 128 || load<u8>(table + 256 + <usize>prev) == 0;
          }
        }
      } else if (hasOther) {
        candidate = other.includes(c);
      }
      if (!candidate) {
        i++;
        continue;
      }
      if (this.matchAt(s, i)) {
        if (parts == null) parts = new Array<string>(0);
        parts.push(s.substring(last, this.start));
        parts.push(this.mask);
        last = this.end;
        i = this.end;
        this.count++;
      } else {
        i++;
      }
    }
    if (parts == null) return s;
    parts.push(s.substring(last));
    return parts.join("");
  }

  /** Whether a secret starts at `i`; sets the range to mask. */
  private matchAt(s: string, i: i32): bool {
    for (let k = 0, m = this.literals.length; k < m; k++) {
      const lit = unchecked(this.literals[k]);
      if (lit.length > 0 && startsAt(s, i, lit)) {
        this.start = i;
        this.end = i + lit.length;
        return true;
      }
    }
    if (!this.builtin) return false;
    const c = s.charCodeAt(i);
    if (i > 0 && isKeyChar(s.charCodeAt(i - 1))) return false; // not at a word boundary
    this.start = i;
    if (c == 0x73) return startsAt(s, i, "sk-") && this.token(s, i + 3, KEY, 20); // sk-, sk-ant-, sk-proj-
    if (c == 0x67) {
      if (startsAt(s, i, "github_pat_")) return this.token(s, i + 11, ALNUM_UNDERSCORE, 20);
      if (i + 4 <= s.length && s.charCodeAt(i + 1) == 0x68 && s.charCodeAt(i + 3) == 0x5f) {
        const t = s.charCodeAt(i + 2); // ghp_ gho_ ghu_ ghs_ ghr_
        if (t == 0x70 || t == 0x6f || t == 0x75 || t == 0x73 || t == 0x72) return this.token(s, i + 4, ALNUM, 30);
      }
      return false;
    }
    if (c == 0x41) {
      if (startsAt(s, i, "AIza")) return this.token(s, i + 4, KEY, 35);
      if (!startsAt(s, i, "AKIA") && !startsAt(s, i, "ASIA")) return false;
      if (i + 20 > s.length) return false;
      for (let j = i + 4; j < i + 20; j++) {
        const d = s.charCodeAt(j);
        if (!isUpper(d) && !(d >= 0x30 && d <= 0x39)) return false;
      }
      if (i + 20 < s.length && isAlnum(s.charCodeAt(i + 20))) return false;
      this.end = i + 20;
      return true;
    }
    if (c == 0x78) {
      if (!startsAt(s, i, "xox") || i + 4 >= s.length || s.charCodeAt(i + 4) != 0x2d) return false;
      const t = s.charCodeAt(i + 3); // xoxa- xoxb- xoxp- xoxr-
      if (t != 0x61 && t != 0x62 && t != 0x70 && t != 0x72) return false;
      return this.token(s, i + 5, SLACK, 10);
    }
    // "Bearer <token>", any case: mask the token, keep the word.
    if (i + 7 > s.length || !startsAtIgnoreCase(s, i, "bearer")) return false;
    let j = i + 6;
    if (j >= s.length || s.charCodeAt(j) != 0x20) return false;
    while (j < s.length && s.charCodeAt(j) == 0x20) j++;
    let e = j;
    while (e < s.length && isBearerChar(s.charCodeAt(e))) e++;
    if (e - j < 20) return false;
    this.start = j;
    this.end = e;
    return true;
  }

  /**
   * Where the part of a streamed text to hold back begins: the first position (among the last
   * `HOLD_MAX` characters) from which the rest of the text could still be the start of a secret —
   * a proper prefix of a literal, or of a built-in key whose characters run to the end (a key that
   * already matches but may go on is held too, so its tail is never shown unmasked). `s.length`
   * when nothing needs holding.
   */
  holdFrom(s: string): i32 {
    const n = s.length;
    const table = this.firstAscii;
    for (let i = max(0, n - HOLD_MAX); i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 128 ? table[c] == 0 : !this.litOther.includes(c)) continue;
      if (this.partialAt(s, i)) return i;
    }
    return n;
  }

  /** Whether a secret could start at `i` and run past the end of `s` (see `holdFrom`). */
  private partialAt(s: string, i: i32): bool {
    const rest = s.length - i;
    for (let k = 0, m = this.literals.length; k < m; k++) {
      const lit = unchecked(this.literals[k]);
      if (rest < lit.length && startsAt(lit, 0, s.substring(i))) return true;
    }
    if (!this.builtin) return false;
    if (i > 0 && isKeyChar(s.charCodeAt(i - 1))) return false; // not at a word boundary
    const c = s.charCodeAt(i);
    if (c == 0x73) return openEnded(s, i, "sk-", KEY);
    if (c == 0x67) {
      if (openEnded(s, i, "github_pat_", ALNUM_UNDERSCORE)) return true;
      // gh?_ with ? one of p o u s r, then alphanumerics to the end
      if (rest >= 2 && s.charCodeAt(i + 1) != 0x68) return false;
      if (rest >= 3) {
        const t = s.charCodeAt(i + 2);
        if (t != 0x70 && t != 0x6f && t != 0x75 && t != 0x73 && t != 0x72) return false;
      }
      if (rest >= 4 && s.charCodeAt(i + 3) != 0x5f) return false;
      return rest < 4 || run(s, i + 4, ALNUM) == rest - 4;
    }
    if (c == 0x41) {
      if (openEnded(s, i, "AIza", KEY)) return true;
      // AKIA / ASIA and 16 upper-case letters or digits: held while it is 20 or fewer to the end
      // (at exactly 20, what follows decides whether it is a key).
      if (rest > 20) return false;
      if (rest >= 2 && s.charCodeAt(i + 1) != 0x4b && s.charCodeAt(i + 1) != 0x53) return false;
      if (rest >= 3 && s.charCodeAt(i + 2) != 0x49) return false;
      if (rest >= 4 && s.charCodeAt(i + 3) != 0x41) return false;
      for (let j = i + 4; j < s.length; j++) {
        const d = s.charCodeAt(j);
        if (!isUpper(d) && !(d >= 0x30 && d <= 0x39)) return false;
      }
      return true;
    }
    if (c == 0x78) {
      // xox?- with ? one of a b p r, then [A-Za-z0-9-] to the end
      if (rest >= 2 && s.charCodeAt(i + 1) != 0x6f) return false;
      if (rest >= 3 && s.charCodeAt(i + 2) != 0x78) return false;
      if (rest >= 4) {
        const t = s.charCodeAt(i + 3);
        if (t != 0x61 && t != 0x62 && t != 0x70 && t != 0x72) return false;
      }
      if (rest >= 5 && s.charCodeAt(i + 4) != 0x2d) return false;
      return rest < 5 || run(s, i + 5, SLACK) == rest - 5;
    }
    // "Bearer", any case, then spaces, then token characters to the end
    const word = min(rest, 6);
    for (let k = 0; k < word; k++) {
      let d = s.charCodeAt(i + k);
      if (isUpper(d)) d += 0x20;
      if (d != "bearer".charCodeAt(k)) return false;
    }
    if (rest <= 6) return true;
    let j = i + 6;
    if (s.charCodeAt(j) != 0x20) return false;
    while (j < s.length && s.charCodeAt(j) == 0x20) j++;
    while (j < s.length && isBearerChar(s.charCodeAt(j))) j++;
    return j == s.length;
  }

  /** A key body of at least `min` `cls` characters at `from`: the match ends after it. */
  private token(s: string, from: i32, cls: i32, min: i32): bool {
    const len = run(s, from, cls);
    if (len < min) return false;
    this.end = from + len;
    return true;
  }

  /** Masks every string inside a JSON object, recursively, in place. */
  redactObj(obj: JSON.Obj): void {
    const keys = obj.keys();
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const v = obj.get(key)!;
      const t = typeOf(v);
      if (t == JSON.Types.String) {
        const s = stringValue(v);
        const r = this.redact(s);
        if (r != s) obj.set<string>(key, r);
      } else if (t == JSON.Types.Object) {
        this.redactObj(obj.getAs<JSON.Obj>(key));
      } else if (t == JSON.Types.Array) {
        this.redactArr(obj.getAs<JSON.Arr>(key));
      }
    }
  }

  redactArr(arr: JSON.Arr): void {
    for (let i = 0, n = arr.length; i < n; i++) {
      const t = typeOf(arr.at(i));
      if (t == JSON.Types.String) {
        const s = stringValue(arr.at(i));
        const r = this.redact(s);
        if (r != s) arr.set<string>(i, r);
      } else if (t == JSON.Types.Object) {
        this.redactObj(arr.getAs<JSON.Obj>(i));
      } else if (t == JSON.Types.Array) {
        this.redactArr(arr.getAs<JSON.Arr>(i));
      }
    }
  }

  /** Masks one string member of `obj`, if it is a string. */
  redactField(obj: JSON.Obj, key: string): void {
    const s = getString(obj, key);
    if (s == null) return;
    const r = this.redact(s);
    if (r != s) obj.set<string>(key, r);
  }

  /** A tool call (or tool call update): title, content text and diffs, rawInput, rawOutput. */
  redactToolCall(tc: JSON.Obj): void {
    this.redactField(tc, "title");
    const content = getArr(tc, "content");
    if (content != null) {
      for (let i = 0, n = content.length; i < n; i++) {
        const entry = arrObj(content, i);
        if (entry == null) continue;
        const type = getString(entry, "type");
        if (type == "content") {
          const block = getObj(entry, "content");
          if (block != null && getString(block, "type") == "text") this.redactField(block, "text");
        } else if (type == "diff") {
          this.redactField(entry, "oldText");
          this.redactField(entry, "newText");
        }
      }
    }
    for (let k = 0; k < 2; k++) {
      const key = k == 0 ? "rawInput" : "rawOutput";
      const v = tc.get(key);
      if (v == null) continue;
      const t = typeOf(v);
      if (t == JSON.Types.Object) this.redactObj(tc.getAs<JSON.Obj>(key));
      else if (t == JSON.Types.Array) this.redactArr(tc.getAs<JSON.Arr>(key));
      else if (t == JSON.Types.String) this.redactField(tc, key);
    }
  }
}

function makeRedactor(): Redactor {
  const r = new Redactor();
  r.prepare();
  return r;
}

/** The tail of a session's text stream held back until the next chunk (or a flush). */
class Held {
  text: string = "";
  /** `agent_message_chunk` or `agent_thought_chunk`. */
  kind: string = "";
}

class Redact extends Proxy {
  redactor: Redactor = makeRedactor();
  total: i32 = 0;
  held: PerSession<Held> = new PerSession<Held>();

  onConfigure(config: Config): void {
    const r = this.redactor;
    const literals = config.getStrings("patterns");
    // Longest first, so a pattern that contains another is masked whole.
    literals.sort((a: string, b: string): i32 => b.length - a.length);
    r.literals = literals;
    if (config.has("mask")) r.mask = config.getString("mask");
    r.builtin = config.getBool("builtin", true);
    r.prepare();
  }

  onSessionUpdate(update: SessionUpdate): void {
    const kind = update.kind;
    const r = this.redactor;
    const sessionId = update.sessionId;
    r.count = 0;
    if ((kind == "agent_message_chunk" || kind == "agent_thought_chunk") && update.isTextChunk) {
      let text = update.text;
      if (this.held.has(sessionId)) {
        const h = this.held.of(sessionId);
        if (h.text.length && h.kind == kind) {
          text = h.text + text;
          h.text = "";
        } else this.flush(sessionId);
      }
      // Hold back what could be the start of a secret the next chunk completes.
      const cut = r.holdFrom(text);
      if (cut < text.length) {
        const h = this.held.of(sessionId);
        h.text = text.substring(cut);
        h.kind = kind;
      }
      if (cut == 0) return; // all of it held: it leaves with the next chunk or the flush
      const shown = r.redact(cut < text.length ? text.substring(0, cut) : text);
      if (shown != update.text) update.text = shown; // marks the update changed
    } else {
      this.flush(sessionId); // what was held goes first, in order
      if (kind == "tool_call" || kind == "tool_call_update") {
        const u = update.readUpdate();
        if (u != null) {
          r.redactToolCall(u);
          if (r.count > 0) update.markChanged();
        }
      }
    }
    this.counted(kind);
    this.forward(update);
  }

  /** Sends a session's held text on (masked), as a chunk of its kind. */
  private flush(sessionId: string): void {
    if (!this.held.has(sessionId)) return;
    const h = this.held.of(sessionId);
    if (h.text.length == 0) return;
    const r = this.redactor;
    const saved = r.count;
    r.count = 0;
    const text = r.redact(h.text);
    h.text = "";
    if (h.kind == "agent_thought_chunk") this.sendThought(sessionId, text);
    else this.sendMessageChunk(sessionId, text);
    this.counted(h.kind);
    r.count = saved;
  }

  /** The turn is over (its answer is about to leave): nothing stays held past it. */
  onTurnEnd(prompt: PromptRequest, stopReason: string): void {
    this.flush(prompt.sessionId);
  }

  onClientNotification(notification: Notification): void {
    if (notification.method == "session/cancel") this.flush(notification.sessionId);
    this.forward(notification);
  }

  onPermissionRequest(request: PermissionRequest): void {
    this.flush(request.sessionId); // held text goes first
    const r = this.redactor;
    r.count = 0;
    const tc = request.readToolCall();
    if (tc != null) {
      r.redactToolCall(tc);
      if (r.count > 0) request.markChanged();
    }
    this.counted("session/request_permission");
    this.forward(request);
  }

  private counted(where: string): void {
    const n = this.redactor.count;
    if (n == 0) return;
    this.total += n;
    this.log(LogLevel.Info, `masked ${n} secret${n == 1 ? "" : "s"} in ${where} (${this.total} so far)`);
  }
}

register(new Redact());
