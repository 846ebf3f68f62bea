import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { proxyWasm } from "../../test/helpers/paths.js";
import { loadComponentBytes } from "./component-loader.js";
import { FUEL_EXPORT, instrumentFuel } from "./fuel.js";
import { meterCached, passFingerprint } from "./metered-cache.js";
import { DEFAULT_LIMITS } from "./sandbox.js";
import { ThreadSandbox } from "./thread-sandbox.js";

const FUEL = 10n ** 12n;
const fresh = () => mkdtempSync(join(tmpdir(), "cordon-metered-"));
const entries = (dir: string) => readdirSync(dir).filter((f) => f.startsWith("metered-"));

async function passthroughCore(): Promise<Uint8Array> {
  const bytes = new Uint8Array(readFileSync(proxyWasm("passthrough")));
  return (await loadComponentBytes("passthrough.wasm", bytes, { cacheDir: fresh() })).coreBytes;
}

describe("the metered-module cache", () => {
  it("is written on a miss (0600) and used on the next start: the very bytes the fuel pass makes", async () => {
    const core = await passthroughCore();
    const dir = fresh();
    const expected = instrumentFuel(core, { startFuel: FUEL }).bytes;
    const first = meterCached(core, FUEL, dir);
    expect(first.cached).toBe(false);
    expect(first.bytes).toEqual(expected);
    expect(entries(dir)).toHaveLength(1);
    expect(statSync(join(dir, entries(dir)[0])).mode & 0o777).toBe(0o600);
    const second = meterCached(core, FUEL, dir);
    expect(second.cached).toBe(true);
    expect(second.bytes).toEqual(expected);
    const module = new WebAssembly.Module(second.bytes as Uint8Array<ArrayBuffer>);
    expect(WebAssembly.Module.exports(module).map((e) => e.name)).toContain(FUEL_EXPORT);
  });

  it("ignores and rewrites an entry that was altered or truncated", async () => {
    const core = await passthroughCore();
    const dir = fresh();
    const expected = meterCached(core, FUEL, dir).bytes;
    const file = join(dir, entries(dir)[0]);
    const good = readFileSync(file);
    const altered = Buffer.from(good);
    altered[altered.length - 100] ^= 0x01; // one byte of code
    for (const bad of [altered, good.subarray(0, 32)]) {
      writeFileSync(file, bad);
      const again = meterCached(core, FUEL, dir);
      expect(again.cached).toBe(false);
      expect(again.bytes).toEqual(expected);
      expect(readFileSync(file)).toEqual(good);
    }
  });

  it("is stale for another input module, another start fuel or another fuel pass (a new entry each)", async () => {
    const core = await passthroughCore();
    const dir = fresh();
    meterCached(core, FUEL, dir);
    const other = new Uint8Array(readFileSync(proxyWasm("redact")));
    const otherCore = (await loadComponentBytes("redact.wasm", other, { cacheDir: fresh() })).coreBytes;
    expect(meterCached(otherCore, FUEL, dir).cached).toBe(false);
    expect(meterCached(core, FUEL + 1n, dir).cached).toBe(false);
    expect(meterCached(core, FUEL, dir, "another pass").cached).toBe(false);
    expect(entries(dir)).toHaveLength(4);
    expect(meterCached(core, FUEL, dir).cached).toBe(true);
    expect(passFingerprint()).toMatch(/^[0-9a-f]{64}$/);
  });

  it("writes nothing without a usable directory, and an unwritable one only costs speed", async () => {
    const core = await passthroughCore();
    expect(meterCached(core, FUEL, null).cached).toBe(false);
    const missing = join(fresh(), "no", "such", "dir");
    const result = meterCached(core, FUEL, missing);
    expect(result.cached).toBe(false);
    expect(result.bytes).toEqual(instrumentFuel(core, { startFuel: FUEL }).bytes);
  });

  it("is what a thread sandbox uses: its first start leaves the metered module in the component cache", async () => {
    const dir = fresh();
    const bytes = new Uint8Array(readFileSync(proxyWasm("passthrough")));
    const component = await loadComponentBytes("passthrough.wasm", bytes, { cacheDir: dir });
    const sandbox = new ThreadSandbox(component, { ...DEFAULT_LIMITS, maxMemoryPages: DEFAULT_LIMITS.maxMemoryPages - 1 });
    await sandbox.start({ output: () => {}, failed: () => {} });
    await sandbox.stop();
    expect(entries(dir)).toHaveLength(1);
  });
});
