import { parse } from "@bytecodealliance/jco-transpile/wasm-tools";
import { describe, expect, it } from "vitest";
import { capMemory, MemoryCapError, PAGE_BYTES } from "./memory-cap.js";

const grower = (memory: string) =>
  parse(`(module ${memory}
    (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
    (func (export "pages") (result i32) (memory.size)))`);

async function instance(memory: string, cap: number) {
  const bytes = capMemory(await grower(memory), cap);
  const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>));
  return inst.exports as { grow(n: number): number; pages(): number; memory?: WebAssembly.Memory };
}

describe("capMemory", () => {
  it("adds a maximum to an unbounded memory: growth past the cap fails inside the guest", async () => {
    const g = await instance(`(memory (export "memory") 1)`, 16);
    expect(g.grow(15)).toBe(1);
    expect(g.pages()).toBe(16);
    expect(g.grow(1)).toBe(-1); // memory.grow reports failure; the guest decides (AssemblyScript aborts)
    expect(g.pages() * PAGE_BYTES).toBe(16 * PAGE_BYTES);
  });

  it("lowers a declared maximum above the cap and keeps one below it", async () => {
    const high = await instance(`(memory (export "memory") 1 65536)`, 8);
    expect(high.grow(8)).toBe(-1);
    expect(high.grow(7)).toBe(1);
    const low = await instance(`(memory (export "memory") 1 4)`, 8);
    expect(low.grow(4)).toBe(-1);
    expect(low.grow(3)).toBe(1);
  });

  it("refuses garbage, an initial size above the cap and an imported memory", async () => {
    expect(() => capMemory(new Uint8Array(0), 8)).toThrow(MemoryCapError);
    await expect(grower(`(memory 32)`).then((b) => capMemory(b, 16))).rejects.toThrow(
      /starts at 32 pages, above the cap of 16 pages \(1 MiB\)/,
    );
    const imported = await parse(`(module (import "env" "memory" (memory 1)))`);
    expect(() => capMemory(imported, 16)).toThrow(/imports its memory/);
  });

  it("leaves a module without memory unchanged", async () => {
    const bytes = await parse(`(module (func (export "f")))`);
    expect(capMemory(bytes, 4)).toEqual(bytes);
  });
});
