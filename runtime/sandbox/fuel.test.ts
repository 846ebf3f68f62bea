import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "@bytecodealliance/jco-transpile/wasm-tools";
import { describe, expect, it } from "vitest";
import { proxyWasm, ROOT } from "../../test/helpers/paths.js";
import { CanonicalHost, RECEIVE_EXPORT } from "./canonical-host.js";
import { loadComponentBytes } from "./component-loader.js";
import { FUEL_EXPORT, FuelUnsupported, instrumentFuel, isFuelTrap } from "./fuel.js";

const cacheDir = mkdtempSync(join(tmpdir(), "cordon-fuel-"));

async function meter(wat: string, startFuel = 1_000_000n, deliveryFuel = 1_000_000n, refillOn: string[] = ["run"]) {
  const fuel = instrumentFuel(await parse(wat), { startFuel, deliveryFuel, refillOn });
  const module = new WebAssembly.Module(fuel.bytes as Uint8Array<ArrayBuffer>);
  return { fuel, module };
}

function trapOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a trap");
}

describe("instrumentFuel (core modules)", () => {
  it("stops an infinite loop, and the trap is told apart from the guest's own", async () => {
    const { fuel, module } = await meter(`(module
      (import "env" "g" (global i32))
      (global $mine (mut i32) (i32.const 0))
      (func (export "run") (loop $l (global.set $mine (i32.add (global.get $mine) (i32.const 1))) (br $l)))
      (func (export "crash") unreachable))`);
    expect(fuel.fuelGlobal).toBe(2); // after the imported global and the module's own
    const inst = new WebAssembly.Instance(module, { env: { g: 1 } });
    const ex = inst.exports as { run(): void; crash(): void; [FUEL_EXPORT]: WebAssembly.Global };
    const t = performance.now();
    const stop = trapOf(() => ex.run());
    expect(performance.now() - t).toBeLessThan(2000);
    expect(isFuelTrap(stop, fuel.outOfFuelFunction)).toBe(true);
    expect(ex[FUEL_EXPORT].value).toBeLessThan(0n);
    // The guest's own unreachable is not a fuel trap.
    expect(
      isFuelTrap(
        trapOf(() => ex.crash()),
        fuel.outOfFuelFunction,
      ),
    ).toBe(false);
  });

  it("refills on each call of a refilling export: bounded work completes every time", async () => {
    const { module } = await meter(
      `(module (func (export "run") (param $n i32) (result i32) (local $i i32)
        (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1))) (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
        (local.get $i)))`,
      0n,
      10_000n,
    );
    const ex = new WebAssembly.Instance(module).exports as { run(n: number): number; [FUEL_EXPORT]: WebAssembly.Global };
    for (let i = 0; i < 5; i++) expect(ex.run(500)).toBe(500); // ~10 units per iteration
    expect(trapOf(() => ex.run(5_000))).toBeInstanceOf(WebAssembly.RuntimeError);
  });

  it("meters recursion through the function-entry check", async () => {
    const { fuel, module } = await meter(`(module (func $f (export "run") (call $f)))`, 1000n, 1000n);
    const ex = new WebAssembly.Instance(module).exports as { run(): void };
    expect(
      isFuelTrap(
        trapOf(() => ex.run()),
        fuel.outOfFuelFunction,
      ),
    ).toBe(true);
  });

  it("meters the start function with the start budget", async () => {
    const { fuel, module } = await meter(`(module (func $s (loop $l (br $l))) (start $s) (func (export "run")))`, 100_000n);
    expect(
      isFuelTrap(
        trapOf(() => new WebAssembly.Instance(module)),
        fuel.outOfFuelFunction,
      ),
    ).toBe(true);
  });

  it("decodes bulk memory, sign extension, saturating truncation, reference types, typed select and SIMD", async () => {
    const { module } = await meter(`(module
      (memory 1) (table $t 2 funcref) (elem declare func $id)
      (func $id (param i32) (result i32) (local.get 0))
      (func (export "run") (param $x i32) (result i32) (local $v v128)
        (memory.fill (i32.const 0) (i32.const 7) (i32.const 16))
        (memory.copy (i32.const 32) (i32.const 0) (i32.const 16))
        (local.set $v (v128.load (i32.const 32)))
        (local.set $v (i32x4.add (local.get $v) (v128.const i32x4 1 2 3 4)))
        (v128.store (i32.const 64) (local.get $v))
        (table.set $t (i32.const 0) (ref.func $id))
        (drop (ref.is_null (table.get $t (i32.const 0))))
        (i32.add
          (i32.add (i32.extend8_s (local.get $x)) (i32.trunc_sat_f32_s (f32.const 1e10)))
          (select (result i32) (i32x4.extract_lane 0 (local.get $v)) (i32.load (i32.const 68)) (i32.const 1)))))`);
    const ex = new WebAssembly.Instance(module).exports as { run(x: number): number };
    expect(ex.run(0xff)).toBe((-1 + 2147483647 + (0x07070707 + 1)) | 0);
  });

  it("refuses what it cannot decode instead of guessing", async () => {
    const wat = `(module (tag $e) (func (export "run") (try (do (throw $e)) (catch $e))))`;
    let bytes: Uint8Array;
    try {
      bytes = await parse(wat);
    } catch {
      return; // the parser here does not know legacy exceptions; nothing to check
    }
    expect(() => instrumentFuel(bytes, { startFuel: 1n, deliveryFuel: 1n, refillOn: [] })).toThrow(FuelUnsupported);
  });
});

describe("instrumentFuel on the real AssemblyScript proxies", () => {
  const proxies = readdirSync(join(ROOT, "proxies/dist")).filter((f) => f.endsWith(".wasm"));

  const prompt = (text: string, id = 1) =>
    JSON.stringify({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId: "s1", prompt: [{ type: "text", text }] } });
  const update = (text: string) =>
    JSON.stringify({
      jsonrpc: "2.0",
      method: "proxy/successor",
      params: {
        method: "session/update",
        params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
      },
    });
  const script = [
    JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "p", config: {} } }),
    JSON.stringify({ jsonrpc: "2.0", id: 0, method: "proxy/initialize", params: { protocolVersion: 1, clientCapabilities: {} } }),
    JSON.stringify({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 1, agentCapabilities: {} } }),
    JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } }),
    prompt("hello sk-abcdefghijklmnopqrstuvwxyz0123", 3),
    update("an answer with sk-abcdefghijklmnopqrstuvwxyz0123 in it"),
    prompt("x".repeat(100_000), 4),
  ];

  it.each(proxies)("%s: the metered module validates and answers exactly like the original", async (file) => {
    const bytes = new Uint8Array(readFileSync(join(ROOT, "proxies/dist", file)));
    const component = await loadComponentBytes(file, bytes, { cacheDir });
    const fuel = instrumentFuel(component.coreBytes, {
      startFuel: 10n ** 12n,
      deliveryFuel: 10n ** 12n,
      refillOn: [RECEIVE_EXPORT, "cabi_realloc"],
    });
    expect(fuel.checks).toBeGreaterThan(0);
    const metered = new CanonicalHost(new WebAssembly.Module(fuel.bytes as Uint8Array<ArrayBuffer>), { encodings: component.encodings });
    const plain = new CanonicalHost(component.module, { encodings: component.encodings });
    for (const message of script) expect(metered.receive(message)).toEqual(plain.receive(message));
  });

  it("overhead on passthrough.wasm is small (measured, printed)", async () => {
    const bytes = new Uint8Array(readFileSync(proxyWasm("passthrough")));
    const component = await loadComponentBytes("passthrough.wasm", bytes, { cacheDir });
    const fuel = instrumentFuel(component.coreBytes, {
      startFuel: 10n ** 12n,
      deliveryFuel: 10n ** 12n,
      refillOn: [RECEIVE_EXPORT, "cabi_realloc"],
    });
    const hosts = {
      plain: new CanonicalHost(component.module, { encodings: component.encodings }),
      metered: new CanonicalHost(new WebAssembly.Module(fuel.bytes as Uint8Array<ArrayBuffer>), { encodings: component.encodings }),
    };
    const per: Record<string, number> = { plain: Infinity, metered: Infinity };
    const m = update("hello");
    for (const host of Object.values(hosts)) {
      host.receive(script[0]);
      for (let i = 0; i < 20_000; i++) host.receive(m); // past tier-up
    }
    // Alternating rounds, best of each: the machine is shared, so take what each can do.
    for (let round = 0; round < 5; round++) {
      for (const [name, host] of Object.entries(hosts)) {
        const t = performance.now();
        for (let i = 0; i < 10_000; i++) host.receive(m);
        per[name] = Math.min(per[name], ((performance.now() - t) * 1000) / 10_000);
      }
    }
    console.log(
      `fuel overhead, passthrough receive: plain ${per.plain.toFixed(2)} µs, metered ${per.metered.toFixed(2)} µs (${(per.metered / per.plain).toFixed(2)}×)`,
    );
    expect(per.metered / per.plain).toBeLessThan(3);
  });
});
