import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildComponent, ECHO_BODY, echoComponent } from "../../test/fixtures/wat-components.js";
import { proxyWasm } from "../../test/helpers/paths.js";
import { watchSandbox } from "../../test/helpers/watched-sandbox.js";
import { loadComponentBytes } from "./component-loader.js";
import { FUEL_EXPORT, instrumentFuel } from "./fuel.js";
import { meterCached, passFingerprint } from "./metered-cache.js";
import { capModule } from "./module-caps.js";
import { DEFAULT_LIMITS } from "./sandbox.js";
import { forgetPreparedModules, ThreadSandbox } from "./thread-sandbox.js";

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

  it("does not trust an altered entry whose digest was recomputed (only the directory's secret makes a valid tag)", async () => {
    const core = await passthroughCore();
    const dir = fresh();
    const expected = meterCached(core, FUEL, dir).bytes;
    const file = join(dir, entries(dir)[0]);
    const good = readFileSync(file);
    const code = Buffer.from(good.subarray(32));
    code[code.length - 100] ^= 0x01;
    writeFileSync(file, Buffer.concat([createHash("sha256").update(code).digest(), code]));
    const again = meterCached(core, FUEL, dir);
    expect(again.cached).toBe(false);
    expect(again.bytes).toEqual(expected);
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

  it("a component's second start (in a new process: nothing kept in memory) reads it instead of metering again, and works", async () => {
    const dir = fresh();
    const component = await loadComponentBytes("echo.wasm", await echoComponent("utf8"), { cacheDir: dir });
    forgetPreparedModules();
    expect(new ThreadSandbox(component, DEFAULT_LIMITS).meteredFrom).toBe("rewrite");
    expect(new ThreadSandbox(component, DEFAULT_LIMITS).meteredFrom).toBe("memory");
    forgetPreparedModules();
    const s = watchSandbox(new ThreadSandbox(component, DEFAULT_LIMITS));
    expect(s.sandbox.meteredFrom).toBe("disk");
    await s.started;
    s.sandbox.deliver(`{"n":1}`);
    await expect.poll(() => s.outputs).toEqual([`{"n":1}`]);
  });

  it("a tampered entry (the guest's unmetered code under the old tag) is not trusted: the guest is metered again and its loop is stopped by fuel", async () => {
    const dir = fresh();
    const spinner = await buildComponent({
      wat: `(module (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32))) ${ECHO_BODY.replace("(global.set $next (i32.const 1024))", "(loop $spin (br $spin))")})`,
      wit: `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
    });
    const component = await loadComponentBytes("spin.wasm", spinner, { cacheDir: dir });
    forgetPreparedModules();
    new ThreadSandbox(component, DEFAULT_LIMITS);
    const file = join(dir, entries(dir)[0]);
    writeFileSync(file, Buffer.concat([readFileSync(file).subarray(0, 32), capModule(component.coreBytes, DEFAULT_LIMITS)]));
    forgetPreparedModules();
    const fuel = { maxFuelPerDelivery: 50_000_000n };
    const s = watchSandbox(new ThreadSandbox(component, DEFAULT_LIMITS, [], fuel));
    expect(s.sandbox.meteredFrom).toBe("rewrite");
    await s.started;
    s.sandbox.deliver("{}");
    await s.died;
    expect(s.failure()?.message).toMatch(/^receive used its fuel budget of 50000000 units on one message/);
    forgetPreparedModules();
    expect(new ThreadSandbox(component, DEFAULT_LIMITS, [], fuel).meteredFrom).toBe("disk"); // the rewrite replaced the entry
  });
});
