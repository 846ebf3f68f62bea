import { spawn } from "node:child_process";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  congestionBoundedWriter,
  createLogger,
  isLevel,
  MAX_LOG_LINE_CHARS,
  MAX_PENDING_STDERR_BYTES,
  parseLevel,
  sanitizeForLog,
} from "./log.js";

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

describe("stderr under a slow reader", () => {
  /** A real Writable whose writes complete only when `release` is called (a reader that stopped). */
  function stalledStream(highWaterMark = 64) {
    const written: string[] = [];
    let held: Array<() => void> = [];
    const stream = new Writable({
      highWaterMark,
      decodeStrings: false,
      write(chunk: string | Buffer, _encoding, callback) {
        written.push(String(chunk));
        held.push(callback);
      },
    });
    const release = () => {
      while (held.length > 0) {
        const callbacks = held;
        held = [];
        for (const cb of callbacks) cb();
      }
    };
    return { stream, written, release };
  }

  it("drops and counts lines while more than the bound waits, and says how many once it drains", async () => {
    const { stream, written, release } = stalledStream();
    const write = congestionBoundedWriter(stream, 1000);
    for (let i = 0; i < 100; i++) write(`line ${i} ${"x".repeat(90)}\n`);
    // ~1000 bytes went into the buffer (one line past the bound at most); the rest was dropped, not kept.
    expect(stream.writableLength).toBeLessThanOrEqual(1000 + 100);
    const kept = written.length + stream.writableLength; // sanity: something was kept
    expect(kept).toBeGreaterThan(0);
    release();
    await new Promise((r) => setImmediate(r));
    release();
    const report = written.find((l) => l.includes("dropped while stderr was congested"));
    expect(report).toMatch(/^\[cordon\] warn: (\d+) log lines dropped while stderr was congested \(its reader did not keep up\)\n$/);
    const delivered = written.filter((l) => l.startsWith("line ")).length;
    expect(delivered + Number(/(\d+) log lines/.exec(report!)![1])).toBe(100);
    // Drained: lines flow again.
    write("after\n");
    release();
    expect(written.at(-1)).toBe("after\n");
  });

  it("counts a process's output chunk by its newlines", async () => {
    const { stream, written, release } = stalledStream(16);
    const write = congestionBoundedWriter(stream, 20);
    write(Buffer.from("0123456789012345678901234\n"));
    write(Buffer.from("a\nb\nc\n"));
    write(Buffer.from("no newline"));
    release();
    await new Promise((r) => setImmediate(r));
    expect(written.at(-1)).toMatch(/^\[cordon\] warn: 4 log lines dropped/);
  });

  it("a child whose stderr nobody reads keeps at most the bound waiting; its ACP stdout is unaffected; draining reports the drop", async () => {
    // A real process logging through the default logger (as `cordon run` does) into a pipe the parent does not read.
    const logJs = new URL("../dist/runtime/log.js", import.meta.url).href;
    const lines = 20_000;
    const script = `
      const { createLogger } = await import(${JSON.stringify(logJs)});
      const log = createLogger("info");
      const text = "x".repeat(4000);
      let maxPending = 0;
      for (let i = 0; i < ${lines}; i++) {
        log.info(text);
        maxPending = Math.max(maxPending, process.stderr.writableLength);
        if (i % 1000 === 0) process.stdout.write(JSON.stringify({ progress: i }) + "\\n");
      }
      process.stdout.write(JSON.stringify({ done: true, maxPending, heapUsed: process.memoryUsage().heapUsed }) + "\\n");
      const poll = setInterval(() => {
        if (process.stderr.writableLength === 0) {
          clearInterval(poll);
          log.info("flood over");
        }
      }, 20);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CORDON_LOG: "info" },
    });
    let stdout = "";
    let stderr = "";
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const done = new Promise<{ maxPending: number; heapUsed: number }>((resolve) => {
      child.stdout.setEncoding("utf8").on("data", (c: string) => {
        stdout += c;
        const last = stdout.trim().split("\n").at(-1)!;
        if (last.includes('"done"')) resolve(JSON.parse(last));
      });
    });
    const report = await done; // stderr still unread: the flood happened against a stopped reader
    expect(report.maxPending).toBeLessThanOrEqual(MAX_PENDING_STDERR_BYTES + 8 * 1024);
    expect(report.heapUsed).toBeLessThan(64 * 1024 * 1024); // 80 MB of lines were logged
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    expect(await exited).toBe(0);
    // Every stdout line arrived, in order.
    const out = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out.filter((m) => "progress" in m).map((m) => m.progress)).toEqual(Array.from({ length: lines / 1000 }, (_, i) => i * 1000));
    const dropped = /\[cordon\] warn: (\d+) log lines dropped while stderr was congested/.exec(stderr);
    expect(dropped).not.toBeNull();
    const shown = stderr.split("\n").filter((l) => l.startsWith("[cordon] xxxx")).length;
    expect(shown + Number(dropped![1])).toBe(lines);
    expect(stderr.trimEnd().endsWith("[cordon] flood over")).toBe(true);
  });
});
