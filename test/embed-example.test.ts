/**
 * `examples/embed.ts` runs with one command (`make embed-example` = `node dist/examples/embed.js`
 * after the build), and the package entry resolves by name with its declarations.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NODE, ROOT } from "./helpers/paths.js";

describe("the embedding example and the package entry", () => {
  it("examples/embed.ts runs to a clean shutdown", () => {
    const run = spawnSync(NODE, [`${ROOT}dist/examples/embed.js`], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('chain: proxy "context" → proxy "redact" → proxy "tool-guard" → proxy "arrow" → MCP bridge → agent');
    expect(run.stdout).toContain('update tool-1 "Run tests" completed');
    expect(run.stdout).toContain("[REDACTED]");
    expect(run.stdout).toContain('permission for "Edit notes.txt": denied');
    expect(run.stdout).toContain("stop: cancelled");
    expect(run.stdout).toMatch(/closed \(code 0\)/);
  }, 60_000);

  it('`import ... from "@cordon/cli"` (the package\'s own name) resolves to the built entry, with type declarations', () => {
    const run = spawnSync(
      NODE,
      ["--input-type=module", "-e", "const m = await import('@cordon/cli'); console.log(typeof m.connect, typeof m.startChain)"],
      { cwd: ROOT, encoding: "utf8" },
    );
    expect(run.stdout.trim()).toBe("function function");
    expect(existsSync(`${ROOT}dist/runtime/index.d.ts`)).toBe(true);
  });
});
