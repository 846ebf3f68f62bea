import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { echoComponent, foreignImportComponent, noHandlerComponent, wasiComponent } from "../../test/fixtures/wat-components.js";
import { CHANNEL_IMPORT, checkCoreModule } from "./canonical-host.js";
import { ComponentRejected, forgetLoadedComponents, loadComponent, loadComponentBytes, parseWorldItems } from "./component-loader.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "cordon-loader-"));
});

describe("loadComponent", () => {
  it("validates a component, reads its encodings and caches the unpacked core module by SHA-256", async () => {
    const cacheDir = join(dir, "cache-a");
    const path = join(dir, "echo16.wasm");
    writeFileSync(path, await echoComponent("utf16"));
    const first = await loadComponent(path, { cacheDir });
    expect(first.cached).toBe(false);
    expect(first.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(first.encodings).toEqual({ receive: "utf16", send: "utf16" });
    expect(first.imports).toEqual([CHANNEL_IMPORT]);
    expect(first.exports).toEqual(["cordon:proxy/handler@0.1.0"]);
    expect(readdirSync(cacheDir).sort()).toEqual([`${first.sha256}.core.wasm`, `${first.sha256}.json`]);
    const imports = WebAssembly.Module.imports(first.module).map((i) => `${i.module}#${i.name}`);
    expect(imports).toEqual([`${CHANNEL_IMPORT}#send`]);
  });

  it("serves a second process's load from the disk cache", async () => {
    const cacheDir = join(dir, "cache-b");
    const bytes = await echoComponent("utf8");
    await loadComponentBytes("a.wasm", bytes, { cacheDir });
    forgetLoadedComponents(); // as a fresh process would
    const again = await loadComponentBytes("b.wasm", bytes, { cacheDir });
    expect(again.cached).toBe(true);
    expect(again.encodings).toEqual({ receive: "utf8", send: "utf8" });
  });

  it("refuses a component that imports a WASI interface, naming the import", async () => {
    const bytes = await wasiComponent();
    await expect(loadComponentBytes("env-reader.wasm", bytes, { cacheDir: join(dir, "c") })).rejects.toThrow(
      /env-reader\.wasm cannot run as a Cordon proxy: it imports the WASI interface wasi:cli\/environment@0\.2\.0, which Cordon does not provide/,
    );
  });

  it("refuses any other foreign import and a missing handler export", async () => {
    await expect(loadComponentBytes("net.wasm", await foreignImportComponent(), { cacheDir: join(dir, "d") })).rejects.toThrow(
      /imports acme:net\/sockets@1\.0\.0, which Cordon does not provide; a proxy may import only cordon:proxy\/channel@0\.1\.0/,
    );
    await expect(loadComponentBytes("mute.wasm", await noHandlerComponent(), { cacheDir: join(dir, "e") })).rejects.toThrow(
      /does not export cordon:proxy\/handler@0\.1\.0/,
    );
  });

  it("refuses garbage, a core module, and a missing file with clear errors", async () => {
    await expect(loadComponentBytes("junk.wasm", new Uint8Array([1, 2, 3, 4]), { cacheDir: join(dir, "f") })).rejects.toThrow(ComponentRejected);
    const core = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    await expect(loadComponentBytes("core.wasm", core, { cacheDir: join(dir, "f") })).rejects.toThrow(/core module; build it into a component/);
    await expect(loadComponent(join(dir, "missing.wasm"))).rejects.toThrow(/missing\.wasm cannot run as a Cordon proxy: cannot read it \(ENOENT\)/);
  });

  it("does not trust a tampered cache entry: the core module is checked on every load", async () => {
    const cacheDir = join(dir, "cache-g");
    const bytes = await echoComponent("utf16");
    const first = await loadComponentBytes("x.wasm", bytes, { cacheDir });
    const { parse } = await import("@bytecodealliance/jco-transpile/wasm-tools");
    const wasiCore = await parse(
      `(module (import "wasi:cli/environment@0.2.0" "get-environment" (func (param i32))) (memory (export "memory") 1))`,
    );
    expect(() => checkCoreModule(new WebAssembly.Module(wasiCore as Uint8Array<ArrayBuffer>))).toThrow(/imports wasi:cli\/environment@0\.2\.0#get-environment/);
    writeFileSync(join(cacheDir, `${first.sha256}.core.wasm`), wasiCore);
    forgetLoadedComponents();
    const again = await loadComponentBytes("x.wasm", bytes, { cacheDir });
    expect(again.cached).toBe(false); // the bad entry was ignored and rebuilt from the component itself
    expect(WebAssembly.Module.imports(again.module).map((i) => i.module)).toEqual([CHANNEL_IMPORT]);
    expect(new Uint8Array(readFileSync(join(cacheDir, `${first.sha256}.core.wasm`)))).toEqual(new Uint8Array(again.coreBytes));
  });
});

describe("parseWorldItems", () => {
  it("reads imports and exports from jco's WIT text", () => {
    const wit = `package root:component;\n\nworld root {\n  import wasi:io/streams@0.2.0;\n  import cordon:proxy/channel@0.1.0;\n\n  export cordon:proxy/handler@0.1.0;\n}\n`;
    expect(parseWorldItems(wit)).toEqual({
      imports: ["wasi:io/streams@0.2.0", "cordon:proxy/channel@0.1.0"],
      exports: ["cordon:proxy/handler@0.1.0"],
    });
  });
});
