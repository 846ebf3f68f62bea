/**
 * What a proxy package is, checked from its tarball's bytes alone: the tarball read in memory
 * (`tar-read.ts`), its `package.json` naming the component (`"cordon": {"proxy": "x.wasm"}`), the
 * component checked as a load checks it (world, imports, core module, manifest), the manifest's
 * `version` equal to the package's, and its requested grants known by name and equal to any copy
 * in `package.json#cordon.grants`.
 *
 * The result is what the lock records: the `.wasm`'s sha256 and the authority this version
 * *requests* — its manifest's `grants` and the WASI its component imports. A package's
 * `dependencies`, `scripts` and `bin` are never run or installed; they only earn a warning.
 */
import { ComponentRejected, loadComponentBytes } from "../sandbox/component-loader.js";
import type { Manifest } from "../sandbox/manifest.js";
import { grantForInterface, WASI_GRANTS } from "../sandbox/wasi-grants.js";
import { sha256Hex } from "./digests.js";
import { PackageRefused } from "./errors.js";
import { KNOWN_GRANTS } from "./grant-names.js";
import { readTarball } from "./tar-read.js";

export interface Requested {
  /** The manifest's `grants`, sorted. */
  grants: string[];
  /** WASI grants the component's imports need, sorted. */
  wasi: string[];
}

export interface ProxyPackage {
  name: string;
  version: string;
  description?: string;
  /** The component's path inside the package. */
  wasmPath: string;
  wasm: Uint8Array;
  sha256: string;
  manifest: Manifest;
  requested: Requested;
  warnings: string[];
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/** Everything a version asks for, as one sorted list. */
export const requestedAuthority = (r: Requested) => sorted([...r.grants, ...r.wasi]);

/** Reads a `package.json` from a tarball's files; refuses what is not one. */
function packageJson(files: Map<string, Uint8Array>, what: string): Record<string, unknown> {
  const bytes = files.get("package.json");
  if (!bytes) throw new PackageRefused("EPACKAGE", `${what}: the tarball has no package.json`);
  try {
    const json = JSON.parse(Buffer.from(bytes).toString("utf8"));
    if (typeof json === "object" && json !== null && !Array.isArray(json)) return json;
  } catch {
    // reported below
  }
  throw new PackageRefused("EPACKAGE", `${what}: its package.json is not a JSON object`);
}

/**
 * Checks a proxy package tarball. `expected` (name, version) comes from the registry or the lock:
 * the tarball's own package.json must agree with it.
 */
export async function checkProxyPackage(tgz: Uint8Array, expected: { name: string; version: string }): Promise<ProxyPackage> {
  const what = `${expected.name}@${expected.version}`;
  const files = readTarball(tgz, what);
  const pkg = packageJson(files, what);
  if (pkg.name !== expected.name || pkg.version !== expected.version) {
    throw new PackageRefused("EPACKAGE", `${what}: its package.json says ${JSON.stringify(pkg.name)}@${JSON.stringify(pkg.version)}`);
  }
  const warnings = ["dependencies", "scripts", "bin"]
    .filter((k) => pkg[k] !== undefined && Object.keys(pkg[k] as object).length > 0)
    .map(
      (k) =>
        `${what}: its package.json has "${k}", which Cordon ignores (only the component is installed; nothing runs outside the sandbox)`,
    );
  const cordon = pkg.cordon as { proxy?: unknown; grants?: unknown } | undefined;
  if (typeof cordon?.proxy !== "string" || !cordon.proxy.endsWith(".wasm")) {
    throw new PackageRefused("EPACKAGE", `${what}: not a Cordon proxy package (its package.json needs "cordon": {"proxy": "<file>.wasm"})`);
  }
  const wasmPath = cordon.proxy.replace(/^\.\//, "");
  const wasm = files.get(wasmPath);
  if (!wasm)
    throw new PackageRefused(
      "EPACKAGE",
      `${what}: package.json names the proxy ${JSON.stringify(cordon.proxy)}, which is not in the tarball`,
    );

  let component;
  try {
    component = await loadComponentBytes(`${what}/${wasmPath}`, wasm, { grants: WASI_GRANTS });
  } catch (error) {
    if (error instanceof ComponentRejected) throw new PackageRefused("ECOMPONENT", `${what}: ${error.message}`);
    throw error;
  }
  const manifest = component.manifest;
  if (!manifest) throw new PackageRefused("EMANIFEST", `${what}: its component has no cordon:manifest section (cordon pack embeds one)`);
  if (manifest.version !== expected.version) {
    throw new PackageRefused(
      "EMANIFEST",
      `${what}: its manifest says version ${JSON.stringify(manifest.version ?? null)}, the package says ${expected.version}; they must be equal`,
    );
  }
  const grants = sorted(manifest.grants ?? []);
  const unknown = grants.filter((g) => !KNOWN_GRANTS.includes(g));
  if (unknown.length)
    throw new PackageRefused(
      "EMANIFEST",
      `${what}: its manifest requests unknown grants: ${unknown.join(", ")} (known: ${KNOWN_GRANTS.join(", ")})`,
    );
  if (cordon.grants !== undefined) {
    const copy = Array.isArray(cordon.grants) ? sorted(cordon.grants.map(String)) : null;
    if (copy === null || copy.join() !== grants.join()) {
      throw new PackageRefused(
        "EMANIFEST",
        `${what}: package.json#cordon.grants (${JSON.stringify(cordon.grants)}) disagrees with the manifest's grants (${JSON.stringify(grants)})`,
      );
    }
  }
  const wasi = sorted(component.imports.map(grantForInterface).filter((g) => g !== null));
  return {
    name: expected.name,
    version: expected.version,
    description: typeof pkg.description === "string" ? pkg.description : manifest.description,
    wasmPath,
    wasm,
    sha256: sha256Hex(wasm),
    manifest,
    requested: { grants, wasi },
    warnings,
  };
}
