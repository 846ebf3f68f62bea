/**
 * Distribution end to end against a real registry nobody here wrote (Verdaccio on 127.0.0.1,
 * started by this test) with the real `npm publish` of tarballs made by `cordon pack`: add → a real
 * chain answers a real ACP client → a second folder installs the identical lock and bytes → a
 * tampered tarball in the registry's storage is refused → an update asking for `terminal` is not
 * applied and the old version keeps running → approved with `--grant` it applies → a version
 * dropping the grant revokes it → offline installs come from the store, and what is missing is named.
 */
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withManifest } from "./helpers/manifest-rewrite.js";
import { CORDON, NODE, proxyWasm } from "./helpers/paths.js";
import { TappedSdkClient } from "./helpers/tapped-sdk-client.js";
import { startVerdaccio, type TestRegistry } from "./helpers/verdaccio.js";

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let registry: TestRegistry;
let root: string;
const PASSTHROUGH = readFileSync(proxyWasm("passthrough"));

/** The environment of every command: its own store and caches, no user .npmrc, not CI. */
function envFor(cache: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: cache, HOME: join(root, "home"), CORDON_LOG: "warn" };
  for (const key of Object.keys(env)) if (/^(npm_config_|CI$|CORDON_STORE$|CORDON_CACHE_DIR$)/i.test(key)) delete env[key];
  return { ...env, ...extra };
}

/** Runs a command without blocking this process (the registry runs in it). */
function run(
  command: string,
  args: string[],
  cwd: string,
  cache = join(root, "cache-a"),
  extra?: NodeJS.ProcessEnv,
  input?: string,
): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { cwd, env: envFor(cache, extra), timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}
const cordon = (args: string[], cwd: string, cache?: string, extra?: NodeJS.ProcessEnv) => run(NODE, [CORDON, ...args], cwd, cache, extra);

/** On a terminal (a pseudo-terminal from util-linux `script`), typing `answers`. */
const onTerminal = (args: string[], cwd: string, answers: string) =>
  run("script", ["-qec", [NODE, CORDON, ...args].map((w) => `'${w}'`).join(" "), "/dev/null"], cwd, join(root, "cache-tty"), {}, answers);

/** A proxy project as `cordon new` makes it (dev dependencies, scripts, private), built; packed and published. */
async function publish(version: string, grants: string[], config?: object, name = "@t/echo"): Promise<void> {
  const dir = join(root, `project-${name.replace(/\W/g, "")}-${version}`);
  mkdirSync(join(dir, "dist"), { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name,
      version,
      private: true,
      type: "module",
      description: "Passes every message on",
      scripts: { build: "cordon-build-proxy", test: "cordon-test-proxy" },
      cordon: { entry: "src/echo.ts", out: "dist/echo.wasm" },
      devDependencies: { "@cordon/sdk-as": "file:vendor/sdk.tgz" },
    }),
  );
  const manifest = {
    name: "echo",
    version,
    description: "Passes every message on",
    ...(grants.length ? { grants } : {}),
    ...(config ? { config } : {}),
  };
  writeFileSync(join(dir, "dist", "echo.wasm"), withManifest(PASSTHROUGH, manifest));
  const packed = await cordon(["pack", dir, "--no-build", "--json"], dir);
  expect(packed.code, packed.stderr).toBe(0);
  const { file } = JSON.parse(packed.stdout) as { file: string };
  expect(file).toBe(join(dir, `${name.slice(1).replace("/", "-")}-${version}.tgz`));
  const published = await run(
    "npm",
    ["publish", file, "--registry", registry.url, "--userconfig", registry.npmrc, "--access", "public"],
    dir,
  );
  expect(published.code, published.stderr).toBe(0);
}

/** A folder with this chain config (and lock, if given). */
function folder(name: string, config: string, lock?: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "chain.json"), config);
  if (lock !== undefined) writeFileSync(join(dir, "chain.lock.json"), lock);
  return dir;
}

const read = (dir: string, file: string) => readFileSync(join(dir, file), "utf8");
const lockOf = (dir: string) => JSON.parse(read(dir, "chain.lock.json"));

/** A real ACP client through `cordon run` with this config: initialize, a session, a prompt answered. */
async function converse(dir: string, cache = join(root, "cache-a")): Promise<void> {
  const client = new TappedSdkClient(NODE, [CORDON, "run", "--config", join(dir, "chain.json")], envFor(cache) as Record<string, string>);
  try {
    await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} } as acp.InitializeRequest);
    const { sessionId } = await client.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const answer = await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
    expect(answer.stopReason, client.stderr).toBe("end_turn");
    // On the wire, the turn's update came before its answer (the SDK may hand it to its handler later).
    const read = client.raw.read.map((line) => JSON.parse(line));
    const update = read.findIndex((m) => m.method === acp.methods.client.session.update);
    const answered = read.findIndex((m) => m.result?.stopReason === "end_turn");
    expect(update, JSON.stringify(read)).toBeGreaterThanOrEqual(0);
    expect(update).toBeLessThan(answered);
  } finally {
    const exit = await client.close();
    expect(exit.code, client.stderr).toBe(0);
  }
}

/** What `cordon check` loads for the chain: the component's sha256 and manifest version. */
async function loaded(dir: string): Promise<{ sha256: string; version: string }> {
  const checked = await cordon(["check", join(dir, "chain.json"), "--json"], dir);
  expect(checked.code, checked.stderr).toBe(0);
  const [proxy] = JSON.parse(checked.stdout).proxies;
  expect(proxy.package).toEqual({ spec: "@t/echo@^1", package: "@t/echo", version: proxy.manifest.version });
  return { sha256: proxy.sha256, version: proxy.manifest.version };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "cordon-registry-"));
  mkdirSync(join(root, "home"));
  registry = await startVerdaccio();
}, 240_000);
afterAll(() => registry?.close());

describe("proxies installed by name from a real registry", { timeout: 60_000 }, () => {
  let a: string;
  let agent: object;

  it("packs with cordon pack, publishes with npm publish, adds with cordon add, and runs a real chain", async () => {
    await publish("1.0.0", []);
    const info = await cordon(["info", "@t/echo@^1", "--registry", registry.url], root);
    expect(info.code, info.stderr).toBe(0);
    expect(info.stdout).toMatch(/^@t\/echo 1\.0\.0 — Passes every message on\n/);
    expect(info.stdout).toContain("versions 1.0.0");
    a = folder("a", "");
    const { rmSync } = await import("node:fs");
    rmSync(join(a, "chain.json")); // add creates it
    const added = await cordon(["add", "@t/echo@^1", "--registry", registry.url], a);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain("@t/echo 1.0.0");
    expect(added.stdout).toContain("requests: nothing beyond the conversation");
    const config = JSON.parse(read(a, "chain.json"));
    expect(config.proxies).toEqual([{ name: "echo", package: "@t/echo@^1", grants: [] }]);
    const lock = lockOf(a);
    expect(lock.lockfileVersion).toBe(1);
    expect(lock.proxies.echo).toMatchObject({
      package: "@t/echo",
      version: "1.0.0",
      resolved: "@t/echo/-/echo-1.0.0.tgz",
      requested: { grants: [], wasi: [] },
      registrySignature: { status: "not-offered" },
    });
    expect(lock.proxies.echo.integrity).toMatch(/^sha512-/);
    // The user names the agent; then the chain runs the locked component.
    agent = { command: NODE, args: [CORDON, "reference-agent"] };
    writeFileSync(join(a, "chain.json"), JSON.stringify({ ...config, agent }, null, 2));
    await converse(a);
  });

  it("installs in a second folder to the identical lock and component", async () => {
    const b = folder("b", read(a, "chain.json"));
    writeFileSync(join(b, ".npmrc"), `registry=${registry.url}\n`); // the registry from .npmrc this time
    const installed = await cordon(["install"], b, join(root, "cache-b"));
    expect(installed.code, installed.stderr).toBe(0);
    expect(read(b, "chain.lock.json")).toBe(read(a, "chain.lock.json"));
    const { sha256 } = lockOf(b).proxies.echo.wasm;
    expect(existsSync(join(root, "cache-b", "cordon", "store", "sha256", `${sha256}.wasm`))).toBe(true);
    // From the committed lock, frozen (as under CI), in a third folder.
    const c = folder("c", read(a, "chain.json"), read(a, "chain.lock.json"));
    const frozen = await cordon(["install", "--frozen", "--registry", registry.url], c, join(root, "cache-c"));
    expect(frozen.code, frozen.stderr).toBe(0);
    expect(read(c, "chain.lock.json")).toBe(read(a, "chain.lock.json"));
    // A config edited past its lock: frozen (by flag, or by CI) refuses, naming the disagreement.
    const edited = folder("c2", read(a, "chain.json").replace('"@t/echo@^1"', '"@t/echo@~1.0"'), read(a, "chain.lock.json"));
    for (const [args, extra] of [
      [["install", "--frozen"], {}],
      [["install"], { CI: "true" }],
    ] as const) {
      const refused = await cordon([...args, "--registry", registry.url], edited, join(root, "cache-c2"), extra);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('"echo" is @t/echo@~1.0 in the config but @t/echo@^1 in the lock');
    }
    expect(read(edited, "chain.lock.json")).toBe(read(a, "chain.lock.json"));
  });

  it("refuses a tarball tampered with in the registry's storage, writing nothing", async () => {
    const stored = join(registry.storage, "@t", "echo", "echo-1.0.0.tgz");
    const original = readFileSync(stored);
    copyFileSync(join(root, "project-techo-1.0.0", "t-echo-1.0.0.tgz"), `${stored}.orig`);
    // Another valid proxy package under the same name and version.
    writeFileSync(join(root, "project-techo-1.0.0", "README.md"), "changed\n");
    const repacked = await cordon(["pack", join(root, "project-techo-1.0.0"), "--no-build"], a);
    expect(repacked.code, repacked.stderr).toBe(0);
    writeFileSync(stored, readFileSync(join(root, "project-techo-1.0.0", "t-echo-1.0.0.tgz")));
    try {
      const d = folder("d", read(a, "chain.json"), read(a, "chain.lock.json"));
      const installed = await cordon(["install", "--registry", registry.url], d, join(root, "cache-d"));
      expect(installed.code).toBe(1);
      expect(installed.stderr).toMatch(/@t\/echo@1\.0\.0: EINTEGRITY: the tarball's sha512 is sha512-\S+, the lock says sha512-/);
      expect(installed.stderr).toContain(lockOf(a).proxies.echo.integrity);
      expect(existsSync(join(root, "cache-d", "cordon", "store"))).toBe(false);
      expect(read(d, "chain.lock.json")).toBe(read(a, "chain.lock.json"));
    } finally {
      writeFileSync(stored, original);
    }
  });

  it("does not apply an update asking for terminal: exit 3, nothing changed, the old version still runs", async () => {
    await publish("1.1.0", ["terminal"]);
    const before = { config: read(a, "chain.json"), lock: read(a, "chain.lock.json") };
    const updated = await cordon(["update", "--registry", registry.url], a);
    expect(updated.code, updated.stderr).toBe(3);
    expect(updated.stdout).toContain("echo  @t/echo 1.0.0 → @t/echo 1.1.0   NOT UPDATED: asks for more");
    expect(updated.stdout).toMatch(/\+ terminal\s+it may run commands in a terminal the client opens/);
    expect(updated.stdout).toContain("approve: cordon update echo --grant terminal");
    expect(read(a, "chain.json")).toBe(before.config);
    expect(read(a, "chain.lock.json")).toBe(before.lock);
    const json = await cordon(["update", "--json", "--registry", registry.url], a);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toEqual([
      {
        name: "echo",
        from: { package: "@t/echo", version: "1.0.0" },
        to: { package: "@t/echo", version: "1.1.0" },
        status: "needs-approval",
        newGrants: ["terminal"],
        revoked: [],
        approve: "cordon update echo --grant terminal",
      },
    ]);
    expect(read(a, "chain.lock.json")).toBe(before.lock);
    expect((await loaded(a)).version).toBe("1.0.0");
    await converse(a);
  });

  it("adds a version that requests a grant only when it is given: --grant, or yes on a terminal", async () => {
    const g = join(root, "g");
    mkdirSync(g);
    const refused = await cordon(["add", "@t/echo@1.1.0", "--registry", registry.url], g);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("NOT ADDED: @t/echo@1.1.0 requests terminal, not granted.");
    expect(refused.stderr).toContain("approve: cordon add @t/echo@1.1.0 --grant terminal");
    expect(existsSync(join(g, "chain.json"))).toBe(false);
    const no = await onTerminal(["add", "@t/echo@1.1.0", "--registry", registry.url], g, "n\n");
    expect(no.code, no.stdout + no.stderr).toBe(3);
    expect(existsSync(join(g, "chain.json"))).toBe(false);
    const yes = await onTerminal(["add", "@t/echo@1.1.0", "--registry", registry.url], g, "y\n");
    expect(yes.code, yes.stdout + yes.stderr).toBe(0);
    expect(yes.stdout).toMatch(/\? terminal\s+it may run commands in a terminal the client opens/);
    expect(JSON.parse(read(g, "chain.json")).proxies).toEqual([{ name: "echo", package: "@t/echo@1.1.0", grants: ["terminal"] }]);
  });

  it("applies it once approved with --grant", async () => {
    const updated = await cordon(["update", "echo", "--grant", "terminal", "--registry", registry.url], a);
    expect(updated.code, updated.stderr).toBe(0);
    expect(lockOf(a).proxies.echo).toMatchObject({ version: "1.1.0", requested: { grants: ["terminal"], wasi: [] } });
    expect(JSON.parse(read(a, "chain.json")).proxies[0].grants).toEqual(["terminal"]);
    const now = await loaded(a);
    expect(now).toEqual({ sha256: lockOf(a).proxies.echo.wasm.sha256, version: "1.1.0" });
    await converse(a);
  });

  it("refuses a hand-edited lock that asks for more than the config grants, at install and at run", async () => {
    const lock = read(a, "chain.lock.json");
    const e = folder(
      "e",
      read(a, "chain.json"),
      lock.replace('"grants": [\n          "terminal"\n        ]', '"grants": [\n          "fs:write",\n          "terminal"\n        ]'),
    );
    expect(lockOf(e).proxies.echo.requested.grants).toEqual(["fs:write", "terminal"]);
    const installed = await cordon(["install", "--registry", registry.url], e, join(root, "cache-e"));
    expect(installed.code).toBe(3);
    expect(installed.stderr).toMatch(
      /"echo": the lock pins @t\/echo@1\.1\.0, which requests fs:write; the config does not grant it: refused/,
    );
    const checked = await cordon(["check", join(e, "chain.json")], e); // the store of folder a has the bytes
    expect(checked.code).toBe(2);
    expect(checked.stderr).toMatch(/requests fs:write, which the config does not grant: refused/);
  });

  it("revokes the grant when a version no longer requests it", async () => {
    await publish("1.2.0", []);
    const before = { config: read(a, "chain.json"), lock: read(a, "chain.lock.json") };
    const dry = await cordon(["update", "--dry-run", "--registry", registry.url], a);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("echo  @t/echo 1.1.0 → @t/echo 1.2.0   updated");
    expect(dry.stdout).toContain("(--dry-run: nothing written)");
    expect({ config: read(a, "chain.json"), lock: read(a, "chain.lock.json") }).toEqual(before);
    const updated = await cordon(["update", "--registry", registry.url], a);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toMatch(/- terminal .*\(revoked: 1\.2\.0 no longer requests it\)/);
    expect(JSON.parse(read(a, "chain.json")).proxies[0].grants).toEqual([]);
    expect(lockOf(a).proxies.echo).toMatchObject({ version: "1.2.0", requested: { grants: [], wasi: [] } });
  });

  it("does not apply a version whose config schema rejects the entry's config", async () => {
    await publish("1.3.0", [], { type: "object", required: ["mask"], properties: { mask: { type: "string" } } });
    const before = { config: read(a, "chain.json"), lock: read(a, "chain.lock.json") };
    const updated = await cordon(["update", "--registry", registry.url], a);
    expect(updated.code, updated.stderr).toBe(1);
    expect(updated.stdout).toContain("echo  @t/echo 1.2.0 → @t/echo 1.3.0   NOT UPDATED: its config schema rejects this entry's config");
    expect(updated.stdout).toMatch(/mask/);
    expect(read(a, "chain.json")).toBe(before.config);
    expect(read(a, "chain.lock.json")).toBe(before.lock);
    // Added fresh, it is added, with a note that it needs a config before it runs.
    const i = join(root, "i");
    mkdirSync(i);
    const added = await cordon(["add", "@t/echo@1.3.0", "--registry", registry.url], i);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toMatch(/cordon add: note: "echo" needs a "config" in \S+chain\.json before it runs \(mask: /);
  });

  it("reads a scope's registry and its auth token (an environment variable) from .npmrc", async () => {
    await publish("1.0.0", [], undefined, "@private/echo");
    const h = join(root, "h");
    mkdirSync(h);
    const port = new URL(registry.url).port;
    writeFileSync(join(h, ".npmrc"), `@private:registry=${registry.url}\n//127.0.0.1:${port}/:_authToken=\${PRIVATE_TOKEN}\n`);
    const denied = await cordon(["add", "@private/echo@^1"], h, join(root, "cache-h"));
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(
      /cannot fetch the package document of @private\/echo from http:\/\/127\.0\.0\.1:\d+\/@private%2fecho: HTTP 40[13]/,
    );
    const added = await cordon(["add", "@private/echo@^1"], h, join(root, "cache-h"), { PRIVATE_TOKEN: registry.token });
    expect(added.code, added.stderr).toBe(0);
    expect(lockOf(h).proxies.echo).toMatchObject({
      package: "@private/echo",
      version: "1.0.0",
      resolved: "@private/echo/-/echo-1.0.0.tgz",
    });
  });

  it("installs offline from the store, and names what the store lacks", async () => {
    await registry.close(); // nothing below can reach a registry
    const f = folder("f", read(a, "chain.json"), read(a, "chain.lock.json"));
    const fromStore = await cordon(["install", "--offline"], f);
    expect(fromStore.code, fromStore.stderr).toBe(0);
    await converse(f);
    const empty = await cordon(["install", "--offline"], f, join(root, "cache-empty"));
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain(`"echo" @t/echo@1.2.0 (sha256 ${lockOf(a).proxies.echo.wasm.sha256})`);
    const run = await cordon(["check", join(f, "chain.json")], f, join(root, "cache-empty"));
    expect(run.stderr).toMatch(/@t\/echo@1\.2\.0 is not in the local store .*: run `cordon install`/);
    const removed = await cordon(["remove", "echo"], f);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(read(f, "chain.json")).proxies).toEqual([]);
    expect(lockOf(f).proxies).toEqual({});
  });
});
