/**
 * acpx — a real ACP CLI client nobody here wrote — driving Cordon exactly as a user would type it:
 * `acpx --agent "node bin/cordon.js run --proxy …wasm -- node bin/cordon.js reference-agent" exec "…"`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, ROOT } from "./helpers/paths.js";

const run = promisify(execFile);
const ACPX = join(ROOT, "node_modules/.bin/acpx");

async function acpx(args: string[]) {
  const home = mkdtempSync(join(tmpdir(), "cordon-acpx-")); // acpx keeps session state under ~/.acpx
  const env = { ...process.env, HOME: home, CORDON_LOG: "warn", npm_config_update_notifier: "false" };
  try {
    const { stdout, stderr } = await run(ACPX, args, { cwd: ROOT, env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const chain = (...proxies: string[]) =>
  `${NODE} ${CORDON} run ${proxies.map((p) => `--proxy ${proxyWasm(p)}`).join(" ")} -- ${NODE} ${CORDON} reference-agent`;

describe("acpx through Cordon", () => {
  it("exec works through a pass-through WASM proxy", async () => {
    const r = await acpx(["--agent", chain("passthrough"), "exec", "hello from acpx"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("echo: hello from acpx");
    expect(r.stdout).toContain("end_turn");
  });

  it("shows the arrows of 3 arrow proxies and the wire stays plain ACP (--format json)", async () => {
    const r = await acpx(["--format", "json", "--agent", chain("arrow", "arrow", "arrow"), "exec", "hi"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('">>>echo: hi\\n"');
    expect(r.stdout).not.toMatch(/proxy\/successor|proxy\/initialize|_cordon\//);
  });

  it("--approve-all and --deny-all answer the agent's permission request through the chain", async () => {
    const approved = await acpx(["--approve-all", "--agent", chain("passthrough"), "exec", "permission Write file"]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain("permission allowed: Write file");
    const denied = await acpx(["--deny-all", "--agent", chain("passthrough", "passthrough"), "exec", "permission Write file"]);
    expect(denied.stdout).toContain("permission rejected: Write file");
  });
});
