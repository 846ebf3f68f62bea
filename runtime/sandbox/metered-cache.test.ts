import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildComponent, ECHO_BODY, echoComponent } from "../../test/fixtures/wat-components.js";
import { watchSandbox } from "../../test/helpers/watched-sandbox.js";
import { loadComponentBytes } from "./component-loader.js";
import { capModule } from "./module-caps.js";
import { DEFAULT_LIMITS } from "./sandbox.js";
import { forgetPreparedModules, ThreadSandbox } from "./thread-sandbox.js";

const WORLD = `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`;
const IMPORT = `(import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))`;
const entries = (dir: string) => readdirSync(dir).filter((f) => f.includes(".metered-") && f.endsWith(".wasm"));

describe("the metered module cached on disk", () => {
  it("a component's second start (in a new process: nothing kept in memory) reads it instead of metering again, and works", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "cordon-metered-"));
    const component = await loadComponentBytes("echo.wasm", await echoComponent("utf8"), { cacheDir });
    forgetPreparedModules();
    expect(new ThreadSandbox(component, DEFAULT_LIMITS).meteredFrom).toBe("rewrite");
    expect(entries(cacheDir)).toEqual([expect.stringMatching(new RegExp(`^${component.sha256}\\.metered-`))]);
    expect(new ThreadSandbox(component, DEFAULT_LIMITS).meteredFrom).toBe("memory");
    forgetPreparedModules();
    const s = watchSandbox(new ThreadSandbox(component, DEFAULT_LIMITS));
    expect(s.sandbox.meteredFrom).toBe("disk");
    await s.started;
    s.sandbox.deliver(`{"n":1}`);
    await expect.poll(() => s.outputs).toEqual([`{"n":1}`]);
    // Other caps are another entry.
    forgetPreparedModules();
    expect(new ThreadSandbox(component, { ...DEFAULT_LIMITS, maxMemoryPages: DEFAULT_LIMITS.maxMemoryPages - 1 }).meteredFrom).toBe(
      "rewrite",
    );
    expect(entries(cacheDir)).toHaveLength(2);
  });

  it("a tampered entry (the guest's unmetered code under the old tag) is not trusted: the component is metered again and its loop is stopped by fuel", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "cordon-metered-"));
    const spinner = await buildComponent({
      wat: `(module ${IMPORT} ${ECHO_BODY.replace("(global.set $next (i32.const 1024))", "(loop $spin (br $spin))")})`,
      wit: WORLD,
    });
    const component = await loadComponentBytes("spin.wasm", spinner, { cacheDir });
    forgetPreparedModules();
    new ThreadSandbox(component, DEFAULT_LIMITS);
    const [entry] = entries(cacheDir);
    const file = join(cacheDir, entry);
    const unmetered = capModule(component.coreBytes, DEFAULT_LIMITS);
    writeFileSync(file, Buffer.concat([readFileSync(file).subarray(0, 32), unmetered]));
    forgetPreparedModules();
    const fuel = { maxFuelPerDelivery: 50_000_000n };
    const s = watchSandbox(new ThreadSandbox(component, DEFAULT_LIMITS, [], fuel));
    expect(s.sandbox.meteredFrom).toBe("rewrite");
    await s.started;
    s.sandbox.deliver("{}");
    await s.died;
    expect(s.failure()?.message).toMatch(/^receive used its fuel budget of 50000000 units on one message/);
    // The rewrite replaced the entry with a good one.
    forgetPreparedModules();
    expect(new ThreadSandbox(component, DEFAULT_LIMITS, [], fuel).meteredFrom).toBe("disk");
  });

  it("an entry whose bytes were changed by one bit is not trusted", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "cordon-metered-"));
    const component = await loadComponentBytes("echo.wasm", await echoComponent("utf16"), { cacheDir });
    forgetPreparedModules();
    new ThreadSandbox(component, DEFAULT_LIMITS);
    const file = join(cacheDir, entries(cacheDir)[0]);
    const bytes = readFileSync(file);
    bytes[bytes.length - 1] ^= 1;
    writeFileSync(file, bytes);
    forgetPreparedModules();
    expect(new ThreadSandbox(component, DEFAULT_LIMITS).meteredFrom).toBe("rewrite");
  });
});
