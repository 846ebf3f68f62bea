/**
 * Issue 8, holes 3, 5 and 7 at the sandbox level: hostile WAT guests that try to make the host
 * allocate without bound (tables, big sends) or burn time under the per-message watchdog. Each
 * runs in a real `WorkerSandbox` inside this test process: before the bounds, the table and UTF-8
 * attacks aborted the whole process (V8 "Reached heap limit" in the worker), so merely finishing
 * is part of what these tests check.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bigSender, bigTable, growingEcho, slowEcho, tableBomb } from "../../test/fixtures/hostile/sandbox-wat.js";
import { echoComponent } from "../../test/fixtures/wat-components.js";
import { watchSandbox } from "../../test/helpers/watched-sandbox.js";
import { CanonicalHost } from "./canonical-host.js";
import { loadComponentBytes } from "./component-loader.js";
import { DEFAULT_LIMITS, type SandboxLimits, workerHeapLimitMiB } from "./sandbox.js";
import { WorkerSandbox } from "./worker-sandbox.js";

const cacheDir = mkdtempSync(join(tmpdir(), "cordon-bounds-"));
const Mi = 2 ** 20;

async function sandboxFor(bytes: Uint8Array, limits: Partial<SandboxLimits> = {}) {
  const component = await loadComponentBytes("guest.wasm", bytes, { cacheDir });
  return watchSandbox(new WorkerSandbox(component, { ...DEFAULT_LIMITS, receiveTimeoutMs: 20_000, startTimeoutMs: 10_000, ...limits }));
}

const rssMiB = () => process.memoryUsage().rss / Mi;

describe("the worker's heap limit follows the caps", () => {
  it("holds one delivered message and one delivery's output, with room to spare (defaults: 264 MiB)", () => {
    // 128 MiB input (64 Mi code units) + 64 MiB output (32 Mi units) + 8 MiB tables + 64 MiB runtime.
    expect(workerHeapLimitMiB(DEFAULT_LIMITS)).toBe(264);
    expect(workerHeapLimitMiB({ ...DEFAULT_LIMITS, maxMessageUnits: 64 * Mi })).toBe(128 + 128 + 8 + 64);
  });
});

describe("tables", () => {
  it("a guest growing a table by millions of entries fails its grow and traps; the process lives", async () => {
    const s = await sandboxFor(await tableBomb());
    await s.started;
    s.sandbox.deliver("{}");
    await s.died;
    expect(s.failure()?.kind).toBe("trap");
    expect(s.failure()?.message).toMatch(/unreachable/);
  });

  it("growth within the cap works, and the cap is configurable", async () => {
    const s = await sandboxFor(await tableBomb(1000, 3));
    await s.started;
    s.sandbox.deliver(`{"ok":1}`);
    await expect.poll(() => s.outputs).toEqual([`{"ok":1}`]);
    await s.sandbox.stop();
    const tight = await sandboxFor(await tableBomb(1000, 3), { maxTableElements: 2000 });
    await tight.started;
    tight.sandbox.deliver("{}");
    await tight.died;
    expect(tight.failure()?.kind).toBe("trap");
  });

  it("a table that starts above the cap is refused at start, naming it", async () => {
    const s = await sandboxFor(await bigTable(10_000_000));
    await expect(s.started).rejects.toThrow(/table 0 starts at 10000000 elements, above the cap of 65536/);
  });
});

describe("what a guest sends is bounded before it is decoded", () => {
  it("~48 MiB UTF-8 messages (once within the cap) are refused per message: the host never decodes them", async () => {
    const s = await sandboxFor(await bigSender({ encoding: "utf8", units: 48 * Mi - 1, sends: 4 }));
    await s.started;
    s.sandbox.deliver("{}");
    await s.died;
    expect(s.failure()).toEqual({ kind: "fault", message: `guest sent a message of ${48 * Mi - 1} bytes (limit ${16 * Mi})` });
  });

  it("UTF-8 messages within the per-message cap are stopped by the per-delivery budget", async () => {
    const s = await sandboxFor(await bigSender({ encoding: "utf8", units: 16 * Mi, sends: 4 }));
    await s.started;
    s.sandbox.deliver("{}");
    await s.died;
    expect(s.failure()).toEqual({
      kind: "fault",
      message: `guest sent ${48 * Mi} bytes of output for one input (limit ${32 * Mi} per delivery)`,
    });
    expect(s.outputs).toEqual([]);
  });

  it("UTF-16 sends of 1 Mi code units, 400 of them, stop at the per-delivery budget instead of piling up outside the heap", async () => {
    const before = rssMiB();
    const s = await sandboxFor(await bigSender({ encoding: "utf16", units: Mi, sends: 400 }));
    await s.started;
    s.sandbox.deliver("{}");
    await s.died;
    expect(s.failure()).toEqual({
      kind: "fault",
      message: `guest sent ${33 * Mi} code units of output for one input (limit ${32 * Mi} per delivery)`,
    });
    // 400 × 2 MiB would be 800 MiB of external strings, copied again into this thread.
    expect(rssMiB() - before).toBeLessThan(300);
  });

  it("the per-delivery budget is configurable and never below the per-message cap", async () => {
    const s = await sandboxFor(await bigSender({ encoding: "utf16", units: 1000, sends: 5 }), {
      maxMessageUnits: 2000,
      maxOutputUnitsPerDelivery: 100,
    });
    await s.started;
    s.sandbox.deliver("{}");
    await s.died;
    expect(s.failure()?.message).toBe("guest sent 3000 code units of output for one input (limit 2000 per delivery)");
  });

  for (const encoding of ["utf16", "utf8"] as const) {
    it(`legit traffic still passes: a prompt with a 10 MiB embedded blob goes through a ${encoding} guest`, async () => {
      const blob = Buffer.alloc(10 * Mi, 7).toString("base64");
      const prompt = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "session/prompt",
        params: { sessionId: "s", prompt: [{ type: "resource", resource: { uri: "file:///big.bin", blob } }] },
      });
      expect(prompt.length).toBeGreaterThan(13_900_000);
      const s = await sandboxFor(await growingEcho(encoding));
      await s.started;
      s.sandbox.deliver(prompt);
      s.sandbox.deliver(prompt);
      await expect.poll(() => s.outputs.length, { timeout: 20_000 }).toBe(2);
      expect(s.outputs[1] === prompt).toBe(true);
      expect(s.failure()).toBeNull();
      await s.sandbox.stop();
    });
  }

  it("the host reports what each delivery sent, in the units it charged", async () => {
    const c = await loadComponentBytes("guest.wasm", await echoComponent("utf8"), { cacheDir });
    const host = new CanonicalHost(c.module, { encodings: c.encodings, maxMessageUnits: 100, maxOutputUnitsPerDelivery: 150 });
    host.receive("é".repeat(10));
    expect(host.lastOutputUnits).toBe(20); // UTF-8 bytes
    expect(() => host.receive("x".repeat(101))).toThrow("guest sent a message of 101 bytes (limit 100)");
  });
});

describe("budgets over a window", () => {
  it("a slow-but-legal guest (each delivery well under the watchdog) is stopped by its CPU budget, naming it", async () => {
    // ~50 ms a delivery here (more on a loaded machine), 80 of them: over 1 s whatever the speed.
    const s = await sandboxFor(await slowEcho(50_000_000), { receiveTimeoutMs: 5_000, cpuWindowMs: 20_000, maxCpuMsPerWindow: 1_000 });
    await s.started;
    for (let i = 0; i < 80; i++) s.sandbox.deliver(`{"n":${i}}`);
    await s.died;
    expect(s.failure()?.kind).toBe("budget");
    expect(s.failure()?.message).toMatch(
      /^used \d+(\.\d+)? s of guest time in the last 20 s, over its CPU budget of 1 s per 20 s \(limits\.maxCpuMsPerWindow\)$/,
    );
    expect(s.outputs.length).toBeGreaterThan(0);
    expect(s.outputs.length).toBeLessThan(80);
  });

  it("a guest over its output budget (messages, or volume) is stopped, naming the budget", async () => {
    const chatty = await sandboxFor(await echoComponent("utf16"), { maxOutputMessagesPerWindow: 50 });
    await chatty.started;
    for (let i = 0; i < 60; i++) chatty.sandbox.deliver(`{"n":${i}}`);
    await chatty.died;
    expect(chatty.failure()).toEqual({
      kind: "budget",
      message: "sent 51 messages in the last 10 s, over its output budget of 50 messages per 10 s (limits.maxOutputMessagesPerWindow)",
    });
    expect(chatty.outputs.length).toBe(50);

    const bulky = await sandboxFor(await bigSender({ encoding: "utf16", units: 4 * Mi, sends: 2 }), { maxOutputUnitsPerWindow: 20 * Mi });
    await bulky.started;
    for (let i = 0; i < 5; i++) bulky.sandbox.deliver("{}");
    await bulky.died;
    expect(bulky.failure()).toEqual({
      kind: "budget",
      message:
        "sent 24 Mi code units in the last 10 s, over its output budget of 20 Mi code units per 10 s (limits.maxOutputUnitsPerWindow)",
    });
    expect(bulky.outputs.length).toBe(4);
  });

  it("the defaults let a busy guest run", async () => {
    const s = await sandboxFor(await echoComponent("utf16"));
    await s.started;
    for (let i = 0; i < 5_000; i++) s.sandbox.deliver(`{"n":${i}}`);
    await expect.poll(() => s.outputs.length, { timeout: 20_000 }).toBe(5_000);
    expect(s.failure()).toBeNull();
    await s.sandbox.stop();
  });
});
