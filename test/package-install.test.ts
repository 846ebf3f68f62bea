/**
 * Cordon as the packages a user installs, made from the checkout: `npm pack` of the runtime
 * (`@cordon/cli`) and of the SDK (`@cordon/sdk-as`). The runtime alone, installed into a temp
 * `--prefix` as `npm i -g` would, must stay within 60 MB with no build tooling in it, and run the
 * example chain (its agent: the installed `cordon reference-agent`) for the official ACP client.
 * Then an author's route from a folder of their own: `cordon new hello --sdk <sdk.tgz>` (the
 * project installs the SDK) → `npm run build` → `npm test` → the built proxy in `cordon run`.
 * Needs `make build` first (the tarball carries dist/ and proxies/dist/); npm installs from the
 * packed tarballs and the npm cache (`--prefer-offline`), else the registry.
 */
import { type SpawnSyncOptions, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SpawnedAgent } from "../runtime/client/spawned-agent.js";
import { ROOT } from "./helpers/paths.js";

/** The bound the runtime install must stay within (a fact about the package, not a timing). */
const MAX_INSTALL_MB = 60;
/** What only authors need; none of it may reach a user who runs chains. */
const BUILD_TOOLING = ["assemblyscript", "binaryen", "json-as", "jco-transpile"];

const work = mkdtempSync(join(tmpdir(), "cordon-install-"));
const prefix = join(work, "prefix");
const home = mkdtempSync(join(tmpdir(), "cordon-author-"));
const cordon = join(prefix, "bin", "cordon");
const installed = join(prefix, "lib", "node_modules", "@cordon", "cli");
const PATH = `${join(prefix, "bin")}:${process.env.PATH}`;
/** A fresh component cache, so every load here is a first load by the installed loader. */
const CORDON_CACHE_DIR = join(work, "component-cache");
const env = { ...process.env, PATH, CORDON_CACHE_DIR };
const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;

function run(command: string, args: string[], options: SpawnSyncOptions = {}) {
  const r = spawnSync(command, args, { encoding: "utf8", timeout: 240_000, env, ...options });
  return { status: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

function pack(dir: string): string {
  const packed = run("npm", ["pack", dir, "--pack-destination", work, "--silent"], { cwd: ROOT });
  expect(packed.status, packed.out).toBe(0);
  return join(work, packed.out.trim().split("\n").pop()!);
}

let sdkTarball = "";
beforeAll(() => {
  const runtime = pack(".");
  expect(runtime).toBe(join(work, `cordon-cli-${version}.tgz`));
  sdkTarball = pack("./sdk-as");
  expect(sdkTarball).toBe(join(work, `cordon-sdk-as-${version}.tgz`));
  const install = run("npm", ["install", "--global", "--prefix", prefix, "--no-audit", "--no-fund", "--prefer-offline", runtime], {
    cwd: work,
  });
  expect(install.status, install.out).toBe(0);
}, 300_000);

const open: SpawnedAgent[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});
afterAll(() => {
  // ~250 MB per run: the runtime install and the author's project with its toolchain.
  for (const dir of [work, home]) rmSync(dir, { recursive: true, force: true });
});

/** The official ACP client on `cordon run <args>`, started from the author's folder with the installed cordon first on PATH. */
function client(args: string[], cwd = home): SpawnedAgent {
  const agent = new SpawnedAgent({ command: cordon, args: ["run", ...args], cwd, env: { PATH, CORDON_CACHE_DIR } });
  open.push(agent);
  return agent;
}

describe("@cordon/cli, the runtime, installed alone from its tarball", () => {
  it(`installs in at most ${MAX_INSTALL_MB} MB with no build tooling, and runs from any folder`, () => {
    const du = run("du", ["-sk", prefix]);
    expect(du.status, du.out).toBe(0);
    const mb = Number.parseInt(du.out, 10) / 1024;
    process.stderr.write(`[package-install] runtime installed: ${mb.toFixed(1)} MB\n`);
    expect(mb).toBeLessThanOrEqual(MAX_INSTALL_MB);
    const found = run("find", [prefix, "-type", "d", "(", ...BUILD_TOOLING.flatMap((n, i) => [...(i ? ["-o"] : []), "-name", n]), ")"]);
    expect(found.out.trim(), "build tooling in the runtime install").toBe("");
    for (const file of [
      "dist/runtime/cli/main.js",
      "proxies/dist/arrow.wasm",
      "examples/demo-chain.json",
      "wit/proxy.wit",
      "templates/proxy/package.json",
    ]) {
      expect(existsSync(join(installed, file)), file).toBe(true);
    }
    for (const file of ["dist/sdk-as", "sdk-as", "vendor"]) expect(existsSync(join(installed, file)), file).toBe(false);

    expect(run(cordon, ["--version"], { cwd: home }).out.trim()).toBe(`cordon ${version}`);
    expect(run(cordon, ["--help"], { cwd: home }).out).toContain("cordon new <name>");
    // An author verb without the SDK says what to install.
    const empty = join(home, "no-sdk");
    mkdirSync(empty);
    const build = run(cordon, ["build"], { cwd: empty });
    expect(build.status).toBe(1);
    expect(build.out).toContain("cordon build: needs the proxy SDK, @cordon/sdk-as, which is not installed");
    expect(build.out).toContain(`npm install --save-dev @cordon/sdk-as@^${version}`);
  });

  it("runs the example chain from the install for the official ACP client; its agent is the installed cordon reference-agent", async () => {
    const chain = JSON.parse(readFileSync(join(installed, "examples", "demo-chain.json"), "utf8"));
    expect(chain.agent).toEqual({ command: "cordon", args: ["reference-agent"] });
    // The loader at work without the toolchain: inspect and check read every example component.
    const inspected = run(cordon, ["inspect", join(installed, "proxies", "dist", "redact.wasm")], { cwd: home });
    expect(inspected.status, inspected.out).toBe(0);
    expect(inspected.out).toContain("cordon:proxy/channel@0.1.0");
    const checked = run(cordon, ["check", join(installed, "examples", "demo-chain.json")], { cwd: home });
    expect(checked.status, checked.out).toBe(0);
    const agent = client(["--config", join(installed, "examples", "demo-chain.json")]);
    const init = await agent.initialize();
    expect(init.agentInfo, agent.stderr).toMatchObject({ name: "cordon-reference-agent", version });
    const session = await agent.newSession(home);
    expect((await agent.prompt(session, "hello from the install")).stopReason).toBe("end_turn");
    expect(agent.messageText(session)).toContain(">echo: hello from the install"); // arrow's prefix on the agent's echo
    expect(agent.messageText(session)).toContain(">echo: Project rules (AGENTS.md)"); // context's block
    const before = agent.events.length;
    expect((await agent.prompt(session, "secret")).stopReason).toBe("end_turn");
    expect(agent.messageText(session, before)).toContain("fake openai API key: [REDACTED]"); // redact
    expect((await agent.close()).code).toBe(0);
  }, 60_000);
});

describe("the author's route: the SDK installed into a project made by cordon new", () => {
  const project = join(home, "hello");

  it("cordon new hello --sdk <sdk.tgz> && cd hello && npm run build && npm test, in a folder outside the repository", () => {
    const created = run(cordon, ["new", "hello", "--sdk", sdkTarball], { cwd: home });
    expect(created.status, created.out).toBe(0);
    expect(JSON.parse(readFileSync(join(project, "package.json"), "utf8")).devDependencies["@cordon/sdk-as"]).toBe(
      `file:vendor/cordon-sdk-as-${version}.tgz`,
    );
    expect(readdirSync(join(project, "node_modules", "@cordon"))).toEqual(["sdk-as"]);
    const built = run("npm", ["run", "build"], { cwd: project });
    expect(built.status, built.out).toBe(0);
    const tested = run("npm", ["test"], { cwd: project });
    expect(tested.status, tested.out).toBe(0);
    expect(tested.out).toMatch(/^ok {4}test\/hello\.jsonl \(\d+ steps\)$/m);
    expect(tested.out).toMatch(/^# pass 3$/m);
    // The same two commands on Cordon's command line, with the project's SDK.
    expect(run(cordon, ["build"], { cwd: project }).out).toMatch(/up to date +hello/);
    expect(run(cordon, ["test", "dist/hello.wasm", "test/hello.jsonl"], { cwd: project }).status).toBe(0);
    // cordon pack builds through the same path (the project's SDK) and writes the publishable tarball.
    const packed = run(cordon, ["pack"], { cwd: project });
    expect(packed.status, packed.out).toBe(0);
    expect(existsSync(join(project, "hello-0.1.0.tgz")), packed.out).toBe(true);
    // Without --sdk, outside a checkout, the project asks the registry for the SDK matching this Cordon.
    expect(run(cordon, ["new", "plain", "--no-install"], { cwd: home }).status).toBe(0);
    expect(JSON.parse(readFileSync(join(home, "plain", "package.json"), "utf8")).devDependencies).toEqual({
      "@cordon/sdk-as": `^${version}`,
    });
    expect(run(cordon, ["new", "hello"], { cwd: home }).status).toBe(1); // exists: refused
    expect(run(cordon, ["new", "Bad_Name"], { cwd: home }).status).toBe(2);
  }, 300_000);

  it("the built proxy runs in cordon run in front of the installed reference agent", async () => {
    const agent = client(["--proxy", "dist/hello.wasm", "--", "cordon", "reference-agent"], project);
    await agent.initialize();
    const session = await agent.newSession(project);
    expect((await agent.prompt(session, "/hello editor")).stopReason).toBe("end_turn");
    expect(agent.messageText(session), agent.stderr).toContain("Hello, editor! (from the hello proxy)");
    const before = agent.events.length;
    expect((await agent.prompt(session, "plain words")).stopReason).toBe("end_turn");
    expect(agent.messageText(session, before)).toContain("echo: plain words");
    const commands = agent.events.flatMap((e) =>
      e.kind === "update" && e.notification.update.sessionUpdate === "available_commands_update"
        ? [e.notification.update.availableCommands.map((c) => c.name)]
        : [],
    );
    expect(commands.length).toBeGreaterThan(0);
    for (const names of commands) expect(names).toContain("hello");
  }, 60_000);
});
