import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { componentWit } from "@bytecodealliance/jco-transpile/wasm-tools";
import { describe, expect, it } from "vitest";
import { echoComponent, foreignImportComponent, noHandlerComponent, wasiComponent } from "../../test/fixtures/wat-components.js";
import { ROOT } from "../../test/helpers/paths.js";
import { readComponentWorld } from "./component-world.js";
import { encodeU32 } from "./wasm-binary.js";

/** The world's names as wasm-tools (jco's build of it: software nobody here wrote) prints them in WIT. */
async function witItems(bytes: Uint8Array) {
  const items = { imports: [] as string[], exports: [] as string[] };
  for (const line of (await componentWit(bytes)).split("\n")) {
    const m = /^\s*(import|export)\s+([^;{]+?)\s*[;{]/.exec(line);
    if (m) (m[1] === "import" ? items.imports : items.exports).push(m[2]);
  }
  return items;
}

const PREAMBLE = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
const utf8 = (s: string) => [...new TextEncoder().encode(s)];
const name = (s: string) => [...encodeU32(utf8(s).length), ...utf8(s)];
/** A component of one section with the given id and body. */
const component = (id: number, body: number[]) => new Uint8Array([...PREAMBLE, id, ...encodeU32(body.length), ...body]);
/** An import section with one import of instance type 0 under `nameBytes`. */
const oneImport = (nameBytes: number[], desc = [0x05, 0x00]) => component(10, [1, ...nameBytes, ...desc]);

describe("readComponentWorld", () => {
  it("reads the same imports and exports as wasm-tools, for every example proxy and fixture", async () => {
    const dir = join(ROOT, "proxies", "dist");
    const files = readdirSync(dir).filter((f) => f.endsWith(".wasm"));
    expect(files.length).toBeGreaterThan(3);
    const binaries = [
      ...files.map((f) => readFileSync(join(dir, f))),
      await echoComponent("utf16"),
      await wasiComponent(),
      await foreignImportComponent(),
      await noHandlerComponent(),
    ];
    for (const bytes of binaries) expect(readComponentWorld(bytes)).toEqual(await witItems(bytes));
    expect(readComponentWorld(await foreignImportComponent()).imports).toEqual(["acme:net/sockets@1.0.0", "cordon:proxy/channel@0.1.0"]);
  });

  it("reads every extern kind and both name forms with options", () => {
    const imports = [
      [0x00, ...name("a"), 0x00, 0x11, 0x00], // core module
      [0x00, ...name("b"), 0x01, 0x00], // func
      [0x00, ...name("c"), 0x02, 0x01, 0x73], // value of a primitive type
      [0x00, ...name("d"), 0x03, 0x01], // type: sub resource
      [0x01, ...name("e"), 0x04, 0x00], // component
      [0x02, ...name("f:g/h"), 2, 0x00, ...name("f:g/i"), 0x01, ...name("1.0.0"), 0x05, 0x00], // instance, with options
    ];
    expect(readComponentWorld(component(10, [imports.length, ...imports.flat()])).imports).toEqual(["a", "b", "c", "d", "e", "f:g/h"]);
    const exports = [0x00, ...name("x:y/z@0.1.0"), 0x05, 0x00, 0x01, 0x05, 0x00]; // instance 0, ascribed a type
    expect(readComponentWorld(component(11, [1, ...exports])).exports).toEqual(["x:y/z@0.1.0"]);
  });

  it("refuses what it cannot read instead of skipping it, naming the problem", () => {
    const core = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    expect(() => readComponentWorld(core)).toThrow(/this is a core module; build it into a component/);
    expect(() => readComponentWorld(new Uint8Array([1, 2, 3, 4]))).toThrow(/not a WebAssembly binary/);
    const otherVersion = component(10, [0]);
    otherVersion[4] = 0x0c;
    expect(() => readComponentWorld(otherVersion)).toThrow(/binary version 0xc is not the one Cordon reads/);
    expect(() => readComponentWorld(oneImport([0x03, ...name("x")]))).toThrow(/import name of unknown form 0x3/);
    expect(() => readComponentWorld(oneImport([0x02, ...name("x"), 1, 0x09, ...name("y")]))).toThrow(
      /import x has an unknown name option 0x9/,
    );
    expect(() => readComponentWorld(oneImport([0x00, ...name("x")], [0x07, 0x00]))).toThrow(/extern x is of unknown kind 0x7/);
    expect(() => readComponentWorld(oneImport([0x00, ...name("x")], [0x00, 0x10, 0x00]))).toThrow(/extern x is malformed/);
    expect(() => readComponentWorld(oneImport([0x00, 0x01, 0xff]))).toThrow(/not UTF-8/);
    // Two imports announced, one present; a stray byte after the last; a name longer than its section.
    expect(() => readComponentWorld(component(10, [2, 0x00, ...name("x"), 0x05, 0x00]))).toThrow(/truncated/);
    expect(() => readComponentWorld(component(10, [1, 0x00, ...name("x"), 0x05, 0x00, 0x00]))).toThrow(/import section is malformed/);
    expect(() => readComponentWorld(component(10, [1, 0x00, 0x7f, 0x61]))).toThrow(/truncated/);
    expect(() => readComponentWorld(component(11, [1, 0x00, ...name("x"), 0x05, 0x00, 0x02]))).toThrow(/export x is malformed/);
  });
});
