/** The `cordon` command as a user meets it: help, version, errors, a config-driven chain. */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { SpawnedAgent } from "../runtime/client/spawned-agent.js";
import { wasiComponent } from "./fixtures/wat-components.js";
import { CORDON, NODE, proxyWasm, ROOT, SCRIPTED_AGENT } from "./helpers/paths.js";
import { RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
async function cordon(args: string[]) {
  try {
    const { stdout, stderr } = await exec(NODE, [CORDON, ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe("cordon CLI", () => {
  it("prints help and its version", async () => {
    const help = await cordon(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/cordon run \[--config chain\.json\] \[--proxy p\.wasm \| --proxy-cmd "cmd args"\]\.\.\./);
    expect(help.stdout).toMatch(/cordon proxy /);
    const version = await cordon(["--version"]);
    expect(version.stdout.trim()).toMatch(/^cordon \d+\.\d+\.\d+$/);
  });

  it("explains a missing agent, an unknown flag and a bad config, exit 2, nothing on stdout", async () => {
    const noAgent = await cordon(["run"]);
    expect(noAgent.code).toBe(2);
    expect(noAgent.stderr).toMatch(/no agent: give one after `--`/);
    const flag = await cordon(["run", "--proxxy", "x.wasm", "--", "node"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/Unknown option '--proxxy'/);
    const dir = mkdtempSync(join(tmpdir(), "cordon-cli-"));
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ proxies: [{ wasm: 1 }] }));
    const bad = await cordon(["run", "--config", join(dir, "bad.json")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.json: invalid chain config\n\[cordon\] error: {3}proxies\[0\]\.wasm/);
    for (const r of [noAgent, flag, bad]) expect(r.stdout).toBe("");
  });

  it("runs a chain from a config file: per-proxy config and agent env reach their targets", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-cli-"));
    const config = join(dir, "chain.json");
    writeFileSync(
      config,
      JSON.stringify({
        proxies: [{ name: "rules", wasm: proxyWasm("context"), config: { text: "Always be kind." } }, { wasm: proxyWasm("arrow") }],
        agent: { command: NODE, args: [CORDON, "reference-agent"], env: { CORDON_TEST_MARK: "1" } },
      }),
    );
    const agent = new SpawnedAgent({ command: NODE, args: [CORDON, "run", "--config", config] });
    open.push(agent);
    await agent.initialize();
    const session = await agent.newSession();
    await agent.prompt(session, "hello");
    expect(agent.messageText(session)).toBe(">echo: Always be kind.\n>echo: hello\n");
  });

  it("refuses a proxy that imports WASI: the client's initialize gets an error naming the import", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-cli-"));
    const path = join(dir, "env-reader.wasm");
    writeFileSync(path, await wasiComponent());
    const client = new RawClient(NODE, [CORDON, "run", "--proxy", path, "--", ...SCRIPTED_AGENT]);
    open.push(client);
    const res = await client.request("initialize", { protocolVersion: 1 });
    expect(res.error.code).toBe(-32603);
    expect(res.error.message).toMatch(
      /env-reader\.wasm cannot run as a Cordon proxy: it imports the WASI interface wasi:cli\/environment@0\.2\.0, which Cordon does not provide/,
    );
    expect((await client.exited).code).toBe(1);
    expect(client.stderr).toMatch(/cannot start the chain: .*wasi:cli\/environment/);
  });
});
