/**
 * Cordon's diagnostics. Everything goes to stderr: stdout carries ACP and nothing else.
 * Level from `CORDON_LOG` (error | warn | info | debug), default `info`.
 *
 * Every line is made safe before it is written, because much of what is logged comes from peers
 * (a proxy's `_cordon/log` text, methods, error messages): control characters are escaped (a
 * newline shows as `\n`, ESC as `\x1b`, so one call is exactly one line and no ANSI sequence
 * reaches the terminal) and a line is at most {@link MAX_LOG_LINE_CHARS} characters of message.
 *
 * stderr is a pipe more often than not, and Node writes pipes asynchronously: what its reader does
 * not take waits in Cordon's memory. So the default sink is {@link writeStderr}, which lets at most
 * {@link MAX_PENDING_STDERR_BYTES} wait; while stderr is congested beyond that, lines are dropped
 * and counted, and once it drains one line says how many were lost. stdout (ACP) is never touched.
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
  write: (line: string) => void = writeStderr,
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

/** Output that may wait unwritten in stderr's buffer (its reader is slow or stopped) before more is dropped. */
export const MAX_PENDING_STDERR_BYTES = 1024 * 1024;

/** What {@link congestionBoundedWriter} needs of a stream (a `Writable`, such as `process.stderr`). */
export interface DrainableStream {
  write(chunk: string | Uint8Array): boolean;
  readonly writableLength: number;
  /** Set once a write found the buffer past its high-water mark: a `drain` event will follow. */
  readonly writableNeedDrain: boolean;
  once(event: "drain", listener: () => void): unknown;
}

/**
 * A writer to `stream` that never lets more than `maxPending` bytes wait in its buffer. While that
 * much waits, what comes is dropped and its lines counted (a string is one log line; a chunk of a
 * process's output counts its newlines, at least one); when the stream drains, one line reports
 * the count, and writing resumes. What waits is at most `maxPending` plus one write (a log line is
 * at most ~4 KiB, a process's chunk 64 KiB), and a synchronous stream (a file, a TTY, which never
 * has anything waiting) is never affected.
 *
 * Cost: a comparison per write; while dropping, nothing is kept but the count.
 */
export function congestionBoundedWriter(
  stream: DrainableStream,
  maxPending: number = MAX_PENDING_STDERR_BYTES,
): (chunk: string | Uint8Array) => void {
  let dropped = 0;
  let congested = false;
  const report = () => {
    const lines = dropped;
    congested = false;
    dropped = 0;
    stream.write(
      `[cordon] warn: ${lines} log line${lines === 1 ? "" : "s"} dropped while stderr was congested (its reader did not keep up)\n`,
    );
  };
  return (chunk) => {
    // Only while a `drain` is due: otherwise nothing would ever report and end the dropping.
    if (congested || (stream.writableLength >= maxPending && stream.writableNeedDrain)) {
      dropped += typeof chunk === "string" ? 1 : Math.max(1, countNewlines(chunk));
      if (!congested) {
        congested = true;
        stream.once("drain", report);
      }
      return;
    }
    stream.write(chunk);
  };
}

function countNewlines(chunk: Uint8Array): number {
  let n = 0;
  for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) n++;
  return n;
}

let stderrWriter: ((chunk: string | Uint8Array) => void) | null = null;

/**
 * Writes to this process's stderr, bounded as {@link congestionBoundedWriter} says: the one sink
 * for Cordon's log lines and the output of the processes it passes through, so they share the bound
 * and the count.
 */
export function writeStderr(chunk: string | Uint8Array): void {
  stderrWriter ??= congestionBoundedWriter(process.stderr);
  stderrWriter(chunk);
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
