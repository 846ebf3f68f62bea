import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { buildComponent, ECHO_BODY, echoComponent } from "../../test/fixtures/wat-components.js";
import { watchSandbox } from "../../test/helpers/watched-sandbox.js";
import { backstop } from "./backstop.js";
import { loadComponentBytes } from "./component-loader.js";
import type { InspectorWatchdog } from "./inspector-watchdog.js";
import { DEFAULT_LIMITS, THREAD_QUEUE_HIGH_WATER } from "./sandbox.js";
import { sandboxFactory } from "./sandbox-factory.js";
import { forgetPreparedModules, ThreadSandbox, type ThreadSandboxOptions } from "./thread-sandbox.js";
import { WorkerSandbox } from "./worker-sandbox.js";

const cacheDir = mkdtempSync(join(tmpdir(), "cordon-thread-"));
const WORLD = `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`;
const IMPORT = `(import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))`;

async function sandboxFor(bytes: Uint8Array, limits = {}, options: ThreadSandboxOptions = {}) {
  const component = await loadComponentBytes("guest.wasm", bytes, { cacheDir });
  return watchSandbox(new ThreadSandbox(component, { ...DEFAULT_LIMITS, ...limits }, [], options));
}

/** Fuel for ~200 s of work: only a clock can stop a guest within these tests (the door's, at a fuel check, or the backstop's). */

/**
 * Waits until no watchdog is up (one an earlier test started ends after a second idle), so a test
 * of the door is not a race with a watchdog already watching from the call's start: a watchdog
 * started by the door comes ~30 ms after it asks, past the door's limit by the backstop's margin.
 */
async function noWatchdogUp(): Promise<InspectorWatchdog> {
  const dog = backstop() as InspectorWatchdog;
  expect(dog.mechanism).toBe("watchdog");
  await expect.poll(() => dog.watching, { timeout: 5_000 }).toBe(false);
  return dog;
}
const UNMETERED = { maxFuelPerDelivery: 10n ** 15n, maxFuelAtStart: 10n ** 15n };

const loopInReceive = () =>
  buildComponent({
    wat: `(module ${IMPORT} ${ECHO_BODY.replace("(global.set $next (i32.const 1024))", "(loop $spin (br $spin))")})`,
    wit: WORLD,
  });

describe("ThreadSandbox", () => {
  it("delivers in order, asynchronously (never inside deliver), and returns every output", async () => {
    const s = await sandboxFor(await echoComponent("utf16"));
    await s.started;
    for (let i = 0; i < 200; i++) s.sandbox.deliver(`{"n":${i}}`);
    expect(s.outputs).toEqual([]); // nothing ran yet: the router is never re-entered from deliver
    await expect.poll(() => s.outputs.length).toBe(200);
    expect(s.outputs).toEqual(Array.from({ length: 200 }, (_, i) => `{"n":${i}}`));
    await s.sandbox.stop();
  });

  it("sandboxes of one component share one metered, compiled module: each further one costs an instance, not a compile", async () => {
    const component = await loadComponentBytes("shared.wasm", await echoComponent("utf8"), { cacheDir });
    forgetPreparedModules();
    const compile = vi.spyOn(WebAssembly, "compile");
    try {
      const sandboxes = [0, 1, 2].map(() => watchSandbox(new ThreadSandbox(component, DEFAULT_LIMITS)));
      expect(compile).toHaveBeenCalledTimes(1);
      expect(sandboxes.map((s) => s.sandbox.meteredFrom.replace("disk", "rewrite"))).toEqual(["rewrite", "memory", "memory"]);
      for (const s of sandboxes) await s.started;
      for (const [i, s] of sandboxes.entries()) s.sandbox.deliver(`{"n":${i}}`);
      for (const [i, s] of sandboxes.entries()) await expect.poll(() => s.outputs).toEqual([`{"n":${i}}`]);
      for (const s of sandboxes) await s.sandbox.stop();
    } finally {
      compile.mockRestore();
    }
  });

  it("a delivery made from an output handler runs after the current one, in order", async () => {
    const component = await loadComponentBytes("echo.wasm", await echoComponent("utf8"), { cacheDir });
    const seen: string[] = [];
    const sandbox = new ThreadSandbox(component, DEFAULT_LIMITS);
    await sandbox.start({
      output: (messages) => {
        seen.push(...messages);
        if (messages[0] === `"a"`) sandbox.deliver(`"c"`); // as the router may do while routing output
      },
      failed: () => {},
    });
    sandbox.deliver(`"a"`);
    sandbox.deliver(`"b"`);
    await expect.poll(() => seen.length).toBe(3);
    expect(seen).toEqual([`"a"`, `"b"`, `"c"`]);
  });

  it("stops a guest that loops forever in receive with its fuel, reported as a timeout", async () => {
    // Fuel for ~8 ms of work (FUEL_PER_MS), long before the 2 s backstop.
    const s = await sandboxFor(await loopInReceive(), {}, { maxFuelPerDelivery: 50_000_000n });
    await s.started;
    const t = Date.now();
    s.sandbox.deliver("{}");
    s.sandbox.deliver("{}");
    await s.died;
    expect(Date.now() - t).toBeLessThan(5_000);
    expect(s.failure()?.kind).toBe("timeout");
    expect(s.failure()?.message).toMatch(
      /^receive used its fuel budget of 50000000 units on one message \(≈ 8 ms of work; it ran \d+ ms\)$/,
    );
  });

  it("refuses to start a guest that loops forever in its start function", async () => {
    const loop = await buildComponent({
      wat: `(module ${IMPORT} ${ECHO_BODY} (func $start (loop $spin (br $spin))) (start $start))`,
      wit: WORLD,
    });
    const s = await sandboxFor(loop, {}, { maxFuelAtStart: 50_000_000n });
    await expect(s.started).rejects.toThrow(/^instantiation used its fuel budget of 50000000 units/);
  });

  it("the refuel door stops a receive at its time limit that its fuel does not; the bystander's output arrives first", async () => {
    await noWatchdogUp();
    const s = await sandboxFor(await loopInReceive(), { receiveTimeoutMs: 300 }, UNMETERED);
    await s.started;
    const t = Date.now();
    s.sandbox.deliver("{}");
    await s.died;
    expect(Date.now() - t).toBeLessThan(5_000);
    expect(s.failure()?.kind).toBe("timeout");
    expect(s.failure()?.message).toMatch(/^receive did not return within 300 ms \(stopped at a fuel check after \d+ ms\)$/);
    // Later work in this thread goes on: another guest still answers.
    const echo = await sandboxFor(await echoComponent("utf8"));
    await echo.started;
    echo.sandbox.deliver(`{"after":1}`);
    await expect.poll(() => echo.outputs).toEqual([`{"after":1}`]);
  });

  it("output of deliveries before the one stopped by the backstop is handed over, in order", async () => {
    const marked = await buildComponent({
      wat: `(module ${IMPORT} ${ECHO_BODY.replace(
        "(global.set $next (i32.const 1024))",
        "(global.set $next (i32.const 1024)) (if (i32.eq (i32.load8_u (local.get $ptr)) (i32.const 0x21)) (then (loop $spin (br $spin))))",
      )})`,
      wit: WORLD,
    });
    const s = await sandboxFor(marked, { receiveTimeoutMs: 300 }, UNMETERED);
    await s.started;
    s.sandbox.deliver(`"a"`);
    s.sandbox.deliver(`!`);
    s.sandbox.deliver(`"b"`);
    await s.died;
    expect(s.outputs).toEqual([`"a"`]);
    expect(s.failure()?.message).toMatch(/^receive did not return within 300 ms/);
  });

  it("no watchdog is started for guests whose calls end quickly; one that runs away is watched from ~10 ms on while the door stops it", async () => {
    const dog = await noWatchdogUp();
    const started = dog.started;
    const echo = await sandboxFor(await echoComponent("utf8"));
    await echo.started;
    for (let i = 0; i < 100; i++) echo.sandbox.deliver(`{"n":${i}}`);
    await expect.poll(() => echo.outputs.length).toBe(100);
    expect(dog.started).toBe(started);
    expect(dog.watching).toBe(false);

    const s = await sandboxFor(await loopInReceive(), { receiveTimeoutMs: 300 }, UNMETERED);
    await s.started;
    s.sandbox.deliver("{}");
    await s.died;
    expect(s.failure()?.message).toMatch(/^receive did not return within 300 ms \(stopped at a fuel check/);
    expect(dog.started).toBe(started + 1);
  });

  it("the refuel door stops a start function at its time limit that its fuel does not", async () => {
    await noWatchdogUp();
    const loop = await buildComponent({
      wat: `(module ${IMPORT} ${ECHO_BODY} (func $start (loop $spin (br $spin))) (start $start))`,
      wit: WORLD,
    });
    const s = await sandboxFor(loop, { startTimeoutMs: 300 }, UNMETERED);
    await expect(s.started).rejects.toThrow(/^instantiation did not finish within 300 ms \(stopped at a fuel check after \d+ ms\)$/);
  });

  it("random bytes in a loop (wasi:random granted) are charged by length; the shim's allocations through cabi_realloc do not refill", async () => {
    const random = await buildComponent({
      wat: `(module ${IMPORT}
        (import "wasi:random/random@0.2.0" "get-random-bytes" (func $bytes (param i64 i32)))
        ${ECHO_BODY.replace("(global.set $next (i32.const 1024))", "(loop $l (global.set $next (i32.const 1024)) (call $bytes (i64.const 65536) (i32.const 16)) (br $l))")})`,
      wit: `package wasi:random@0.2.0 { interface random { get-random-bytes: func(len: u64) -> list<u8>; } }
        world guest { import wasi:random/random@0.2.0; import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
    });
    const component = await loadComponentBytes("random.wasm", random, { cacheDir, grants: ["wasi:random"] });
    const s = watchSandbox(new ThreadSandbox(component, DEFAULT_LIMITS, ["wasi:random"], { maxFuelPerDelivery: 50_000_000n }));
    await s.started;
    s.sandbox.deliver("{}");
    await s.died;
    expect(s.failure()?.message).toMatch(/^receive used its fuel budget of 50000000 units on one message/);
  });

  it("reports a trap as a trap (not a timeout), once", async () => {
    const trap = await buildComponent({
      wat: `(module ${IMPORT} ${ECHO_BODY.replace("(global.set $next (i32.const 1024))", "unreachable")})`,
      wit: WORLD,
    });
    const s = await sandboxFor(trap);
    await s.started;
    s.sandbox.deliver("{}");
    s.sandbox.deliver("{}");
    await s.died;
    await new Promise((r) => setTimeout(r, 20));
    expect(s.failure()).toEqual({ kind: "trap", message: "unreachable" });
  });

  it("a guest within its fuel on every message but over its CPU budget over the window is stopped (kind budget)", async () => {
    const busy = await buildComponent({
      wat: `(module ${IMPORT} ${ECHO_BODY.replace(
        "(global.set $next (i32.const 1024))",
        "(global.set $next (i32.const 1024)) (local.set $ptr (call $spin (local.get $ptr)))",
      )} (func $spin (param $p i32) (result i32) (local $i i32)
          (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1))) (br_if $l (i32.lt_u (local.get $i) (i32.const 20000000))))
          (local.get $p)))`,
      wit: WORLD,
    });
    const s = await sandboxFor(busy, { cpuWindowMs: 60_000, maxCpuMsPerWindow: 40 });
    await s.started;
    for (let i = 0; i < 50; i++) s.sandbox.deliver(`{"n":${i}}`);
    await s.died;
    expect(s.failure()?.kind).toBe("budget");
    expect(s.outputs.length).toBeLessThan(50);
  });

  it("signals congestion past the high-water mark and clears it as the queue drains", async () => {
    const s = await sandboxFor(await echoComponent("utf8"));
    await s.started;
    for (let i = 0; i < THREAD_QUEUE_HIGH_WATER + 10; i++) s.sandbox.deliver(`${i}`);
    expect(s.congestion).toEqual([true]);
    await expect.poll(() => s.outputs.length).toBe(THREAD_QUEUE_HIGH_WATER + 10);
    expect(s.congestion).toEqual([true, false]);
  });

  it("the memory cap holds: a guest that starts above it is refused at start", async () => {
    const big = await buildComponent({
      wat: `(module ${IMPORT} ${ECHO_BODY.replace('(memory (export "memory") 16)', '(memory (export "memory") 64)')})`,
      wit: WORLD,
    });
    const s = await sandboxFor(big, { maxMemoryPages: 32 });
    await expect(s.started).rejects.toThrow(/above the cap of 32 pages/);
  });

  it("the factory falls back to a worker for a module it cannot meter, and says so", async () => {
    const component = await loadComponentBytes("echo.wasm", await echoComponent("utf8"), { cacheDir });
    const warnings: string[] = [];
    const weird = { ...component, coreBytes: component.coreBytes.slice(0, 8), sha256: "x".repeat(64) }; // no sections to meter
    const sandbox = sandboxFactory("thread", (w) => warnings.push(w))(weird, DEFAULT_LIMITS, []);
    expect(sandbox).toBeInstanceOf(WorkerSandbox);
    expect(warnings[0]).toMatch(/cannot be fuel-metered .* running it in a worker thread instead/);
    expect(sandboxFactory("thread")(component, DEFAULT_LIMITS, [])).toBeInstanceOf(ThreadSandbox);
    expect(sandboxFactory("worker")(component, DEFAULT_LIMITS, [])).toBeInstanceOf(WorkerSandbox);
  });
});
