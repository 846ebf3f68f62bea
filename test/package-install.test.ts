/**
 * Cordon installs and runs outside the checkout, and a proxy author's whole route works from a
 * folder of their own: `npm pack` → `npm i -g cordon-*.tgz` (here into a temp --prefix) →
 * `cordon new hello && cd hello && npm run build && npm test` → the built proxy runs in
 * `cordon run` in front of the reference agent. Needs `make build` first (the tarball carries
 * dist/ and proxies/dist/); npm installs from the packed tarballs and the npm cache, else the registry.
 */
import { type SpawnSyncOptions, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";

const work = mkdtempSync(join(tmpdir(), "cordon-install-"));
const prefix = join(work, "prefix");
const home = mkdtempSync(join(tmpdir(), "cordon-author-"));
const cordon = join(prefix, "bin", "cordon");
const env = { ...process.env, PATH: `${join(prefix, "bin")}:${process.env.PATH}` };

function run(command: string, args: string[], options: SpawnSyncOptions = {}) {
  const r = spawnSync(command, args, { encoding: "utf8", timeout: 240_000, env, ...options });
  return { status: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

beforeAll(() => {
  const packed = run("npm", ["pack", "--pack-destination", work, "--silent"], { cwd: ROOT });
  expect(packed.status, packed.out).toBe(0);
  const tarball = join(work, readdirSync(work).find((f) => /^cordon-\d.*\.tgz$/.test(f))!);
  const installed = run("npm", ["install", "--global", "--prefix", prefix, "--no-audit", "--no-fund", "--prefer-offline", tarball], {
    cwd: work,
  });
  expect(installed.status, installed.out).toBe(0);
}, 300_000);

const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe("cordon, installed from its tarball", () => {
  it("runs from any folder: --version, --help, and no trace of the checkout in the install", () => {
    const version = run(cordon, ["--version"], { cwd: home });
    expect(version.out.trim()).toBe(`cordon ${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}`);
    expect(run(cordon, ["--help"], { cwd: home }).out).toContain("cordon new <name>");
    const pkg = join(prefix, "lib", "node_modules", "cordon");
    for (const file of [
      "dist/runtime/cli/main.js",
      "dist/sdk-as/tools/cli.js",
      "proxies/dist/arrow.wasm",
      "sdk-as/assembly/proxy.ts",
      "wit/proxy.wit",
      "templates/proxy/package.json",
    ]) {
      expect(existsSync(join(pkg, file)), file).toBe(true);
    }
    expect(readdirSync(join(pkg, "vendor")).some((f) => /^cordon-sdk-as-.*\.tgz$/.test(f))).toBe(true);
    expect(existsSync(join(ROOT, "vendor"))).toBe(false); // postpack cleaned up
  });

  it("cordon new hello && cd hello && npm run build && npm test, in a folder outside the repository", () => {
    const created = run(cordon, ["new", "hello"], { cwd: home });
    expect(created.status, created.out).toBe(0);
    const project = join(home, "hello");
    expect(JSON.parse(readFileSync(join(project, "package.json"), "utf8")).devDependencies["@cordon/sdk-as"]).toMatch(
      /^file:vendor\/cordon-sdk-as-.*\.tgz$/,
    );
    const built = run("npm", ["run", "build"], { cwd: project });
    expect(built.status, built.out).toBe(0);
    const tested = run("npm", ["test"], { cwd: project });
    expect(tested.status, tested.out).toBe(0);
    expect(tested.out).toMatch(/^ok {4}test\/hello\.jsonl \(\d+ steps\)$/m);
    expect(tested.out).toMatch(/^# pass 3$/m);
    // the same two commands on Cordon's command line
    expect(run(cordon, ["build"], { cwd: project }).out).toMatch(/up to date +hello/);
    expect(run(cordon, ["test", "dist/hello.wasm", "test/hello.jsonl"], { cwd: project }).status).toBe(0);
    expect(run(cordon, ["new", "hello"], { cwd: home }).status).toBe(1); // exists: refused
    expect(run(cordon, ["new", "Bad_Name"], { cwd: home }).status).toBe(2);
  }, 300_000);

  it("the built proxy runs in cordon run in front of the reference agent", async () => {
    const project = join(home, "hello");
    const client = new RawClient(
      "sh",
      ["-c", `cd '${project}' && exec '${cordon}' run --proxy dist/hello.wasm -- '${cordon}' reference-agent`],
      { PATH: env.PATH! },
    );
    open.push(client);
    const init = await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    expect(init.result?.agentInfo?.name, JSON.stringify(init) + client.stderr).toBeTruthy();
    const session = await client.request("session/new", { cwd: project, mcpServers: [] });
    const sessionId = session.result.sessionId;
    const text = (m: Json) => m.params?.update?.content?.text;
    const chunks = () =>
      client.received.filter((m) => m.method === "session/update" && m.params?.update?.sessionUpdate === "agent_message_chunk").map(text);

    const mine = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/hello editor" }] });
    expect(mine.result).toEqual({ stopReason: "end_turn" });
    expect(chunks()).toContain("Hello, editor! (from the hello proxy)");

    const theirs = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "plain words" }] });
    expect(theirs.result).toEqual({ stopReason: "end_turn" });
    expect(chunks().some((t) => /echo: plain words/.test(t))).toBe(true);
    const commands = client.received.filter((m) => m.params?.update?.sessionUpdate === "available_commands_update");
    for (const c of commands) expect(c.params.update.availableCommands.map((x: Json) => x.name)).toContain("hello");
  }, 60_000);
});
