/** `make run`'s job, `cordon demo`, end to end: every proxy of the example chain visibly does its part. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CORDON, NODE, ROOT } from "./helpers/paths.js";

const exec = promisify(execFile);

describe("cordon demo", () => {
  it("runs the narrated session through the example chain and exits 0", async () => {
    const { stdout } = await exec(NODE, [CORDON, "demo"], { cwd: ROOT, timeout: 60_000, env: { ...process.env, CORDON_LOG: "info" } });
    expect(stdout).toContain("agent: >echo: Project rules (AGENTS.md)"); // context, then arrow
    expect(stdout).toContain("agent: >here is a fake openai API key: [REDACTED]"); // redact
    expect(stdout).not.toMatch(/sk-FAKE/);
    expect(stdout).toMatch(/client asked: "Delete build cache" → selected "allow"/);
    expect(stdout).toContain("agent: >permission rejected: rm -rf / (option reject)"); // tool-guard, client never asked
    expect(stdout).not.toMatch(/client asked: "rm -rf \//);
    expect(stdout).toMatch(/tool update: tool-\d+ → completed: 1 earlier entry matches "secret"/); // workspace-tools over the bridge
    expect(stdout).toContain("→ stopReason: cancelled");
    expect(stdout).toContain("cordon exited with code 0");
  });
});
