import { parse } from "@bytecodealliance/jco-transpile/wasm-tools";
import { describe, expect, it } from "vitest";
import { capModule, ModuleCapError } from "./module-caps.js";

const CAPS = { maxMemoryPages: 16, maxTableElements: 1000 };

async function tables(decl: string, caps = CAPS) {
  const bytes = capModule(
    await parse(`(module ${decl}
      (func (export "grow") (param i32) (result i32) (table.grow 0 (ref.null func) (local.get 0)))
      (func (export "size") (result i32) (table.size 0)))`),
    caps,
  );
  return new WebAssembly.Instance(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>)).exports as {
    grow(n: number): number;
    size(): number;
  };
}

describe("capModule: tables", () => {
  it("adds a maximum to an unbounded table: growth by millions fails inside the guest instead of allocating", async () => {
    const t = await tables(`(table 1 funcref)`);
    expect(t.grow(10_000_000)).toBe(-1);
    expect(t.size()).toBe(1);
    expect(t.grow(999)).toBe(1);
    expect(t.size()).toBe(1000);
    expect(t.grow(1)).toBe(-1);
  });

  it("lowers a declared maximum above the cap and keeps one below it", async () => {
    const high = await tables(`(table 1 10000000 funcref)`);
    expect(high.grow(1000)).toBe(-1);
    expect(high.grow(999)).toBe(1);
    const low = await tables(`(table 1 10 funcref)`);
    expect(low.grow(10)).toBe(-1);
    expect(low.grow(9)).toBe(1);
  });

  it("caps every table, externref ones too", async () => {
    const bytes = capModule(
      await parse(`(module (table 1 funcref) (table $e 0 externref)
        (func (export "grow") (param i32) (result i32) (table.grow $e (ref.null extern) (local.get 0))))`),
      CAPS,
    );
    const e = new WebAssembly.Instance(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>)).exports as { grow(n: number): number };
    expect(e.grow(5_000_000)).toBe(-1);
    expect(e.grow(1000)).toBe(0);
  });

  it("refuses a table that starts above the cap, too many tables, and imported tables, globals and memories", async () => {
    await expect(parse(`(module (table 5000 funcref))`).then((b) => capModule(b, CAPS))).rejects.toThrow(
      /the guest's table 0 starts at 5000 elements, above the cap of 1000/,
    );
    const many = await parse(`(module ${"(table 0 funcref) ".repeat(9)})`);
    expect(() => capModule(many, CAPS)).toThrow(/defines 9 tables; at most 8 are allowed/);
    expect(() => capModule(many, { ...CAPS, maxTables: 9 })).not.toThrow();
    expect(() => capModule(new Uint8Array([1, 2]), CAPS)).toThrow(ModuleCapError);
    const importedTable = await parse(`(module (import "env" "t" (table 1 funcref)))`);
    expect(() => capModule(importedTable, CAPS)).toThrow(/imports a table; a proxy must define its own/);
    const importedGlobal = await parse(`(module (import "env" "g" (global i32)) (memory 1))`);
    expect(() => capModule(importedGlobal, CAPS)).toThrow(/imports a global; a proxy may import only functions/);
    const importedMemory = await parse(`(module (import "env" "f" (func)) (import "env" "m" (memory 1)))`);
    expect(() => capModule(importedMemory, CAPS)).toThrow(/imports its memory/);
  });

  it("leaves tables alone when no table cap is given, and keeps function imports", async () => {
    const bytes = await parse(`(module (import "env" "f" (func)) (table 1 funcref))`);
    expect(capModule(bytes, { maxMemoryPages: 16 })).toEqual(bytes);
    const capped = capModule(bytes, CAPS);
    expect(WebAssembly.Module.imports(new WebAssembly.Module(capped as Uint8Array<ArrayBuffer>))).toEqual([
      { module: "env", name: "f", kind: "function" },
    ]);
  });

  it("rewrites memory and tables in one module", async () => {
    const bytes = capModule(
      await parse(`(module (table 1 funcref) (memory (export "memory") 1)
        (func (export "mem") (param i32) (result i32) (memory.grow (local.get 0)))
        (func (export "tab") (param i32) (result i32) (table.grow 0 (ref.null func) (local.get 0))))`),
      CAPS,
    );
    const x = new WebAssembly.Instance(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>)).exports as {
      mem(n: number): number;
      tab(n: number): number;
    };
    expect(x.mem(16)).toBe(-1);
    expect(x.mem(15)).toBe(1);
    expect(x.tab(1000)).toBe(-1);
  });
});

describe("capModule: types", () => {
  it("refuses struct and array types (GC objects would live on the JS heap, uncapped), keeps function types with reference params", async () => {
    const gc = await parse(`(module (type (struct (field i32))) (type (array i8)))`);
    expect(() => capModule(gc, CAPS)).toThrow(/defines type 0 of form 0x5f \(struct, array or other garbage-collected types\)/);
    const funcs = await parse(
      `(module (type (func (param i32 externref funcref) (result i64))) (func (param (ref null func)) (result (ref null extern)) ref.null extern) (memory 1))`,
    );
    expect(() => capModule(funcs, CAPS)).not.toThrow();
    expect(() => new WebAssembly.Module(capModule(funcs, CAPS) as Uint8Array<ArrayBuffer>)).not.toThrow();
  });
});
