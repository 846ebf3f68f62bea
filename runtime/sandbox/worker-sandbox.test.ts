import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it, vi } from "vitest";
import { buildComponent, ECHO_BODY, echoComponent } from "../../test/fixtures/wat-components.js";
import { watchSandbox } from "../../test/helpers/watched-sandbox.js";
import { loadComponentBytes } from "./component-loader.js";
import { DEFAULT_LIMITS, MAX_DELIVERED_UNITS } from "./sandbox.js";
import { WorkerSandbox } from "./worker-sandbox.js";

const cacheDir = mkdtempSync(join(tmpdir(), "cordon-worker-"));
const WORLD = `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`;
const IMPORT = `(import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))`;

async function sandboxFor(bytes: Uint8Array, limits = {}) {
  const component = await loadComponentBytes("guest.wasm", bytes, { cacheDir });
  // Generous by default: a worker's first start on a loaded two-core machine can take a while.
  return watchSandbox(new WorkerSandbox(component, { ...DEFAULT_LIMITS, receiveTimeoutMs: 5_000, startTimeoutMs: 10_000, ...limits }));
}

describe("WorkerSandbox", () => {
  it("delivers in order and returns every output, pipelined", async () => {
    const s = await sandboxFor(await echoComponent("utf16"));
    await s.started;
    for (let i = 0; i < 200; i++) s.sandbox.deliver(`{"n":${i}}`);
    await expect.poll(() => s.outputs.length).toBe(200);
    expect(s.outputs).toEqual(Array.from({ length: 200 }, (_, i) => `{"n":${i}}`));
    await s.sandbox.stop();
  });

  it("posts what one routing step delivers to a busy worker as one batch, in order", async () => {
    const s = await sandboxFor(await echoComponent("utf16"));
    await s.started;
    const posts = vi.spyOn(Worker.prototype, "postMessage");
    try {
      // The first goes at once (no worker is busy); the other 199 wait for the step's end and go together.
      for (let i = 0; i < 200; i++) s.sandbox.deliver(`{"n":${i}}`);
      await expect.poll(() => s.outputs.length).toBe(200);
      const batches = posts.mock.calls.map(([request]) => (request as { messages: string[] }).messages.length);
      expect(batches.reduce((a, b) => a + b, 0)).toBe(200);
      expect(batches.length).toBeLessThanOrEqual(2); // [1, 199] when no other worker of this process is busy
    } finally {
      posts.mockRestore();
    }
    expect(s.outputs).toEqual(Array.from({ length: 200 }, (_, i) => `{"n":${i}}`));
    await s.sandbox.stop();
  });

  it("resumed with deliveries waiting and every worker idle, sends them all, in order", async () => {
    const s = await sandboxFor(await echoComponent("utf16"));
    await s.started;
    s.sandbox.pause();
    for (let i = 0; i < 5; i++) s.sandbox.deliver(`{"n":${i}}`);
    s.sandbox.resume();
    await expect.poll(() => s.outputs.length).toBe(5);
    expect(s.outputs).toEqual(Array.from({ length: 5 }, (_, i) => `{"n":${i}}`));
    await s.sandbox.stop();
  });

  it("a pause holds a busy worker between two deliveries of a batch; resume sends the rest, in order", async () => {
    // An echo that spins ~5–10 ms per message, so the pause lands while the batch is running (at 3 M
    // iterations, ~1 ms here, a busy CI machine saw all 50 arrive before its poll saw the first).
    const reset = "(global.set $next (i32.const 1024))";
    const spin =
      "(global.set $spin (i32.const 15000000)) (loop $l (global.set $spin (i32.sub (global.get $spin) (i32.const 1))) (br_if $l (global.get $spin)))";
    const slow = await buildComponent({
      wat: `(module ${IMPORT} (global $spin (mut i32) (i32.const 0)) ${ECHO_BODY.replace(reset, reset + spin)})`,
      wit: WORLD,
      encoding: "utf16",
    });
    const s = await sandboxFor(slow);
    await s.started;
    for (let i = 0; i < 50; i++) s.sandbox.deliver(`{"n":${i}}`);
    await expect.poll(() => s.outputs.length).toBeGreaterThan(0);
    s.sandbox.pause();
    // What was on its way when the pause came arrives (the delivery running then, and results the
    // worker held or had posted: more of them the busier this thread was), then nothing more:
    // without the hold the batch would run to its end (50 results in ~0.3–0.5 s).
    await new Promise((resolve) => setTimeout(resolve, 300));
    const held = s.outputs.length;
    expect(held).toBeLessThan(50);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(s.outputs.length).toBe(held);
    s.sandbox.resume();
    await expect.poll(() => s.outputs.length, { timeout: 5_000 }).toBe(50);
    expect(s.outputs).toEqual(Array.from({ length: 50 }, (_, i) => `{"n":${i}}`));
    await s.sandbox.stop();
  });

  it("terminates a guest that loops forever in receive", async () => {
    const loop = await buildComponent({
      wat: `(module ${IMPORT} ${ECHO_BODY.replace("(global.set $next (i32.const 1024))", "(loop $spin (br $spin))")})`,
      wit: WORLD,
    });
    const s = await sandboxFor(loop, { receiveTimeoutMs: 300 });
    await s.started;
    const t = Date.now();
    s.sandbox.deliver("{}");
    await s.died;
    expect(Date.now() - t).toBeGreaterThanOrEqual(250);
    expect(s.failure()).toEqual({ kind: "timeout", message: "receive did not return within 300 ms" });
  });

  it("refuses to start a guest that loops forever in its start function", async () => {
    const loop = await buildComponent({
      wat: `(module ${IMPORT} ${ECHO_BODY} (func $start (loop $spin (br $spin))) (start $start))`,
      wit: WORLD,
    });
    const s = await sandboxFor(loop, { startTimeoutMs: 1500 });
    await expect(s.started).rejects.toThrow("instantiation did not finish within 1500 ms");
  });

  it("reports a trap as a failure, once", async () => {
    const trap = await buildComponent({
      wat: `(module ${IMPORT} ${ECHO_BODY.replace("(global.set $next (i32.const 1024))", "unreachable")})`,
      wit: WORLD,
    });
    const s = await sandboxFor(trap);
    await s.started;
    s.sandbox.deliver("{}");
    s.sandbox.deliver("{}");
    await s.died;
    expect(s.failure()?.kind).toBe("trap");
    expect(s.failure()?.message).toMatch(/unreachable/);
  });

  it("a message larger than the worker's heap is sized for fails the proxy (named), not the process", async () => {
    const s = await sandboxFor(await echoComponent("utf16"));
    await s.started;
    const huge = "x".repeat(MAX_DELIVERED_UNITS + 1);
    s.sandbox.deliver(huge);
    await s.died;
    expect(s.failure()).toEqual({
      kind: "fault",
      message: `was given a message of ${MAX_DELIVERED_UNITS + 1} code units, more than its sandbox holds (${MAX_DELIVERED_UNITS}); raise its limits.maxMessageUnits`,
    });
  });
});
