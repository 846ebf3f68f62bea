import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildComponent, ECHO_BODY, echoComponent } from "../../test/fixtures/wat-components.js";
import { FORWARD_MARKER } from "../protocol/methods.js";
import { CanonicalHost, GuestFault, InstancePoisoned } from "./canonical-host.js";
import { loadComponentBytes } from "./component-loader.js";

const cacheDir = mkdtempSync(join(tmpdir(), "cordon-host-"));

async function host(bytes: Uint8Array, options: Partial<ConstructorParameters<typeof CanonicalHost>[1]> = {}) {
  const c = await loadComponentBytes("guest.wasm", bytes, { cacheDir });
  return new CanonicalHost(c.module, { encodings: c.encodings, ...options });
}

const tricky = JSON.stringify({ text: 'héllo wörld — 日本語 😀 \u0000 \ud83d\ude80 "quoted" \\ back', n: 1.5e3 });

describe("CanonicalHost", () => {
  for (const encoding of ["utf8", "utf16"] as const) {
    it(`copies strings both ways exactly with ${encoding} components (non-ASCII, astral, NUL)`, async () => {
      const h = await host(await echoComponent(encoding));
      expect(h.receive(tricky)).toEqual([tricky]);
      expect(h.receive("")).toEqual([""]);
      const big = "ü😀".repeat(40_000);
      expect(h.receive(big)).toEqual([big]);
    });

    it(`copies a message given as pieces exactly as the whole with ${encoding} components`, async () => {
      const h = await host(await echoComponent(encoding));
      const pieces = ['{"text":"', "ü😀".repeat(20_000), '","n":', "1.5e3", "", "}"];
      const whole = pieces.join("");
      expect(h.receive(whole, pieces)).toEqual([whole]);
      expect(h.receive(tricky, [tricky.slice(0, 9), tricky.slice(9)])).toEqual([tricky]);
    });
  }

  it("hands over the forward marker a guest writes, from any 2-aligned pointer, and nothing else for it", async () => {
    // The marker is compared where it lies in guest memory (a word at a time when 4-aligned).
    const near = [
      FORWARD_MARKER.replace("forward", "forwarD"),
      `${FORWARD_MARKER.slice(0, -1)} `,
      ` ${FORWARD_MARKER.slice(1)}`,
      "x".repeat(FORWARD_MARKER.length),
    ];
    const echo = await host(await echoComponent("utf16"));
    expect(echo.receive(FORWARD_MARKER)).toEqual([FORWARD_MARKER]);
    for (const text of near) expect(echo.receive(text)).toEqual([text]);
    // Sends what it was given without its first code unit: from a pointer 2 past a 4-aligned one.
    const shifted = await host(
      await buildComponent({
        wat: `(module (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))
          ${ECHO_BODY.replace("(call $send (local.get $ptr) (local.get $len))", "(call $send (i32.add (local.get $ptr) (i32.const 2)) (i32.sub (local.get $len) (i32.const 1)))")})`,
        wit: `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
        encoding: "utf16",
      }),
    );
    expect(shifted.receive(`-${FORWARD_MARKER}`)).toEqual([FORWARD_MARKER]);
    for (const text of near) expect(shifted.receive(`-${text}`)).toEqual([text]);
  });

  it("reads and writes guest memory after the guest grew it (the old view is detached)", async () => {
    // Grows by a page on every receive, between the host's copy in and its read of the send.
    const grower = await buildComponent({
      wat: `(module (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))
        ${ECHO_BODY.replace("(global.set $next (i32.const 1024))", "(global.set $next (i32.const 1024)) (drop (memory.grow (i32.const 1)))")})`,
      wit: `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
      encoding: "utf16",
    });
    const h = await host(grower);
    for (let i = 0; i < 3; i++) expect(h.receive(tricky)).toEqual([tricky]);
    expect(h.memoryBytes).toBe((16 + 3) * 65536);
  });

  it("poisons the instance after a trap", async () => {
    const trap = await buildComponent({
      wat: `(module (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))
        (memory (export "memory") 1)
        (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) i32.const 64)
        (func (export "cordon:proxy/handler@0.1.0#receive") (param i32 i32) unreachable))`,
      wit: `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
    });
    const h = await host(trap);
    expect(() => h.receive("{}")).toThrow(WebAssembly.RuntimeError);
    expect(() => h.receive("{}")).toThrow(InstancePoisoned);
  });

  it("refuses a string that points outside guest memory", async () => {
    const liar = await buildComponent({
      wat: `(module (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))
        (memory (export "memory") 1)
        (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) i32.const 64)
        (func (export "cordon:proxy/handler@0.1.0#receive") (param i32 i32)
          (call $send (i32.const 65000) (i32.const 1000))))`,
      wit: `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
    });
    const h = await host(liar);
    expect(() => h.receive("{}")).toThrow(GuestFault);
    expect(() => h.receive("{}")).toThrow(/dead after an earlier trap: guest string \[65000, 66000\) lies outside/);
  });

  it("caps what one delivery may produce", async () => {
    const chatty = await buildComponent({
      wat: `(module (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))
        ${ECHO_BODY.replace("(call $send (local.get $ptr) (local.get $len))", "(loop $l (call $send (local.get $ptr) (local.get $len)) (br $l))")})`,
      wit: `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
    });
    const h = await host(chatty, { maxSendsPerReceive: 50 });
    expect(() => h.receive("{}")).toThrow(/more than 50 messages for one input/);
  });

  it("queues what the start function sends and hands it over first", async () => {
    const greeter = await buildComponent({
      wat: `(module (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))
        ${ECHO_BODY}
        (data (i32.const 16) "{\\"hello\\":1}")
        (func $start (call $send (i32.const 16) (i32.const 11)))
        (start $start))`,
      wit: `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
    });
    // The start function runs before the memory export exists, so sending from it is a fault.
    await expect(host(greeter)).rejects.toThrow(/from its start function, before its memory is exported/);
  });
});
