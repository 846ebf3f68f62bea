/**
 * `cordon demo` is what `make run` shows a newcomer from a fresh clone: the example chain (with
 * workspace-tools' MCP server bridged to the reference agent over stdio) must answer every step.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CORDON, NODE, ROOT } from "../../test/helpers/paths.js";

describe("cordon demo", () => {
  it("runs every step of the example chain and exits 0", () => {
    const run = spawnSync(NODE, [CORDON, "demo"], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toContain("here is a fake openai API key: [REDACTED]"); // redact
    expect(run.stdout).toMatch(/workspace::recall \(pending\)[\s\S]*completed: 1 earlier entry matches "secret"/); // the bridged MCP tool answered
    expect(run.stdout).not.toContain("demo failed");
    expect(run.stdout).toMatch(/cordon exited with code 0/);
  }, 60_000);
});
