import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildComponent } from "../../test/fixtures/wat-components.js";
import { CanonicalHost } from "./canonical-host.js";
import { ComponentRejected, loadComponentBytes } from "./component-loader.js";

const cacheDir = mkdtempSync(join(tmpdir(), "cordon-wasi-"));

/** A guest that reads the wall clock and two random u64s and reports what it saw. */
const clockAndRandom = (encoding: "utf8" | "utf16" = "utf8") =>
  buildComponent({
    encoding,
    wat: `(module
      (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))
      (import "wasi:clocks/wall-clock@0.2.0" "now" (func $now (param i32)))
      (import "wasi:random/random@0.2.0" "get-random-u64" (func $rand (result i64)))
      (import "wasi:random/random@0.2.0" "get-random-bytes" (func $bytes (param i64 i32)))
      (memory (export "memory") 2)
      (global $next (mut i32) (i32.const 4096))
      (data (i32.const 100) "clock-ok")
      (data (i32.const 120) "clock-bad")
      (data (i32.const 140) "random-ok")
      (data (i32.const 160) "random-bad")
      (data (i32.const 180) "bytes-ok")
      (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
        (local $p i32) (local.set $p (global.get $next))
        (global.set $next (i32.add (global.get $next) (i32.and (i32.add (local.get 3) (i32.const 7)) (i32.const -8))))
        (local.get $p))
      (func (export "cordon:proxy/handler@0.1.0#receive") (param i32 i32)
        (call $now (i32.const 16))
        (if (i64.gt_u (i64.load (i32.const 16)) (i64.const 1700000000))
          (then (call $send (i32.const 100) (i32.const 8)))
          (else (call $send (i32.const 120) (i32.const 9))))
        (if (i64.ne (call $rand) (call $rand))
          (then (call $send (i32.const 140) (i32.const 9)))
          (else (call $send (i32.const 160) (i32.const 10))))
        (call $bytes (i64.const 32) (i32.const 48))
        (if (i32.eq (i32.load (i32.const 52)) (i32.const 32))
          (then (call $send (i32.const 180) (i32.const 8))))))`,
    wit: `package wasi:clocks@0.2.0 { interface wall-clock { record datetime { seconds: u64, nanoseconds: u32 } now: func() -> datetime; } }
      package wasi:random@0.2.0 { interface random { get-random-bytes: func(len: u64) -> list<u8>; get-random-u64: func() -> u64; } }
      world guest { import wasi:clocks/wall-clock@0.2.0; import wasi:random/random@0.2.0; import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
  });

describe("WASI grants", () => {
  it("reads a utf16 component whose WASI lowers (no strings) declare no encoding", async () => {
    const c = await loadComponentBytes("timer16.wasm", await clockAndRandom("utf16"), { cacheDir, grants: ["wasi:clocks", "wasi:random"] });
    expect(c.encodings).toEqual({ receive: "utf16", send: "utf16" });
  });

  it("refuses the clock and randomness unless granted, naming the grant", async () => {
    const bytes = await clockAndRandom();
    await expect(loadComponentBytes("timer.wasm", bytes, { cacheDir })).rejects.toThrow(ComponentRejected);
    await expect(loadComponentBytes("timer.wasm", bytes, { cacheDir })).rejects.toThrow(
      /imports the WASI interface wasi:clocks\/wall-clock@0\.2\.0, which needs the "wasi:clocks" grant/,
    );
    await expect(loadComponentBytes("timer.wasm", bytes, { cacheDir, grants: ["wasi:clocks"] })).rejects.toThrow(/"wasi:random" grant/);
  });

  it("provides them through preview2-shim when granted: a real clock, real randomness", async () => {
    const grants = ["wasi:clocks", "wasi:random"];
    const c = await loadComponentBytes("timer.wasm", await clockAndRandom(), { cacheDir, grants });
    const host = new CanonicalHost(c.module, { encodings: c.encodings, grants });
    expect(host.receive("{}")).toEqual(["clock-ok", "random-ok", "bytes-ok"]);
    // Without the grants the same module cannot even be instantiated by the host.
    expect(() => new CanonicalHost(c.module, { encodings: c.encodings })).toThrow(/imports wasi:clocks\/wall-clock@0\.2\.0#now/);
  });
});
