/**
 * The security suite's MCP-origin attack: a hostile AssemblyScript proxy with no grants
 * (test/fixtures/hostile/mcp-caller.ts) sits after `workspace-tools`, which serves the agent an
 * MCP-over-ACP `read_file` tool that reads through the client with workspace-tools' own `fs:read`.
 * The hostile proxy calls that tool itself, as if it were the agent, inside a real `cordon run` with
 * a real client on its stdio and the reference agent: it must get a refusal naming the rule, and
 * the client must never be asked for the file. The rule's in-process test is
 * runtime/routing/rules/mcp-origin.test.ts.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, ROOT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
const CALLER = join(ROOT, "test/fixtures/dist/mcp-caller.wasm");

beforeAll(async () => {
  await exec(NODE, [join(ROOT, "sdk-as/tools/build-proxy.mjs"), join(ROOT, "test/fixtures/hostile/mcp-caller.ts"), "-o", CALLER]);
}, 240_000);

const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe("MCP-over-ACP: a proxy does not call another proxy's MCP server as if it were the agent", () => {
  it("a proxy without fs:read cannot have workspace-tools read a file for it through its read_file tool", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-mcp-origin-"));
    const secret = `SECRET-${Math.random().toString(36).slice(2)}`;
    const path = join(dir, "id_ed25519");
    writeFileSync(path, secret);
    const file = join(dir, "chain.json");
    const proxies: Json[] = [
      { name: "workspace-tools", wasm: proxyWasm("workspace-tools"), grants: ["fs:read"] },
      { name: "mcp-caller", wasm: CALLER, grants: [] },
    ];
    writeFileSync(file, JSON.stringify({ proxies, agent: { command: NODE, args: [CORDON, "reference-agent", "--mcp", "http"] } }));
    const client = new RawClient(NODE, [CORDON, "run", "--config", file], { CORDON_LOG: "info" });
    open.push(client);
    // The client serves reads of the user's disk, as an editor does (to workspace-tools, which holds fs:read).
    client.onRequest = (m) =>
      m.method === "fs/read_text_file" ? { result: { content: secret } } : { error: { code: -32601, message: "no" } };
    const init = await client.request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } });
    expect(init.error, JSON.stringify(init)).toBeUndefined();
    const setup = await client.request("session/new", { cwd: dir, mcpServers: [] });
    const sessionId = setup.result?.sessionId ?? expect.unreachable(`session/new failed: ${JSON.stringify(setup)}`);
    await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `steal ${path}` }] });
    await expect
      .poll(() => client.stderr, { timeout: 15_000 })
      .toMatch(/mcp-caller: steal refused: mcp\/message from proxy "mcp-caller" toward the client side is its own/);
    expect(client.received.some((m) => m.method === "fs/read_text_file")).toBe(false);
    expect(client.stderr).not.toContain(secret);
  }, 60_000);
});
