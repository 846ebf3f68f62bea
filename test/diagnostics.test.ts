/**
 * Diagnostics a user meets when a chain does not start or does not answer, through the real
 * `cordon` command: an agent silent on `initialize`, a terminal on stdin, a failed start with
 * stdin already closed, resolved paths in errors, no listener warnings with many proxies, and
 * `cordon check`.
 */
import { execFile, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { SpawnedAgent } from "../runtime/client/spawned-agent.js";
import { defaultIsolation } from "../runtime/sandbox/sandbox-factory.js";
import { CORDON, NODE, proxyWasm, REFERENCE_AGENT, ROOT, SCRIPTED_AGENT } from "./helpers/paths.js";
import { RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
/** An agent that starts, reads its input and never says anything. */
const SILENT_AGENT = [NODE, "-e", "process.stdin.resume()"];

async function cordon(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  try {
    const { stdout, stderr } = await exec(NODE, [CORDON, ...args], { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** `cordon run …` with stdin closed from the start (as `< /dev/null`): exit code and stderr. */
function runWithClosedStdin(args: string[], cwd = ROOT): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(NODE, [CORDON, "run", ...args], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CORDON_LOG: "warn" },
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.once("exit", (code) => resolve({ code, stderr }));
  });
}

const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe("an agent that never answers initialize", () => {
  it("is reported after the timeout: the client's error names the agent and the timeout, one log line, exit 1", async () => {
    const client = new RawClient(NODE, [
      CORDON,
      "run",
      "--initialize-timeout",
      "600",
      "--proxy",
      proxyWasm("arrow"),
      "--",
      ...SILENT_AGENT,
    ]);
    open.push(client);
    const started = Date.now();
    const res = await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(res.error.code).toBe(-32603);
    expect(res.error.message).toMatch(
      /^agent ".*node -e process\.stdin\.resume\(\)" did not answer initialize within 600 ms \(change it with --initialize-timeout <ms> or CORDON_INITIALIZE_TIMEOUT_MS\)/,
    );
    expect((await client.exited).code).toBe(1);
    const lines = client.stderr.split("\n").filter((l) => /did not answer initialize/.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[cordon\] error: agent ".*" did not answer initialize within 600 ms/);
  });

  it("takes the timeout from CORDON_INITIALIZE_TIMEOUT_MS, and leaves an agent that answers alone", async () => {
    const silent = new RawClient(NODE, [CORDON, "run", "--", ...SILENT_AGENT], { CORDON_INITIALIZE_TIMEOUT_MS: "400" });
    open.push(silent);
    expect((await silent.request("initialize", { protocolVersion: 1 })).error.message).toMatch(/did not answer initialize within 400 ms/);
    // An agent that answers in time (2 s leaves room for a loaded machine) is never cut off later.
    const fine = new RawClient(NODE, [CORDON, "run", "--initialize-timeout", "2000", "--", ...SCRIPTED_AGENT]);
    open.push(fine);
    const init = await fine.request("initialize", { protocolVersion: 1 });
    expect(init.error).toBeUndefined();
    expect(init.result.protocolVersion).toBe(1);
    await new Promise((r) => setTimeout(r, 2200));
    expect((await fine.request("session/new", { cwd: ROOT, mcpServers: [] })).result.sessionId).toMatch(/^sess-/);
  });

  it("refuses a nonsense timeout on the command line (exit 2)", async () => {
    const r = await cordon(["run", "--initialize-timeout", "soon", "--", ...SILENT_AGENT]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--initialize-timeout: the initialize timeout must be a positive whole number of milliseconds, not "soon"/);
  });
});

describe("cordon run at start", () => {
  const haveScript = existsSync("/usr/bin/script");
  it.skipIf(!haveScript)("prints a one-line hint on stderr when stdin is a terminal, and none otherwise", async () => {
    // `script` gives the command a pseudo-terminal; its stdin (ours) is closed, so Cordon ends.
    const command = [NODE, CORDON, "run", "--", ...SILENT_AGENT].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
    const { stdout } = await exec("script", ["-qec", `timeout 4 ${command} < $(tty)`, "/dev/null"], {
      env: { ...process.env, CORDON_LOG: "warn" },
    }).catch((e: { stdout: string }) => ({ stdout: e.stdout }));
    const hints = stdout.split(/\r?\n/).filter((l) => l.includes("waiting for an ACP client"));
    expect(hints).toEqual([
      "cordon run: waiting for an ACP client on stdin/stdout (an editor or acpx launches it as its agent; try `cordon demo` to see a session) — Ctrl-C to quit",
    ]);
    const piped = new RawClient(NODE, [CORDON, "run", "--", ...SCRIPTED_AGENT]);
    open.push(piped);
    await piped.request("initialize", { protocolVersion: 1 });
    expect(piped.stderr).not.toMatch(/waiting for an ACP client/);
  });

  it("exits non-zero when the start fails, also when stdin closed before anything was asked; errors show resolved paths", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-diag-"));
    const missingWasm = await runWithClosedStdin(["--proxy", "missing.wasm", "--", ...REFERENCE_AGENT], dir);
    expect(missingWasm.code).toBe(1);
    expect(missingWasm.stderr).toContain(join(dir, "missing.wasm"));
    const missingAgent = await runWithClosedStdin(["--", "./no-such-agent"], dir);
    expect(missingAgent.code).toBe(1);
    expect(missingAgent.stderr).toMatch(/command not found: .*no-such-agent does not exist or is not executable/);
    expect(missingAgent.stderr).toContain(join(dir, "no-such-agent"));
    const notOnPath = await runWithClosedStdin(["--", "no-such-agent-anywhere"], dir);
    expect(notOnPath.code).toBe(1);
    expect(notOnPath.stderr).toMatch(/"no-such-agent-anywhere" is not in any directory of PATH/);
    const missingConfig = await runWithClosedStdin(["--config", "chain.json"], dir);
    expect(missingConfig.code).toBe(2);
    expect(missingConfig.stderr).toContain(`cannot read chain config ${join(dir, "chain.json")}: ENOENT`);
    // A start that works still ends 0 when the client closes.
    const fine = await runWithClosedStdin(["--proxy", proxyWasm("arrow"), "--", ...SCRIPTED_AGENT], dir);
    expect(fine.code).toBe(0);
  });

  it("the client that asks after a failed start gets the error with the resolved path", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-diag-"));
    const client = new RawClient(NODE, [CORDON, "run", "--proxy", join(dir, "gone.wasm"), "--", ...SCRIPTED_AGENT]);
    open.push(client);
    const res = await client.request("initialize", { protocolVersion: 1 });
    expect(res.error.message).toContain(join(dir, "gone.wasm"));
    expect((await client.exited).code).toBe(1);
  });

  for (const isolation of ["worker", "thread"] as const) {
    it(`prints no MaxListenersExceededWarning with 6 WASM proxies and 5 native ones (isolation ${isolation})`, async () => {
      // Generous limits: this is about listeners, not about a loaded machine's timeouts.
      const dir = mkdtempSync(join(tmpdir(), "cordon-diag-"));
      const config = join(dir, "chain.json");
      const limits = { receiveTimeoutMs: 30_000, startTimeoutMs: 30_000 };
      writeFileSync(
        config,
        JSON.stringify({
          proxies: [
            ...Array.from({ length: 6 }, () => ({ wasm: proxyWasm("passthrough"), limits })),
            ...Array.from({ length: 5 }, () => ({ command: NODE, args: [CORDON, "proxy"], trusted: true })),
          ],
        }),
      );
      let stderr = "";
      const agent = new SpawnedAgent({
        command: NODE,
        args: ["--trace-warnings", CORDON, "run", "--isolation", isolation, "--config", config, "--", ...REFERENCE_AGENT],
        onStderr: (c) => (stderr += c),
      });
      open.push(agent);
      await agent.initialize();
      const session = await agent.newSession();
      await agent.prompt(session, "hello");
      expect(agent.messageText(session)).toBe("echo: hello\n");
      await agent.close();
      expect(stderr).not.toMatch(/MaxListenersExceededWarning|Possible EventEmitter memory leak/);
    }, 60_000);
  }
});

describe("cordon check", () => {
  function chain(dir: string, config: object): string {
    const path = join(dir, "chain.json");
    writeFileSync(path, JSON.stringify(config));
    return path;
  }
  /** An agent command that leaves a mark if it is ever started. */
  function markingAgent(dir: string) {
    const script = join(dir, "agent.sh");
    writeFileSync(script, `#!/bin/sh\ntouch "${join(dir, "agent-started")}"\nexec cat\n`);
    chmodSync(script, 0o755);
    return { command: script, args: [] };
  }

  it("loads every proxy and prints the chain (names, hashes, grants, limits, isolation) without starting the agent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-check-"));
    const path = chain(dir, {
      proxies: [
        { name: "rules", wasm: proxyWasm("context"), config: { text: "be kind" }, limits: { receiveTimeoutMs: 500 } },
        { wasm: proxyWasm("workspace-tools"), grants: ["fs:read"], isolation: "worker", onFailure: "restart" },
        { wasm: proxyWasm("arrow"), onFailure: "bypass" },
        { name: "native", command: NODE, args: [CORDON, "proxy"], trusted: true },
      ],
      agent: markingAgent(dir),
    });
    const r = await cordon(["check", path]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`chain ${path}`);
    expect(r.stdout).toMatch(/1\. rules {2}\[wasm\] ok\n\s+file\s+\S+context\.wasm\n\s+sha256\s+[0-9a-f]{64} \(not pinned\)/);
    expect(r.stdout).toMatch(/limits\s+receiveTimeoutMs 500\*, startTimeoutMs 5000, .*maxMemoryMiB 128 {2}\(\* set by the config\)/);
    expect(r.stdout).toMatch(
      /2\. workspace-tools {2}\[wasm\] ok[\s\S]*?grants\s+fs:read \(asks for fs:read\)[\s\S]*?isolation\s+worker\n\s+onFailure\s+restart/,
    );
    // arrow chooses none: it gets the default (thread, or CORDON_ISOLATION's when the suite runs under the other).
    expect(r.stdout).toMatch(
      new RegExp(`3\\. arrow {2}\\[wasm\\] ok[\\s\\S]*?isolation\\s+${defaultIsolation()}\\n\\s+onFailure\\s+bypass`),
    );
    expect(r.stdout).toMatch(/4\. native {2}\[native\] ok\n\s+command\s+.*proxy \(/);
    expect(r.stdout).toMatch(/agent {2}.*agent\.sh {2}found: .*agent\.sh \(not started by check\)/);
    expect(r.stdout).toMatch(/OK: every proxy loads and starts; the agent was not started\./);
    expect(existsSync(join(dir, "agent-started"))).toBe(false);

    const json = await cordon(["check", path, "--json"]);
    const report = JSON.parse(json.stdout);
    expect(report.ok).toBe(true);
    expect(report.proxies.map((p: { name: string }) => p.name)).toEqual(["rules", "workspace-tools", "arrow", "native"]);
    expect(report.proxies[0].limits.receiveTimeoutMs).toBe(500);
  }, 60_000);

  it("fails with a clear message on every problem: bad config, missing file, wrong pin, config against the manifest schema, agent not found", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-check-"));
    const invalid = await cordon(["check", chain(dir, { proxies: [{ wasm: 1 }] })]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/chain\.json: invalid chain config\n\s+proxies\[0\]\.wasm/);

    const path = chain(dir, {
      proxies: [
        { name: "gone", wasm: "gone.wasm" },
        { name: "pinned", wasm: proxyWasm("arrow"), sha256: "0".repeat(64) },
        { name: "badconf", wasm: proxyWasm("redact"), config: { patterns: "not-a-list" } },
        { name: "fine", wasm: proxyWasm("arrow") },
      ],
      agent: { command: "no-such-agent-anywhere", args: [] },
    });
    const r = await cordon(["check", path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/1\. gone {2}\[wasm\] FAILED/);
    expect(r.stdout).toMatch(/4\. fine {2}\[wasm\] ok/);
    expect(r.stderr).toMatch(/4 problem\(s\)/);
    expect(r.stderr).toContain(`proxy 1 "gone": ${join(dir, "gone.wasm")}`);
    expect(r.stderr).toMatch(/proxy 2 "pinned": .*does not match its pin: the config says sha256 0{64}, the file is [0-9a-f]{64}/);
    expect(r.stderr).toMatch(/proxy 3 "badconf": .*its config does not match the schema in its manifest/);
    expect(r.stderr).toMatch(/agent: "no-such-agent-anywhere" is not in any directory of PATH/);

    const none = await cordon(["check", join(dir, "nothing.json")]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`cannot read chain config ${join(dir, "nothing.json")}: ENOENT`);
    expect((await cordon(["check"])).code).toBe(2);
  }, 60_000);
});
