import { describe, expect, it } from "vitest";
import { createLogger, isLevel, MAX_LOG_LINE_CHARS, parseLevel, sanitizeForLog } from "./log.js";

function capture(level: Parameters<typeof createLogger>[0] = "debug") {
  const lines: string[] = [];
  return { lines, log: createLogger(level, (line) => lines.push(line)) };
}

describe("levels", () => {
  it("knows exactly the four levels, and nothing inherited from Object.prototype", () => {
    for (const l of ["error", "warn", "info", "debug"]) expect(isLevel(l)).toBe(true);
    for (const l of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "", "INFO", "trace", 1, null, undefined, {}]) {
      expect(isLevel(l)).toBe(false);
    }
  });

  it("parses CORDON_LOG prototype-safely, with info (or the given fallback) for anything else", () => {
    expect(parseLevel("warn")).toBe("warn");
    expect(parseLevel(undefined)).toBe("info");
    expect(parseLevel("__proto__")).toBe("info");
    expect(parseLevel("constructor")).toBe("info");
    expect(parseLevel("toString", "warn")).toBe("warn");
    expect(parseLevel(42)).toBe("info");
  });

  it("a logger made with a level it does not know logs at info instead of dropping everything", () => {
    const lines: string[] = [];
    const log = createLogger("constructor" as never, (line) => lines.push(line));
    log.info("shown");
    log.debug("hidden");
    expect(lines).toEqual(["[cordon] shown\n"]);
  });
});

describe("sanitizeForLog", () => {
  it("makes newlines, carriage returns and tabs visible", () => {
    expect(sanitizeForLog("a\nb\r\nc\td")).toBe("a\\nb\\r\\nc\\td");
  });

  it("escapes every C0 control, DEL and every C1 control, so no ANSI sequence reaches the terminal", () => {
    expect(sanitizeForLog("\x1b[31mred\x1b[0m")).toBe("\\x1b[31mred\\x1b[0m");
    expect(sanitizeForLog("\x1b]0;pwned title\x07")).toBe("\\x1b]0;pwned title\\x07");
    expect(sanitizeForLog("\u009b2J clear")).toBe("\\x9b2J clear"); // 8-bit CSI
    expect(sanitizeForLog("nul\0del\x7f")).toBe("nul\\x00del\\x7f");
    for (let c = 0; c < 0x20; c++) expect(sanitizeForLog(String.fromCharCode(c))).toMatch(/^\\(x[0-9a-f]{2}|[nrt])$/);
    for (let c = 0x7f; c <= 0x9f; c++) expect(sanitizeForLog(String.fromCharCode(c))).toBe(`\\x${c.toString(16)}`);
  });

  it("escapes Unicode line separators and bidi controls (they move or hide text in terminals and viewers)", () => {
    expect(sanitizeForLog("a\u2028b\u2029c")).toBe("a\\u2028b\\u2029c");
    expect(sanitizeForLog("ok \u202eevil\u2066x\u2069")).toBe("ok \\u202eevil\\u2066x\\u2069");
  });

  it("leaves ordinary text alone, Unicode included", () => {
    const text = 'plain "text" with ünïcödé 😀, tabs-free, C:\\path and \\n literal';
    expect(sanitizeForLog(text)).toBe(text);
  });

  it("bounds the length and says how much was left out", () => {
    const long = "x".repeat(10_000);
    const out = sanitizeForLog(long);
    expect(out).toBe(`${"x".repeat(MAX_LOG_LINE_CHARS)}… (${10_000 - MAX_LOG_LINE_CHARS} more chars)`);
    expect(sanitizeForLog("abcdef", 3)).toBe("abc… (3 more chars)");
    expect(sanitizeForLog("abc", 3)).toBe("abc");
    // an escape is never cut in half
    expect(sanitizeForLog("ab\ncd", 3)).toBe("ab… (3 more chars)");
    // nor a surrogate pair
    expect(sanitizeForLog("a😀b", 2)).toBe("a… (3 more chars)");
  });

  it("is fast on a message of many MiB (stops escaping at the bound)", () => {
    const huge = "\n".repeat(16 * 1024 * 1024);
    const started = performance.now();
    const out = sanitizeForLog(huge);
    expect(performance.now() - started).toBeLessThan(500);
    expect(out.length).toBeLessThan(MAX_LOG_LINE_CHARS + 40);
  });

  it("renders non-strings without throwing (deep nesting, null prototypes, hostile toString)", () => {
    expect(sanitizeForLog({ a: ["x\ny"] })).toBe('{"a":["x\\ny"]}');
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(typeof sanitizeForLog(deep)).toBe("string");
    expect(sanitizeForLog(Object.create(null))).toBe("{}");
    expect(sanitizeForLog(undefined)).toBe("undefined");
    expect(sanitizeForLog(10n)).toBe("10");
  });
});

describe("createLogger", () => {
  it("writes exactly one line per call, whatever the message holds", () => {
    const { lines, log } = capture();
    log.warn("proxy:evil: hello\n[cordon] error: agent crashed\x1b[2K\r");
    log.child("proxy:evil").info("two\nlines");
    expect(lines).toEqual([
      "[cordon] warn: proxy:evil: hello\\n[cordon] error: agent crashed\\x1b[2K\\r\n",
      "[cordon:proxy:evil] two\\nlines\n",
    ]);
    for (const line of lines) expect(line.indexOf("\n")).toBe(line.length - 1);
  });

  it("bounds every line", () => {
    const { lines, log } = capture();
    log.error("y".repeat(1_000_000));
    expect(lines).toHaveLength(1);
    expect(lines[0].length).toBeLessThan(MAX_LOG_LINE_CHARS + 60);
    expect(lines[0]).toMatch(/… \(\d+ more chars\)\n$/);
  });

  it("filters by level", () => {
    const { lines, log } = capture("warn");
    log.error("e");
    log.warn("w");
    log.info("i");
    log.debug("d");
    expect(lines).toEqual(["[cordon] error: e\n", "[cordon] warn: w\n"]);
    expect(log.enabled("warn")).toBe(true);
    expect(log.enabled("info")).toBe(false);
  });
});
