/**
 * The house rules are enforced, not aspirational: `make test` runs `biome ci` (format and lint,
 * biome.json) before the suite, and this shows that the same check fails on a violation — a
 * misformatted file, an `any`, a `==` — and passes on clean code.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/paths.js";

const exec = promisify(execFile);
const BIOME = join(ROOT, "node_modules/.bin/biome");

async function biomeCi(files: Record<string, string>): Promise<{ code: number; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), "cordon-house-"));
  copyFileSync(join(ROOT, "biome.json"), join(dir, "biome.json"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  try {
    const { stdout, stderr } = await exec(BIOME, ["ci", "--colors=off", "--vcs-enabled=false", "."], { cwd: dir });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe("the formatter and linter in make test", () => {
  it("fail on a misformatted file and on lint violations, naming them", async () => {
    const bad = await biomeCi({ "bad.ts": "export function f(x: any) {return x == 1}\n" });
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/format/);
    expect(bad.out).toMatch(/lint\/suspicious\/noExplicitAny/);
    expect(bad.out).toMatch(/lint\/suspicious\/noDoubleEquals/);
  }, 30_000);

  it("pass on clean code", async () => {
    const good = await biomeCi({ "good.ts": "export function f(x: number): boolean {\n  return x === 1;\n}\n" });
    expect(good.out).not.toMatch(/error/i);
    expect(good.code).toBe(0);
  }, 30_000);
});
