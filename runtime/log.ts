/**
 * Cordon's diagnostics. Everything goes to stderr: stdout carries ACP and nothing else.
 * Level from `CORDON_LOG` (error | warn | info | debug), default `info`.
 *
 * Every line is made safe before it is written, because much of what is logged comes from peers
 * (a proxy's `_cordon/log` text, methods, error messages): control characters are escaped (a
 * newline shows as `\n`, ESC as `\x1b`, so one call is exactly one line and no ANSI sequence
 * reaches the terminal) and a line is at most {@link MAX_LOG_LINE_CHARS} characters of message.
 */
export type Level = "error" | "warn" | "info" | "debug";

/** Null prototype, and looked up only through {@link isLevel}: `"__proto__"` or `"toString"` are not levels. */
const ORDER: Readonly<Record<Level, number>> = Object.freeze(
  Object.assign(Object.create(null) as Record<Level, number>, { error: 0, warn: 1, info: 2, debug: 3 }),
);

/** Longest message (after escaping) one log line carries; the rest is summarised as `… (N more chars)`. */
export const MAX_LOG_LINE_CHARS = 4096;

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
  enabled(level: Level): boolean;
  child(prefix: string): Logger;
}

export function createLogger(
  level: Level = parseLevel(process.env.CORDON_LOG),
  write: (line: string) => void = (line) => process.stderr.write(line),
  prefix = "cordon",
): Logger {
  const threshold = isLevel(level) ? ORDER[level] : ORDER.info;
  const head = `[${sanitizeForLog(prefix, 256)}] `;
  const enabled = (l: Level) => isLevel(l) && ORDER[l] <= threshold;
  const at = (l: Level) => (message: string) => {
    if (enabled(l)) write(`${head}${l === "info" ? "" : `${l}: `}${sanitizeForLog(message)}\n`);
  };
  return {
    error: at("error"),
    warn: at("warn"),
    info: at("info"),
    debug: at("debug"),
    enabled,
    child: (p) => createLogger(level, write, `${prefix}:${p}`),
  };
}

/** `value` when it names a level (own keys only), else `fallback`. */
export function parseLevel(value: unknown, fallback: Level = "info"): Level {
  return isLevel(value) ? value : fallback;
}

/** Whether `value` is one of the four level names. Prototype-safe: `"__proto__"`, `"constructor"`, `"toString"` are not. */
export const isLevel = (value: unknown): value is Level => typeof value === "string" && Object.hasOwn(ORDER, value);

/**
 * `text` as one safe log line: C0 controls, DEL and C1 controls are escaped (`\n`, `\r`, `\t`,
 * else `\xHH`, which also defuses every ANSI/VT escape sequence since they all start with ESC or
 * 8-bit CSI/OSC), as are U+2028/U+2029 and the bidi embedding/override/isolate controls (`\uHHHH`);
 * everything else is kept. At most `maxChars` characters of the result are kept (never cutting an
 * escape or a surrogate pair), followed by `… (N more chars)` counting the input characters left
 * out; escaping stops there, so a 16 MiB message costs no more than a short one.
 *
 * A non-string is rendered as JSON (or `String()` when it cannot be), never throwing: deep nesting,
 * null prototypes and hostile `toString` are all survivable. Backslashes are not doubled, so the
 * escapes are for reading, not for decoding.
 */
export function sanitizeForLog(text: unknown, maxChars: number = MAX_LOG_LINE_CHARS): string {
  const s = typeof text === "string" ? text : render(text);
  const limit = Math.max(0, Math.floor(maxChars));
  let out = "";
  let i = 0;
  while (i < s.length) {
    // Copy the run of harmless characters that fits in one slice.
    const end = Math.min(s.length, i + (limit - out.length));
    let j = i;
    while (j < end && !needsEscape(s.charCodeAt(j))) j++;
    // Never split a surrogate pair at the bound.
    if (j === end && j > i && j < s.length && isHighSurrogate(s.charCodeAt(j - 1)) && isLowSurrogate(s.charCodeAt(j))) j--;
    out += s.slice(i, j);
    i = j;
    if (i >= s.length) break;
    const c = s.charCodeAt(i);
    if (!needsEscape(c)) break; // the run stopped at the bound
    const piece = escapeChar(c);
    if (out.length + piece.length > limit) break;
    out += piece;
    i++;
  }
  return i < s.length ? `${out}… (${s.length - i} more chars)` : out;
}

function needsEscape(c: number): boolean {
  return (
    c < 0x20 ||
    (c >= 0x7f && c <= 0x9f) ||
    c === 0x2028 ||
    c === 0x2029 ||
    (c >= 0x202a && c <= 0x202e) ||
    (c >= 0x2066 && c <= 0x2069) ||
    c === 0x200e ||
    c === 0x200f ||
    c === 0x061c
  );
}

function escapeChar(c: number): string {
  if (c === 0x0a) return "\\n";
  if (c === 0x0d) return "\\r";
  if (c === 0x09) return "\\t";
  if (c <= 0xff) return `\\x${c.toString(16).padStart(2, "0")}`;
  return `\\u${c.toString(16).padStart(4, "0")}`;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

function render(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "bigint") return value.toString();
  try {
    const json = JSON.stringify(value);
    if (typeof json === "string") return json;
  } catch {
    // too deep, cyclic, or a throwing toJSON: fall through
  }
  try {
    return String(value);
  } catch {
    return `[unprintable ${typeof value}]`;
  }
}
