/**
 * How much work the SDK does per received code unit, counted in fuel (the thread sandbox's meter:
 * deterministic, so these are work counts, not timings). A big message is walked once: escapes in
 * its string values (a newline on every line of a file's text) must not send the scan a unit at a
 * time, nor make the dispatcher bring every member name to one spelling (names.ts), a second pass.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { CHANNEL_IMPORT, RECEIVE_EXPORT } from "../../runtime/sandbox/canonical-host.js";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { FUEL_EXPORT, instrumentFuel, START_EXPORT } from "../../runtime/sandbox/fuel.js";
import { loadExampleProxy } from "./harness.js";

const FULL = 10n ** 15n;

/** A metered instance of `component`'s core module: `fuelOf(text)` delivers `text` and returns the fuel its `receive` used. */
function metered(component: LoadedComponent): { fuelOf(text: string): bigint; sent: string[] } {
  const sent: string[] = [];
  let memory: WebAssembly.Memory | null = null;
  const module = new WebAssembly.Module(instrumentFuel(component.coreBytes, { startFuel: FULL }).bytes as Uint8Array<ArrayBuffer>);
  const ex = new WebAssembly.Instance(module, {
    [CHANNEL_IMPORT]: {
      send: (ptr: number, units: number) => sent.push(Buffer.from(memory!.buffer, ptr >>> 0, units * 2).toString("utf16le")),
    },
  }).exports as Record<string, unknown>;
  memory = ex.memory as WebAssembly.Memory;
  const fuel = ex[FUEL_EXPORT] as WebAssembly.Global;
  const realloc = ex.cabi_realloc as (a: number, b: number, c: number, d: number) => number;
  const receive = ex[RECEIVE_EXPORT] as (ptr: number, units: number) => void;
  (ex[START_EXPORT] as (() => void) | undefined)?.();
  const fuelOf = (text: string): bigint => {
    fuel.value = FULL;
    const ptr = realloc(0, 0, 2, text.length * 2) >>> 0;
    Buffer.from(memory!.buffer).write(text, ptr, text.length * 2, "utf16le");
    receive(ptr, text.length);
    return FULL - (fuel.value as bigint);
  };
  fuelOf(JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "p", config: {} } }));
  return { fuelOf, sent };
}

/** A client's `session/prompt` whose one text block is `text`. */
const prompt = (id: number, text: string) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId: "s1", prompt: [{ type: "text", text }] } });

let passthrough: LoadedComponent;
beforeAll(async () => {
  passthrough = await loadExampleProxy("passthrough");
});

describe("a big message is scanned once", () => {
  // ~100 KB of prose: its JSON text has an escape (`\n`) every 62 code units. Without them (two
  // spaces instead, the same length) it is the same work for a scan that walks it once.
  const LINES = "The quick brown fox jumps over the lazy dog, again and again.\n".repeat(1_640);
  const FLAT = LINES.replaceAll("\n", "  ");

  it("costs about the same with an escape on every line as without", () => {
    const guest = metered(passthrough);
    const escaped = prompt(1, LINES);
    const flat = prompt(1, FLAT);
    expect(escaped.length).toBe(flat.length);
    guest.fuelOf(escaped); // first-use allocations out of the way
    const withEscapes = guest.fuelOf(escaped);
    const forwarded = guest.sent.at(-1)!;
    const without = guest.fuelOf(flat);
    // A unit-at-a-time walk from the first escape on, and the names pass it used to trigger, made
    // it 2.7 times the work (9.14 M units against 3.41 M; now 2.73 M against 2.53 M).
    expect(Number(withEscapes) / Number(without)).toBeLessThan(1.25);
    // And it is forwarded untouched: the envelope's params are the prompt's own text.
    expect(forwarded).toContain(escaped.slice(escaped.indexOf('"params":') + 9, -1));
  });

  it("costs about what plain text of the same length does, with two escapes in every six units (issue 20's P3 prompt)", () => {
    const guest = metered(passthrough);
    const dense = prompt(1, 'x"ü\n'.repeat(25_000)); // `x\"ü\n` in the JSON text
    const plain = prompt(1, "x".repeat(JSON.stringify('x"ü\n'.repeat(25_000)).length - 2));
    expect(dense.length).toBe(plain.length);
    guest.fuelOf(dense);
    const withEscapes = guest.fuelOf(dense);
    const forwarded = guest.sent.at(-1)!;
    const without = guest.fuelOf(plain);
    // Four units at a time up to each escape it was 9.37 M units against 3.57 M (62 per code unit);
    // 64 at a time whatever the escapes (string-scan.ts) 1.61 M against 1.84 M (10.7 per unit, 8
    // of them the two copies this harness counts: into the string `cabi_realloc` made, and out).
    expect(Number(withEscapes) / Number(without)).toBeLessThan(1.25);
    expect(Number(withEscapes) / dense.length).toBeLessThan(16);
    expect(forwarded.includes(dense.slice(dense.indexOf('"params":') + 9, -1))).toBe(true);
  });
});
