import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { withCustomSection } from "../../test/fixtures/custom-section.js";
import { echoComponent } from "../../test/fixtures/wat-components.js";
import { CORDON, NODE, SCRIPTED_AGENT } from "../../test/helpers/paths.js";
import { RawClient } from "../../test/helpers/raw-client.js";

const exec = promisify(execFile);
const manifest = {
  name: "shouter",
  version: "1.2.3",
  description: "makes the agent shout",
  config: { type: "object", properties: { volume: { type: "integer", minimum: 1, maximum: 11 } }, required: ["volume"] },
  grants: ["fs:read"],
};

async function fixture(m: object = manifest): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "cordon-inspect-"));
  const path = join(dir, "shouter.wasm");
  writeFileSync(path, withCustomSection(await echoComponent("utf16"), "cordon:manifest", JSON.stringify(m)));
  return path;
}

describe("cordon inspect and manifests", () => {
  it("prints the manifest, world, encodings, memory and SHA-256", async () => {
    const path = await fixture();
    const { stdout } = await exec(NODE, [CORDON, "inspect", path]);
    expect(stdout).toMatch(/^shouter 1\.2\.3 — makes the agent shout\n/);
    expect(stdout).toMatch(/sha256 {8}[0-9a-f]{64}/);
    expect(stdout).toMatch(/imports {7}cordon:proxy\/channel@0\.1\.0\n/);
    expect(stdout).toMatch(/strings {7}receive utf16, send utf16/);
    expect(stdout).toMatch(/memory {8}starts at 1 MiB; declares no maximum; Cordon caps it at 128 MiB/);
    expect(stdout).toMatch(/grants asked {2}fs:read/);
    // Each grant asked for is said in plain words: what the user would hand over.
    expect(stdout).toMatch(
      /grants asked {2}fs:read\n {16}fs:read {2}it may read any file the client lets the agent read, for its own purposes\n/,
    );
    const json = JSON.parse((await exec(NODE, [CORDON, "inspect", path, "--json"])).stdout);
    expect(json.manifest).toEqual(manifest);
    expect(json.memory).toEqual({ initialPages: 16, declaredMaxPages: null, defaultCapPages: 2048 });
  });

  it("says in words what the MCP-client grants hand over", async () => {
    const path = await fixture({ ...manifest, grants: ["mcp:sampling", "mcp:elicitation", "mcp:roots"] });
    const { stdout } = await exec(NODE, [CORDON, "inspect", path]);
    expect(stdout).toMatch(/mcp:sampling +it may have the agent's model write text for it \(MCP sampling\), on your account\n/);
    expect(stdout).toMatch(/mcp:elicitation +it may ask you questions \(MCP elicitation\) that the agent shows you as its own\n/);
    expect(stdout).toMatch(
      /mcp:roots +it may learn your workspace folders \(MCP roots\/list\), which the agent shares with its MCP servers\n/,
    );
  });

  it("validates a proxy's config against its manifest's schema before starting it, and warns about grants it asks for", async () => {
    const path = await fixture();
    const dir = mkdtempSync(join(tmpdir(), "cordon-inspect-"));
    const config = join(dir, "chain.json");
    writeFileSync(config, JSON.stringify({ proxies: [{ wasm: path, config: { volume: 12 } }] }));
    const client = new RawClient(NODE, [CORDON, "run", "--config", config, "--", ...SCRIPTED_AGENT]);
    const res = await client.request("initialize", { protocolVersion: 1 });
    expect(res.error.message).toMatch(/proxy "shouter": its config does not match the schema in its manifest: volume: .*<=11/);
    await client.close();
    writeFileSync(config, JSON.stringify({ proxies: [{ wasm: path, config: { volume: 11 } }] }));
    const ok = new RawClient(NODE, [CORDON, "run", "--config", config, "--", ...SCRIPTED_AGENT]);
    // The echo guest is no real proxy, so the chain's initialize cannot succeed; the warning comes first.
    void ok.request("initialize", { protocolVersion: 1 });
    await expect.poll(() => ok.stderr).toMatch(/proxy "shouter" asks for fs:read, which the chain config does not grant/);
    await ok.close();
  });

  it("explains a file that is not a proxy", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-inspect-"));
    writeFileSync(join(dir, "x.wasm"), "nope");
    await expect(exec(NODE, [CORDON, "inspect", join(dir, "x.wasm")])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/x\.wasm cannot run as a Cordon proxy/),
    });
  });
});
