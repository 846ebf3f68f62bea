/**
 * `cordon check` and `cordon inspect` as a user runs them (the built CLI, real proxies): what a
 * proxy watches is said in words, and two proxies that would go by one name are refused with the
 * field at fault. The rest of `check` is covered in test/diagnostics.test.ts.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm } from "../../test/helpers/paths.js";

const exec = promisify(execFile);

async function cordon(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(NODE, [CORDON, ...args], { env: { ...process.env, CORDON_INTEREST_FILTERS: "" } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function chain(config: object): string {
  const path = join(mkdtempSync(join(tmpdir(), "cordon-check-")), "chain.json");
  writeFileSync(path, JSON.stringify(config));
  return path;
}

describe("what a proxy watches, in words", () => {
  it("cordon inspect says which methods and update kinds enter the sandbox, and that the rest pass unseen", async () => {
    const { stdout } = await cordon(["inspect", proxyWasm("redact")]);
    expect(stdout).toMatch(
      /\n {2}watches {7}only methods session\/prompt, session\/cancel, session\/request_permission; every session\/update\n {16}everything else passes it without entering its sandbox/,
    );
    expect((await cordon(["inspect", proxyWasm("arrow")])).stdout).toMatch(/watches {7}only session\/update kind agent_message_chunk\n/);
  }, 60_000);

  it("cordon check shows each proxy's watches beside its grants", async () => {
    const r = await cordon(["check", chain({ proxies: [{ wasm: proxyWasm("context") }, { wasm: proxyWasm("tool-guard") }] })]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/1\. context[\s\S]*?\n {7}watches {4}only method session\/prompt\n {18}everything else passes it/);
    expect(r.stdout).toMatch(/2\. tool-guard[\s\S]*?\n {7}watches {4}only method session\/request_permission\n/);
    const json = JSON.parse((await cordon(["check", chain({ proxies: [{ wasm: proxyWasm("context") }] }), "--json"])).stdout);
    expect(json.proxies[0].manifest.watches).toEqual({ methods: ["session/prompt"], updates: [], answers: [] });
  }, 60_000);
});

describe("cordon check and proxy names", () => {
  it("refuses two proxies with the same name, naming the field", async () => {
    const r = await cordon([
      "check",
      chain({
        proxies: [
          { name: "redact", wasm: proxyWasm("redact") },
          { wasm: proxyWasm("arrow") },
          { name: "redact", wasm: proxyWasm("tool-guard") },
          { wasm: proxyWasm("arrow") },
        ],
      }),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/invalid chain config\n/);
    expect(r.stderr).toContain('  proxies[2].name: "redact" is also the name of proxies[0]; give each proxy its own name\n');
    expect(r.stderr).toContain('  proxies[3]: goes by "arrow" (from its file), as proxies[1] does; give it a "name" of its own\n');
    expect(r.stdout).toBe("");
  }, 60_000);
});
