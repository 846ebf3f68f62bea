/**
 * The start bundle (`dist/bundle/`, build/bundle.mjs) is what `bin/cordon.js` runs: everything
 * that finds a file of Cordon's own must find it from there too. Checked through real starts:
 * the fuel pass's output is cached (its fingerprint reads the pass's modules), the backstop's
 * watchdog worker starts for a guest call that runs long (its source runs outside the bundle), a
 * worker-isolation proxy finds its worker script, and `--version` reads the package — each also
 * with `CORDON_BUNDLE=off`.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { prompt, session, useConfigChains } from "./helpers/config-chain.js";
import { CORDON, NODE, proxyWasm, ROOT, SCRIPTED_AGENT } from "./helpers/paths.js";
import { RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
const open: RawClient[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

/** The hostile fixture whose `loop` prompt spins in receive, built for this file alone. */
const saboteur = join(mkdtempSync(join(tmpdir(), "cordon-bundle-saboteur-")), "saboteur.wasm");
beforeAll(async () => {
  await exec(NODE, [join(ROOT, "sdk-as/tools/build-proxy.mjs"), join(ROOT, "test/fixtures/hostile/saboteur.ts"), "-o", saboteur]);
}, 120_000);

/**
 * A guest call that runs long starts the backstop's watchdog (its source is eval'd in a worker);
 * with `CORDON_LOG=debug` it says so once it watches. Fuel or the refuel door stops the call.
 */
const chain = useConfigChains();
async function runaway(env: Record<string, string>): Promise<string> {
  const proxies = [{ name: "saboteur", wasm: saboteur, limits: { receiveTimeoutMs: 1000 } }];
  const client = await chain(proxies, { ...env, CORDON_LOG: "debug" });
  const answer = await prompt(client, await session(client), "loop");
  expect(answer.error?.message).toMatch(/receive (did not return within 1000 ms|used its fuel budget)/);
  await expect.poll(() => client.stderr, { timeout: 10_000 }).toMatch(/the backstop's watchdog is watching/);
  await client.close();
  return client.stderr;
}

async function start(env: Record<string, string>, isolation: string): Promise<string> {
  const client = new RawClient(
    NODE,
    [CORDON, "run", "--isolation", isolation, "--proxy", proxyWasm("passthrough"), "--", ...SCRIPTED_AGENT],
    env,
  );
  open.push(client);
  const answer = await client.request("initialize", { protocolVersion: 1 });
  expect(answer.result?.protocolVersion, JSON.stringify(answer)).toBe(1);
  await client.close();
  return client.stderr;
}

describe("the start bundle", () => {
  it("is built, and bin/cordon.js runs from it", () => {
    expect(existsSync(join(ROOT, "dist", "bundle", "main.js"))).toBe(true);
  });

  it("defines require in each file that calls it, and only there (build/bundle.mjs drops the banner elsewhere)", () => {
    const dir = join(ROOT, "dist", "bundle");
    const files = readdirSync(dir).filter((f) => f.endsWith(".js"));
    const banner =
      /^import \{ createRequire as __cordonRequire \} from "node:module"; const require = __cordonRequire\(import\.meta\.url\);\n/;
    const withBanner = files.filter((f) => banner.test(readFileSync(join(dir, f), "utf8")));
    for (const file of files) {
      const body = readFileSync(join(dir, file), "utf8").replace(banner, "");
      expect(/\brequire\b/.test(body), file).toBe(withBanner.includes(file));
    }
    // esbuild's helpers (its `__require`) call it: at least that file keeps the banner.
    expect(withBanner.length).toBeGreaterThan(0);
    expect(withBanner.length).toBeLessThan(files.length);
  });

  it("starts the agent from one file, whose modules (the process groups' state) the rest imports instead of copying", () => {
    const dir = join(ROOT, "dist", "bundle");
    const early = readFileSync(join(dir, "early-agent.js"), "utf8");
    expect(early.match(/^import .* from "(?!node:)[^"]*";$/gm) ?? []).toEqual([]);
    const defining = readdirSync(dir).filter((f) => f.endsWith(".js") && /^var live = /m.test(readFileSync(join(dir, f), "utf8")));
    expect(defining).toEqual(["early-agent.js"]);
  });

  for (const bundle of ["on", "off"]) {
    it(`with CORDON_BUNDLE=${bundle}: caches the metered module, starts the watchdog, finds the worker script and the version`, async () => {
      const cache = mkdtempSync(join(tmpdir(), "cordon-bundle-cache-"));
      const env = { CORDON_BUNDLE: bundle, CORDON_CACHE_DIR: cache };
      expect(await start(env, "thread")).not.toMatch(/watchdog/);
      expect(readdirSync(cache).filter((f) => f.startsWith("metered-"))).toHaveLength(1);
      expect(await runaway(env)).not.toMatch(/watchdog failed/);
      expect(await start(env, "worker")).not.toMatch(/error/);
      const { stdout } = await exec(NODE, [CORDON, "--version"], { env: { ...process.env, CORDON_BUNDLE: bundle } });
      expect(stdout.trim()).toMatch(/^cordon \d+\.\d+\.\d+$/);
    });
  }
});
