import { createHash } from "node:crypto";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { echoComponent, foreignImportComponent, noHandlerComponent, wasiComponent } from "../../test/fixtures/wat-components.js";
import { CHANNEL_IMPORT } from "./canonical-host.js";
import {
  ComponentRejected,
  coreModules,
  forgetLoadedComponents,
  loadComponent,
  loadComponentBytes,
  MAX_COMPONENT_BYTES,
} from "./component-loader.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "cordon-loader-"));
});

describe("loadComponent", () => {
  it("validates a component, reads its encodings and caches what it found by SHA-256 (no code: the entry points into the component)", async () => {
    const cacheDir = join(dir, "cache-a");
    const path = join(dir, "echo16.wasm");
    writeFileSync(path, await echoComponent("utf16"));
    const first = await loadComponent(path, { cacheDir });
    expect(first.cached).toBe(false);
    expect(first.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(first.encodings).toEqual({ receive: "utf16", send: "utf16" });
    expect(first.imports).toEqual([CHANNEL_IMPORT]);
    expect(first.exports).toEqual(["cordon:proxy/handler@0.1.0"]);
    expect(readdirSync(cacheDir)).toEqual([`${first.sha256}.json`]);
    const entry = JSON.parse(readFileSync(join(cacheDir, `${first.sha256}.json`), "utf8"));
    const core = coreModules(readFileSync(path))[entry.core.index];
    expect(entry).toMatchObject({ format: 2, sha256: first.sha256, core: { sha256: sha(core) } });
    expect(new Uint8Array(first.coreBytes)).toEqual(new Uint8Array(core));
    // Private: the directory is created 0700, the entry 0600.
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(cacheDir, `${first.sha256}.json`)).mode & 0o777).toBe(0o600);
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
    await expect(loadComponentBytes("junk.wasm", new Uint8Array([1, 2, 3, 4]), { cacheDir: join(dir, "f") })).rejects.toThrow(
      ComponentRejected,
    );
    const core = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    await expect(loadComponentBytes("core.wasm", core, { cacheDir: join(dir, "f") })).rejects.toThrow(
      /core module; build it into a component/,
    );
    // A component whose core module V8 would not compile (its magic number broken).
    const broken = await echoComponent("utf8");
    const first = coreModules(broken)[0];
    broken[first.byteOffset - broken.byteOffset] = 0xff;
    await expect(loadComponentBytes("broken.wasm", broken, { cacheDir: join(dir, "f") })).rejects.toThrow(
      /broken\.wasm cannot run as a Cordon proxy: its core module #0 is not valid WebAssembly/,
    );
    await expect(loadComponent(join(dir, "missing.wasm"))).rejects.toThrow(
      /missing\.wasm cannot run as a Cordon proxy: cannot read it \(ENOENT\)/,
    );
  });

  it("does not trust a tampered cache entry: the code always comes from the component's own bytes", async () => {
    const cacheDir = join(dir, "cache-g");
    const bytes = await echoComponent("utf16");
    const first = await loadComponentBytes("x.wasm", bytes, { cacheDir });
    const entryFile = join(cacheDir, `${first.sha256}.json`);
    const good = JSON.parse(readFileSync(entryFile, "utf8"));
    const { parse } = await import("@bytecodealliance/jco-transpile/wasm-tools");
    // Other code, importing nothing forbidden: it would pass checkCoreModule, so only the binding stops it.
    const evil = await parse(`(module (import "cordon:proxy/channel@0.1.0" "send" (func (param i32 i32)))
      (memory (export "memory") 1) (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) i32.const 0)
      (func (export "cordon:proxy/handler@0.1.0#receive") (param i32 i32)) (func (export "evil")))`);
    const tampered = [
      // The old layout: a planted core module file and an entry that claims it.
      { sha256: first.sha256, encodings: first.encodings, imports: first.imports, exports: first.exports, manifest: null },
      // The new layout, pointing at the planted module's hash, or at another module of the component.
      { ...good, core: { index: good.core.index, sha256: sha(evil) } },
      { ...good, core: { index: good.core.index + 1, sha256: good.core.sha256 } },
      // An entry for another component, renamed.
      { ...good, sha256: "0".repeat(64) },
      // A world that hides what the code imports.
      { ...good, imports: [] },
    ];
    for (const entry of tampered) {
      writeFileSync(join(cacheDir, `${first.sha256}.core.wasm`), evil);
      writeFileSync(entryFile, JSON.stringify(entry));
      forgetLoadedComponents();
      const again = await loadComponentBytes("x.wasm", bytes, { cacheDir });
      expect(again.cached, JSON.stringify(entry)).toBe(false); // the entry was ignored and rebuilt from the component itself
      expect(WebAssembly.Module.exports(again.module).map((e) => e.name)).not.toContain("evil");
      expect(new Uint8Array(again.coreBytes)).toEqual(new Uint8Array(first.coreBytes));
      expect(JSON.parse(readFileSync(entryFile, "utf8"))).toEqual(good);
    }
  });

  it("reads the manifest and encodings from the component, not from the cache", async () => {
    const cacheDir = join(dir, "cache-h");
    const bytes = await echoComponent("utf8");
    const first = await loadComponentBytes("m.wasm", bytes, { cacheDir });
    const entryFile = join(cacheDir, `${first.sha256}.json`);
    const entry = JSON.parse(readFileSync(entryFile, "utf8"));
    writeFileSync(
      entryFile,
      JSON.stringify({ ...entry, manifest: { name: "trusted-redactor" }, encodings: { receive: "utf16", send: "utf16" } }),
    );
    forgetLoadedComponents();
    const again = await loadComponentBytes("m.wasm", bytes, { cacheDir });
    expect(again.cached).toBe(true);
    expect(again.manifest).toBeNull();
    expect(again.encodings).toEqual({ receive: "utf8", send: "utf8" });
  });

  it("refuses a cache directory others can write, or another user owns: validates in memory, caches nothing, says so once", async () => {
    const bytes = await echoComponent("utf16");
    const shared = join(dir, "cache-shared");
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const warnings: string[] = [];
    forgetLoadedComponents();
    const c = await loadComponentBytes("s.wasm", bytes, { cacheDir: shared, warn: (line) => warnings.push(line) });
    expect(c.cached).toBe(false);
    expect(readdirSync(shared)).toEqual([]);
    forgetLoadedComponents();
    await loadComponentBytes("s.wasm", bytes, { cacheDir: shared, warn: (line) => warnings.push(line) });
    expect(warnings).toEqual([
      `component cache ${shared} is writable by others (mode 0777); not using it (components are validated in memory on every start; make it a directory of yours with mode 0700 to cache again)`,
    ]);
    const group = join(dir, "cache-group");
    mkdirSync(group);
    chmodSync(group, 0o770);
    await expect(loadComponentBytes("s.wasm", bytes, { cacheDir: group, warn: (line) => warnings.push(line) })).resolves.toBeTruthy();
    expect(warnings[1]).toMatch(/cache-group is writable by its group \(mode 0770\); not using it/);
    if (process.getuid?.() === 0) {
      const foreign = join(dir, "cache-foreign");
      mkdirSync(foreign, { mode: 0o700 });
      chownSync(foreign, 65534, 65534);
      await loadComponentBytes("s.wasm", bytes, { cacheDir: foreign, warn: (line) => warnings.push(line) });
      expect(warnings[2]).toMatch(/cache-foreign is owned by another user \(uid 65534\); not using it/);
      expect(readdirSync(foreign)).toEqual([]);
    }
  });

  it("refuses a component file larger than it loads, before reading it", async () => {
    const path = join(dir, "huge.wasm");
    writeFileSync(path, "");
    const { truncateSync } = await import("node:fs");
    truncateSync(path, MAX_COMPONENT_BYTES + 1);
    await expect(loadComponent(path, { cacheDir: join(dir, "i") })).rejects.toThrow(
      /huge\.wasm cannot run as a Cordon proxy: it is 64\.0 MiB, larger than the 64 MiB Cordon loads/,
    );
  });
});

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
