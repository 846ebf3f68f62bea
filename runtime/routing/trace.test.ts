import {
  chmodSync,
  closeSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openTraceFile, TraceFile } from "./trace.js";

const mode = (path: string) => statSync(path).mode & 0o777;
const me = process.getuid?.() ?? 0;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cordon-trace-mode-"));
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function traceTo(path: string): Promise<string[]> {
  const warnings: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    warnings.push(String(chunk));
    return true;
  });
  const trace = new TraceFile(path);
  trace.write({ type: "trace", component: "proxy:0", level: "info", message: "secret conversation" });
  await trace.close();
  return warnings;
}

describe.skipIf(process.platform === "win32")("trace files are private", () => {
  it("creates the trace 0600", async () => {
    const path = join(dir, "t.jsonl");
    expect(await traceTo(path)).toEqual([]);
    expect(mode(path)).toBe(0o600);
    expect(readFileSync(path, "utf8")).toContain("secret conversation");
  });

  it("truncates an existing trace of one's own and makes it 0600", async () => {
    const path = join(dir, "t.jsonl");
    writeFileSync(path, "old content that is longer than the new trace ".repeat(100));
    chmodSync(path, 0o644);
    expect(await traceTo(path)).toEqual([]);
    expect(mode(path)).toBe(0o600);
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain("old content");
    expect(text.trim().split("\n")).toHaveLength(1);
  });

  it("refuses a symbolic link planted by another user, and leaves its target alone", async () => {
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "precious");
    const path = join(dir, "t.jsonl");
    symlinkSync(victim, path);
    // Root can give the link to another user; otherwise Cordon is told it runs as another uid.
    if (me === 0) lchownSync(path, 4242, 4242);
    expect(() => openTraceFile(path, me === 0 ? 0 : me + 1)).toThrow(/symbolic link owned by another user/);
    if (me === 0) expect(await traceTo(path)).toEqual([expect.stringMatching(/symbolic link owned by another user \(uid 4242\)/)]);
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(lstatSync(path).isSymbolicLink()).toBe(true);
  });

  it("refuses to write into a file another user owns (they could read the conversation)", () => {
    const path = join(dir, "t.jsonl");
    writeFileSync(path, "theirs");
    chmodSync(path, 0o666);
    expect(() => openTraceFile(path, me + 1)).toThrow(/belongs to another user/);
    expect(readFileSync(path, "utf8")).toBe("theirs");
    expect(mode(path)).toBe(0o666);
  });

  it("follows a link of one's own (to a file made 0600, or not made yet) and writes to devices as they are", async () => {
    const real = join(dir, "real.jsonl");
    writeFileSync(real, "");
    chmodSync(real, 0o644);
    symlinkSync(real, join(dir, "link.jsonl"));
    expect(await traceTo(join(dir, "link.jsonl"))).toEqual([]);
    expect(mode(real)).toBe(0o600);
    expect(readFileSync(real, "utf8")).toContain("secret conversation");

    const later = join(dir, "later.jsonl");
    symlinkSync(later, join(dir, "dangling.jsonl"));
    expect(await traceTo(join(dir, "dangling.jsonl"))).toEqual([]);
    expect(existsSync(later) && mode(later)).toBe(0o600);

    const fd = openTraceFile("/dev/null");
    closeSync(fd);
    expect(mode("/dev/null")).toBe(0o666);
  });

  it("runs without a trace, saying why on one line, when the path is refused", async () => {
    const warnings = await traceTo(join(dir, "missing\ndir", "t.jsonl"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^\[cordon\] warn: cannot write trace .*missing\\ndir.*ENOENT.*\n$/);
    expect(warnings[0].indexOf("\n")).toBe(warnings[0].length - 1);
  });
});
