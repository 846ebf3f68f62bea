/**
 * `cordon pack` on a proxy project as `cordon new` lays it out (private, dev dependencies, build
 * scripts): it runs the project's build, then writes a tarball whose package.json has none of
 * those, reproducibly; and it refuses, saying what to fix, a manifest version that is not the
 * package's and runtime dependencies.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readTarball } from "../runtime/distribution/tar-read.js";
import { CORDON, NODE, ROOT } from "./helpers/paths.js";

const cache = mkdtempSync(join(tmpdir(), "cordon-pack-cache-"));

function project(pkg: object): string {
  const dir = mkdtempSync(join(tmpdir(), "cordon-pack-"));
  // The repository's pass-through proxy as the project's source: its manifest says version 0.1.0.
  const cordon = { entry: join(ROOT, "proxies/passthrough/passthrough.ts"), out: join(ROOT, "proxies/dist/passthrough.wasm") };
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name: "@t/passthrough",
      version: "0.1.0",
      private: true,
      type: "module",
      license: "MIT",
      scripts: { build: "cordon-build-proxy", test: "cordon-test-proxy" },
      devDependencies: { "@cordon/sdk-as": "file:vendor/sdk.tgz" },
      cordon,
      ...pkg,
    }),
  );
  writeFileSync(join(dir, "README.md"), "# passthrough\n");
  return dir;
}

const pack = (dir: string, ...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(NODE, [CORDON, "pack", dir, ...args], { env: { ...process.env, XDG_CACHE_HOME: cache } }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

describe("cordon pack", { timeout: 120_000 }, () => {
  it("builds the project and writes an npm-pack-style tarball without its dev dependencies, scripts or private", async () => {
    const dir = project({});
    const packed = await pack(dir);
    expect(packed.code, packed.stderr).toBe(0);
    const file = join(dir, "t-passthrough-0.1.0.tgz");
    expect(packed.stdout).toContain(`packed @t/passthrough@0.1.0 → ${file}`);
    expect(packed.stdout).toContain(`publish: npm publish ${file}`);
    const first = readFileSync(file);
    const files = readTarball(first, "packed");
    expect([...files.keys()]).toEqual(["README.md", "package.json", "passthrough.wasm"]);
    expect(JSON.parse(Buffer.from(files.get("package.json")!).toString())).toEqual({
      name: "@t/passthrough",
      version: "0.1.0",
      license: "MIT",
      keywords: ["cordon-proxy"],
      cordon: { proxy: "passthrough.wasm" },
    });
    expect(Buffer.from(files.get("passthrough.wasm")!).equals(readFileSync(join(ROOT, "proxies/dist/passthrough.wasm")))).toBe(true);
    // Reproducible: packing again gives the same bytes.
    expect((await pack(dir, "--no-build")).code).toBe(0);
    expect(readFileSync(file).equals(first)).toBe(true);
  });

  it("refuses a manifest version that is not the package's, saying what to change", async () => {
    const packed = await pack(project({ version: "0.2.0" }), "--no-build");
    expect(packed.code).toBe(1);
    expect(packed.stderr).toContain('the manifest says version "0.1.0" but package.json says 0.2.0: make them equal');
  });

  it("refuses runtime dependencies: a proxy package carries one component", async () => {
    const packed = await pack(project({ dependencies: { "left-pad": "1.3.0" } }), "--no-build");
    expect(packed.code).toBe(1);
    expect(packed.stderr).toContain('package.json has "dependencies": a proxy package carries one component');
  });
});
