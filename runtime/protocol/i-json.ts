/**
 * I-JSON (RFC 7493) on what a proxy sends: text that every conforming reader reads alike.
 *
 * Cordon's gates read a message as `JSON.parse` does (last duplicate wins, escapes decoded, case
 * kept), but forward the sender's own text. Readers differ exactly where JSON is loose: a Go peer
 * (`encoding/json`) matches names case-insensitively and lets the last win, others take the first
 * duplicate, a careless one compares names without decoding escapes, and a lone surrogate is
 * replaced, kept or refused depending on the decoder. So a proxy's text must not depend on the
 * reader. Refused (the first violation, with what and where):
 *
 * - **duplicate names** in one object, at any depth, after decoding escapes (`"path"` twice, or
 *   `"path"` and `"p\u0061th"`), and names that a case-insensitive reader takes for the same
 *   (`"outcome"` and `"Outcome"`; folding as Go's `EqualFold` does for these: ASCII case, `K` the
 *   Kelvin sign, `ſ` the long s, `ς` final sigma);
 * - **protocol-key spellings**: at an envelope level, a name that folds to `jsonrpc`, `id`,
 *   `method`, `params`, `result` or `error` (case, the folds above, escapes, or anything after a
 *   NUL for readers that stop there) must be spelled exactly so — a lone `"Method"` or
 *   `"\u006dethod"` is refused. The envelope levels are the message's top level and, when the
 *   message is a `proxy/successor` envelope (either dialect), its `params` (the inner message).
 *   Below them the same holds for the few names Cordon's own rules read, where they read them
 *   (`JUDGED_NAMES`: a permission answer's `outcome`/`optionId`, an MCP server's `command`…);
 *   elsewhere a name's spelling is data (tool input may hold `"ID"`) and only the duplicate rules
 *   apply;
 * - **mixed messages**: a top level with `method` and `result`/`error`, or both `result` and
 *   `error` (JSON-RPC allows neither): Cordon takes the first for a request, a reader that looks
 *   for `result` first for an answer — to a request of its own with that id;
 * - **lone surrogates**, raw or escaped (`"\ud800"` alone, a `\udc00` without its high half, or a
 *   pair split between a raw and an escaped half), in names and in values.
 *
 * Refused, not re-serialized: rewriting every proxy's output from the parsed value would cost a
 * `JSON.stringify` per message and lose byte-faithfulness for the honest ones (number spellings,
 * escapes, key order); refusing costs them nothing, and only a proxy that writes ambiguous text —
 * which no JSON serializer does — is told. The conductor checks every message from every proxy
 * hop (sandboxed, native `command` proxies alike: the gates apply to both, so both must be read
 * as their next reader reads them), in the same pass that bounds its nesting (`maxDepth`, see
 * routing/admission.ts); the client and the agent are not proxies and are not checked.
 *
 * Honest text passes untouched: nothing is rewritten, so byte-faithful forwarding is unchanged.
 *
 * The scan assumes text `JSON.parse` already accepted (it does not validate), and is one pass:
 * a character loop over structure; a string's contents are jumped over with `indexOf` (the next
 * backslash is looked up again only once passed; a string with escapes ends at the first quote
 * past at most 4 escaped ones, raw-json.ts `closingQuote`, when no `\u` is in it), else with a
 * pattern; `isWellFormed` for raw surrogates, a regular expression for escaped ones (from the first
 * string with a `\u` escape, which skipping the strings finds), and the folded names of the open
 * objects on one shared stack (a map for an object past 16 members). It needs no stack frames: a
 * 20,000-deep text scans like a flat one. `maxDepth` makes the same pass enforce the nesting
 * bound (nesting.ts): the router scans a proxy's output once for both, and the violation's `rule`
 * says which was broken (`nesting` or an I-JSON one).
 *
 * Cost, measured on Node 20 on a shared 2-core machine (load average 6–16, so absolute figures
 * are a few times an idle machine's; compare each with `JSON.parse` of the same text, measured in
 * the same runs): a 1.2 KB `session/update` (a tool call, 25 members in 9 objects) 5–6 µs against
 * 3.5–6.7 µs; a 100 KB one whose text has 5,100 escapes 85–130 µs against 64–93 µs; a 100 KB text
 * without escapes 2 µs (one `indexOf` over the string) against 35 µs; a 150-byte message chunk
 * (`bench/hot-path.ts`) 1.2–3 µs against 1–3.3 µs; bench P3's 100 KB prompt (150 K UTF-16 units,
 * 25,000 escaped quotes) 235 µs against 400 µs (548 µs while the scan began with a search of the
 * whole text for `\u`); 100 KB of prose with a newline escape per line 23 µs against 91 µs (143
 * µs while a string with any escape went to the pattern). So checking a proxy's output costs about
 * what parsing it does or less (0.25–1.7×), once per message.
 */
import { closingQuote, escapedAt, isBlank, rawOf, stringEnd, type TextLayout } from "./raw-json.js";

export interface IJsonViolation {
  rule: "duplicate-name" | "protocol-key-spelling" | "mixed-message" | "lone-surrogate" | "nesting";
  /** What is wrong and where, e.g. `member "path" appears twice in params`. */
  detail: string;
  /** Offset in the text where the offending name, string or bracket starts. */
  offset: number;
}

/** The folded names (and their spelling) of the objects open on the path being scanned. */
interface Seen {
  folded: string[];
  spelled: string[];
  /** Entries in use; past it, stale ones of closed objects (setting an array's length costs more than reusing its slots). */
  count: number;
}

/** One for every scan (a scan runs to its end synchronously): its arrays are reused, not reallocated per message. */
const SEEN: Seen = { folded: [], spelled: [], count: 0 };

/** Members of one object compared linearly before a map takes over. */
const MAP_AT = 16;

/** The names whose meaning is the protocol's at an envelope level. */
const PROTOCOL_KEYS = new Set(["jsonrpc", "id", "method", "params", "result", "error"]);
const ENVELOPES = new Set(["proxy/successor", "_proxy/successor"]);
const METHOD = 1;
const RESULT = 2;
const ERROR = 4;
const KIND_OF = new Map([
  ["method", METHOD],
  ["result", RESULT],
  ["error", ERROR],
]);

/**
 * The names Cordon's rules read below the top level, by where they read them (`[]`: any element):
 * there they must be spelled exactly, or a case-insensitive reader (a Go agent) would act on a
 * member the rules never saw — a lone `"OptionId":"allow"` in a permission answer, a
 * `"Command"` in an MCP server. Both a message and the message inside an envelope count.
 */
const JUDGED_NAMES: Record<string, string[]> = {
  result: ["outcome"],
  "result.outcome": ["outcome", "optionId"],
  params: ["sessionId", "path", "content", "command", "args", "env", "cwd", "mcpServers", "options", "toolCall"],
  "params.mcpServers[]": ["type", "name", "command", "args", "env", "url", "headers", "serverId"],
  "params.options[]": ["optionId", "kind"],
};
const JUDGED = new Map<string, Map<string, string>>();
for (const [path, names] of Object.entries(JUDGED_NAMES)) {
  for (const at of path.startsWith("params") ? [path, `params.${path}`] : [path]) {
    JUDGED.set(at, new Map(names.map((n) => [n.toLowerCase(), n])));
  }
}
/** Every path on the way to a `JUDGED` one (where the scan keeps track of where it is). */
const JUDGED_PREFIXES = new Set(
  [...JUDGED.keys()].flatMap((path) => path.split(/(?=\.|\[\])/).map((_, i, parts) => parts.slice(0, i + 1).join(""))),
);

/**
 * Whether Cordon's rules read a name at `shape` or below it: true for `params.mcpServers` and
 * `params.mcpServers[]` (a server's members are read), false for `params.prompt[]`. A value put
 * there in place is judged by more than the duplicate rules, which only a scan of the whole
 * message in its place applies (components/edited-forward.ts).
 */
export function judgedWithin(shape: string): boolean {
  return JUDGED_PREFIXES.has(shape);
}

/** A name as the loosest reader compares it (case folded, cut at a NUL): two names with one key are one name to some reader. */
export const readerKey = (name: string): string => protocolFold(fold(name));

interface Frame {
  object: boolean;
  /** Objects: where its folded names start in the scan's name stack; past `MAP_AT` of them, a map instead. */
  namesFrom: number;
  names: Map<string, string> | null;
  /** Where this container sits in its parent: a member name, an index, or null for the root. */
  at: string | number | null;
  parent: Frame | null;
  /** Arrays: index of the current element. Objects: name of the current member. */
  index: number;
  member: string;
  /** The top level's `params`: an envelope level if the message is an envelope. */
  candidate: boolean;
  /** Where it sits as a `JUDGED` path (`params.mcpServers[]`), or null when no judged path runs through it. */
  shape: string | null;
  /** Objects whose members' places are recorded (`layout`): where the current member's value starts, past its name. */
  valueFrom: number;
}

/**
 * The first I-JSON violation in `text` (a JSON text `JSON.parse` accepted), or null. With
 * `maxDepth`, nesting deeper than that (the top-level value is level 1) is one too.
 */
export function iJsonViolation(text: string, options: { maxDepth?: number; layout?: TextLayout } = {}): IJsonViolation | null {
  const violation = scan(text, options.maxDepth ?? Number.POSITIVE_INFINITY, options.layout ?? null);
  // The reused name stack would keep a big message's names alive: let them go.
  if (text.length > 64 * 1024) {
    SEEN.folded = [];
    SEEN.spelled = [];
  }
  return violation;
}

/**
 * Records where the member of `frame` that ends at `end` (its comma or closing brace) lies, if it
 * is one routing splices or takes apart: the top level's `id` and `params`, the `method` and
 * `params` inside the top level's `params` (an envelope's inner message).
 */
function place(text: string, frame: Frame, depth: number, end: number, layout: TextLayout): void {
  const name = frame.member;
  const slot =
    depth === 1
      ? name === "id" || name === "params"
        ? name
        : null
      : name === "method"
        ? "innerMethod"
        : name === "params"
          ? "innerParams"
          : null;
  if (slot === null) return;
  let start = frame.valueFrom;
  while (start < end && text.charCodeAt(start) !== 0x3a) start++; // the colon
  start++;
  while (isBlank(text.charCodeAt(start))) start++;
  while (end > start && isBlank(text.charCodeAt(end - 1))) end--;
  layout[slot] = [start, end];
}

function scan(text: string, maxDepth: number, layout: TextLayout | null): IJsonViolation | null {
  if (!(text as unknown as { isWellFormed(): boolean }).isWellFormed()) {
    const offset = loneSurrogateAt(text);
    return { rule: "lone-surrogate", detail: `a lone surrogate (U+${hex(text.charCodeAt(offset))}) at offset ${offset}`, offset };
  }
  let top = null as Frame | null;
  let depth = 0;
  let expectName = false;
  let nextBackslash = text.indexOf("\\");
  // Escaped surrogates are looked for apart, from the first string that has a \u escape: the
  // strings with escapes before it are skipped by a pattern that stops at one (`NO_U_ESCAPE`).
  let uEscapes = false;
  let badEscape: { offset: number; problem: string } | null = null;
  let topMethod: string | undefined;
  /** A protocol-key spelling found in the top level's `params`: a violation if the message is an envelope. */
  let innerSpelling: IJsonViolation | null = null;
  /** Which of `method`, `result`, `error` the top level has (bits). */
  let kinds = 0;
  const seen = SEEN;
  seen.count = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string literal: its end is the first quote not escaped by an odd run of backslashes.
      const start = i;
      if (nextBackslash !== -1 && nextBackslash < start) nextBackslash = text.indexOf("\\", start);
      const quote = text.indexOf('"', start + 1);
      // No escape in it: its first quote ends it.
      if (nextBackslash === -1 || nextBackslash > quote) i = quote;
      else if (uEscapes) i = stringEnd(text, start) - 1;
      else {
        const closing = closingQuote(text, quote);
        if (closing !== -1 && !text.slice(start + 1, closing).includes("\\u")) i = closing;
        else {
          // Many escaped quotes, or a `\u` in it: one pattern takes the string whole.
          NO_U_ESCAPE.lastIndex = start + 1;
          if (NO_U_ESCAPE.test(text)) i = NO_U_ESCAPE.lastIndex - 1;
          else {
            // This string has the text's first \u escape (the text is JSON, so every string ends).
            uEscapes = true;
            badEscape = surrogateEscapeProblem(text, start);
            i = stringEnd(text, i) - 1;
          }
        }
      }
      const escaped = nextBackslash !== -1 && nextBackslash < i;
      if (badEscape !== null && badEscape.offset < i) {
        return { rule: "lone-surrogate", detail: `${badEscape.problem} in ${stringPlace(top, expectName)}`, offset: badEscape.offset };
      }
      if (top === null || !top.object) continue;
      if (!expectName) {
        // The top-level method decides whether `params` is an envelope level.
        if (depth === 1 && top.member === "method") topMethod = decode(text.slice(start, i + 1), escaped);
        continue;
      }
      expectName = false;
      const written = text.slice(start + 1, i);
      const name = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : written;
      const folded = fold(name);
      const duplicate = recordName(top, seen, name, folded, start);
      if (duplicate !== null) return duplicate;
      if (top.shape !== null) {
        const misspelled = judgedSpelling(top, folded, written, start);
        if (misspelled !== null) return misspelled;
      }
      if (depth === 1) kinds |= KIND_OF.get(name) ?? 0;
      if (layout !== null && (depth === 1 || top.candidate)) top.valueFrom = i + 1;
      if (depth === 1 || top.candidate) {
        const misspelled = protocolSpelling(top, folded, written, start);
        if (misspelled !== null && depth === 1) return misspelled;
        if (misspelled !== null) innerSpelling ??= misspelled;
      }
    } else if (c === 0x7b || c === 0x5b) {
      const at: string | number | null = top === null ? null : top.object ? top.member : top.index;
      top = {
        object: c === 0x7b,
        namesFrom: seen.count,
        names: null,
        at,
        parent: top,
        index: 0,
        member: "",
        candidate: depth === 1 && at === "params",
        shape: shapeOf(top, at),
        valueFrom: -1,
      };
      depth++;
      if (depth > maxDepth) return { rule: "nesting", detail: `nests deeper than ${maxDepth} levels at ${pathOf(top)}`, offset: i };
      expectName = top.object;
    } else if (c === 0x7d || c === 0x5d) {
      if (layout !== null && top !== null && top.valueFrom >= 0) place(text, top, depth, i, layout);
      if (top !== null) seen.count = top.namesFrom; // its names are forgotten (overwritten by the next object's)
      top = top?.parent ?? null;
      depth--;
    } else if (c === 0x2c && top !== null) {
      if (layout !== null && top.valueFrom >= 0) place(text, top, depth, i, layout);
      if (top.object) expectName = true;
      else top.index++;
    }
  }
  if ((kinds & METHOD && kinds & (RESULT | ERROR)) || (kinds & RESULT && kinds & ERROR)) {
    // Cordon classifies by `method` first, then `error`; a reader that looks for `result` first takes it for an answer.
    const names = ["method", "result", "error"].filter((_, k) => kinds & (1 << k)).map((n) => `"${n}"`);
    return {
      rule: "mixed-message",
      detail: `the top level has ${names.join(" and ")}: a reader may take it for a request or an answer`,
      offset: 0,
    };
  }
  if (innerSpelling !== null && topMethod !== undefined && ENVELOPES.has(topMethod)) {
    return { ...innerSpelling, detail: `${innerSpelling.detail} (the message inside a ${topMethod} envelope)` };
  }
  return null;
}

/** The violation in `message`'s own text, if it has text (`attachRaw`); a message Cordon built has none to check. */
export function iJsonViolationOf(message: unknown, options?: { maxDepth?: number }): IJsonViolation | null {
  if (typeof message !== "object" || message === null) return null;
  const text = rawOf(message);
  return text === undefined ? null : iJsonViolation(text, options);
}

/** Records member `name` of object `frame`; a violation if it repeats a name of that object (after decoding and folding). */
function recordName(frame: Frame, seen: Seen, name: string, folded: string, offset: number): IJsonViolation | null {
  let first: string | undefined;
  if (frame.names !== null) {
    first = frame.names.get(folded);
    frame.names.set(folded, name);
  } else {
    // Most objects have a handful of members: a linear look over a shared stack allocates nothing.
    const end = seen.count;
    for (let j = frame.namesFrom; j < end; j++) {
      if (seen.folded[j] === folded) {
        first = seen.spelled[j];
        break;
      }
    }
    seen.folded[end] = folded;
    seen.spelled[end] = name;
    seen.count = end + 1;
    if (end + 1 - frame.namesFrom > MAP_AT) {
      frame.names = new Map();
      for (let j = frame.namesFrom; j <= end; j++) frame.names.set(seen.folded[j], seen.spelled[j]);
    }
  }
  frame.member = name;
  if (first === undefined) return null;
  const where = pathOf(frame);
  const detail =
    first === name
      ? `member ${quote(name)} appears twice in ${where}`
      : `members ${quote(first)} and ${quote(name)} in ${where} are one name to a reader that ignores case`;
  return { rule: "duplicate-name", detail, offset };
}

/** A protocol key (at an envelope level) spelled otherwise than the protocol does. */
function protocolSpelling(frame: Frame, folded: string, written: string, offset: number): IJsonViolation | null {
  const key = protocolFold(folded);
  if (!PROTOCOL_KEYS.has(key) || written === key) return null;
  return {
    rule: "protocol-key-spelling",
    detail: `member ${quote(written, false)} in ${pathOf(frame)} is not spelled as the protocol key "${key}", but a reader may take it for one`,
    offset,
  };
}

/** A name Cordon's rules read at this place, spelled otherwise (a Go peer would read it as that name; the rules would not). */
function judgedSpelling(frame: Frame, folded: string, written: string, offset: number): IJsonViolation | null {
  const key = JUDGED.get(frame.shape!)?.get(protocolFold(folded));
  if (key === undefined || written === key) return null;
  return {
    rule: "protocol-key-spelling",
    detail: `member ${quote(written, false)} in ${pathOf(frame)} is not spelled "${key}", which Cordon's rules read there, but a reader may take it for that`,
    offset,
  };
}

/** The `JUDGED` path of a container opened at `at` in `parent` (the root: ""), or null when none runs through it. */
function shapeOf(parent: Frame | null, at: string | number | null): string | null {
  if (parent === null) return "";
  if (parent.shape === null) return null;
  const shape = typeof at === "number" ? `${parent.shape}[]` : parent.shape === "" ? String(at) : `${parent.shape}.${at}`;
  return JUDGED_PREFIXES.has(shape) ? shape : null;
}

/** A name for a message: JSON-quoted (or as written, when `encode` is false), long ones cut. */
function quote(name: string, encode = true): string {
  const cut = name.length > 80 ? `${name.slice(0, 80)}…` : name;
  return encode ? JSON.stringify(cut) : `"${cut}"`;
}

const decode = (literal: string, escaped: boolean): string => (escaped ? (JSON.parse(literal) as string) : literal.slice(1, -1));

/** Folds a name as a case-insensitive reader compares it (Go's `EqualFold` for the letters that matter). */
function fold(name: string): string {
  const lower = name.toLowerCase(); // also maps the Kelvin sign to k
  return lower.includes("ſ") || lower.includes("ς") ? lower.replaceAll("ſ", "s").replaceAll("ς", "σ") : lower;
}

/** A folded name as a reader that stops at NUL sees it. */
function protocolFold(folded: string): string {
  const nul = folded.indexOf("\u0000");
  return nul === -1 ? folded : folded.slice(0, nul);
}

const isHigh = (u: number): boolean => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number): boolean => u >= 0xdc00 && u <= 0xdfff;
const hex = (u: number): string => u.toString(16).toUpperCase().padStart(4, "0");

/** The code unit of the 4 hex digits at `pos`, or -1. */
function hexAt(text: string, pos: number): number {
  const digits = text.slice(pos, pos + 4);
  return /^[0-9a-fA-F]{4}$/.test(digits) ? Number.parseInt(digits, 16) : -1;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g;

/**
 * The rest of a string literal with no `\u` escape in it: runs of ordinary characters, each other
 * escape taken whole (so `\\u` is an escaped backslash and a `u`), then the closing quote; fails
 * at a `\u` escape. It replaces a search of the whole text for `\u` before the scan, which cost
 * more than the scan itself on text with many escapes (a backslash every few characters makes
 * `indexOf` restart at each).
 */
const NO_U_ESCAPE = /[^"\\]*(?:\\[^u][^"\\]*)*"/y;

/**
 * The first escaped surrogate that is not half of an escaped pair (`\uD83D\uDE00`), at or after
 * `from`. A `\\u…` (an escaped backslash, then text) is no escape.
 */
function surrogateEscapeProblem(text: string, from: number): { offset: number; problem: string } | null {
  SURROGATE_ESCAPE.lastIndex = from;
  for (let m = SURROGATE_ESCAPE.exec(text); m !== null; m = SURROGATE_ESCAPE.exec(text)) {
    if (escapedAt(text, m.index)) continue; // its backslash is itself escaped
    const unit = Number.parseInt(m[0].slice(2), 16);
    const offset = m.index;
    if (isLow(unit)) return { offset, problem: `an escaped low surrogate \\u${hex(unit)} without its high half` };
    const next = text.charCodeAt(offset + 6) === 0x5c && text.charCodeAt(offset + 7) === 0x75 ? hexAt(text, offset + 8) : -1;
    if (!isLow(next)) return { offset, problem: `an escaped high surrogate \\u${hex(unit)} without its low half` };
    SURROGATE_ESCAPE.lastIndex = offset + 12;
  }
  return null;
}

function loneSurrogateAt(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const u = text.charCodeAt(i);
    if (isHigh(u) && isLow(text.charCodeAt(i + 1))) i++;
    else if (isHigh(u) || isLow(u)) return i;
  }
  return -1;
}

/** `params.prompt[0].text`-style path of a container (`the top level` for the root). */
function pathOf(frame: Frame): string {
  const parts: string[] = [];
  for (let f: Frame | null = frame; f !== null && f.at !== null; f = f.parent) {
    parts.push(typeof f.at === "number" ? `[${f.at}]` : /^[A-Za-z_$][\w$]*$/.test(f.at) ? `.${f.at}` : `[${JSON.stringify(f.at)}]`);
  }
  const path = parts.reverse().join("");
  return path === "" ? "the top level" : path.startsWith(".") ? path.slice(1) : path;
}

/** Where a string with a bad escape sits, for the message. */
function stringPlace(top: Frame | null, isName: boolean): string {
  if (top === null) return "the top-level string";
  if (isName) return `a member name in ${pathOf(top)}`;
  const at = top.object ? top.member : top.index;
  return `the value at ${pathOf({ ...top, at, parent: top })}`;
}
