/**
 * Packing a proxy project into a publishable npm tarball (`cordon pack`; the build runs before,
 * in the CLI). The tarball is laid out as `npm pack` lays it out, named as npm names it
 * (`@acme/redact` 1.2.0 → `acme-redact-1.2.0.tgz`), with a package.json of its own made from the
 * project's: name, version, description, license, author, repository, homepage, keywords (plus
 * `cordon-proxy`) and `"cordon": {"proxy": "<name>.wasm", "grants": [...]}` — never the project's
 * dev dependencies, scripts or `private`, so `npm publish <tarball>` publishes exactly this.
 *
 * Refused, with the reason: a project with runtime `dependencies` (a proxy is one component, and
 * Cordon installs nothing else), a component without a manifest, a manifest whose version is not
 * the package's, unknown grant names. The tarball is then checked exactly as `cordon install`
 * checks it (`package-contents.ts`), so what packs, installs. Deterministic: the same component and
 * package.json give the same bytes (`tar-write.ts`).
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import semver from "semver";
import { writeFileAtomic } from "../atomic-write.js";
import { sha512Integrity } from "./digests.js";
import { PackageRefused } from "./errors.js";
import { checkProxyPackage, type ProxyPackage } from "./package-contents.js";
import { parseSpec } from "./spec.js";
import { type TarEntry, writeTarball } from "./tar-write.js";

export interface Packed {
  /** The tarball written, in the project folder. */
  file: string;
  integrity: string;
  size: number;
  pkg: ProxyPackage;
}

const COPIED = ["name", "version", "description", "license", "author", "repository", "homepage", "bugs"] as const;
const RUNTIME_DEPENDENCIES = ["dependencies", "optionalDependencies", "peerDependencies", "bundleDependencies", "bundledDependencies"];

/** npm pack's file name: `@scope/name` → `scope-name-<version>.tgz`. */
const tarballName = (name: string, version: string) => `${name.replace(/^@/, "").replace("/", "-")}-${version}.tgz`;

/** The built component's path, as the project's package.json names it (`cordon.out`, else `dist/<entry>.wasm`). */
function builtComponent(dir: string, pkg: Record<string, unknown>): string {
  const cordon = pkg.cordon as { entry?: unknown; out?: unknown } | undefined;
  if (typeof cordon?.out === "string") return resolve(dir, cordon.out);
  if (typeof cordon?.entry === "string") return join(dir, "dist", `${basename(cordon.entry, ".ts")}.wasm`);
  throw new PackageRefused("EPACK", `${join(dir, "package.json")}: no "cordon": {"entry", "out"} (is this a project made by cordon new?)`);
}

async function readProject(dir: string): Promise<Record<string, unknown>> {
  const file = join(dir, "package.json");
  try {
    const pkg = JSON.parse(await readFile(file, "utf8"));
    if (typeof pkg === "object" && pkg !== null && !Array.isArray(pkg)) return pkg;
  } catch (error) {
    throw new PackageRefused("EPACK", `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  throw new PackageRefused("EPACK", `${file} is not a JSON object`);
}

export async function packProject(dir: string): Promise<Packed> {
  const project = await readProject(dir);
  const name = String(project.name ?? "");
  const version = String(project.version ?? "");
  parseSpec(`${name}@${version}`); // the name's rules
  if (!semver.valid(version))
    throw new PackageRefused("EPACK", `package.json: version ${JSON.stringify(project.version)} is not a semver version`);
  const deps = RUNTIME_DEPENDENCIES.filter((k) => project[k] && Object.keys(project[k] as object).length > 0);
  if (deps.length) {
    throw new PackageRefused(
      "EPACK",
      `package.json has ${deps.map((d) => `"${d}"`).join(", ")}: a proxy package carries one component and nothing else is installed with it (keep build tools in devDependencies)`,
    );
  }
  const wasmFile = builtComponent(dir, project);
  let wasm: Uint8Array;
  try {
    wasm = await readFile(wasmFile);
  } catch {
    throw new PackageRefused("EPACK", `${wasmFile} is missing: build the proxy first`);
  }
  // Manifest version and grants are checked on the packed result below; this message says where to fix them.
  const { readManifest } = await import("../sandbox/manifest.js");
  const manifest = readManifest(wasm);
  if (!manifest) throw new PackageRefused("EPACK", `${wasmFile} has no cordon:manifest section: add src/<name>.manifest.json and rebuild`);
  if (manifest.version !== version) {
    throw new PackageRefused(
      "EPACK",
      `the manifest says version ${JSON.stringify(manifest.version ?? null)} but package.json says ${version}: make them equal (the manifest's "version") and rebuild`,
    );
  }
  const wasmName = `${basename(wasmFile, ".wasm")}.wasm`;
  const keywords = [...new Set([...(Array.isArray(project.keywords) ? project.keywords.map(String) : []), "cordon-proxy"])];
  const grants = [...new Set(manifest.grants ?? [])].sort();
  const published: Record<string, unknown> = {};
  for (const key of COPIED) if (project[key] !== undefined) published[key] = project[key];
  published.keywords = keywords;
  published.cordon = grants.length ? { proxy: wasmName, grants } : { proxy: wasmName };
  const entries: TarEntry[] = [
    { name: "package/package.json", data: Buffer.from(`${JSON.stringify(published, null, 2)}\n`) },
    { name: `package/${wasmName}`, data: wasm },
  ];
  for (const extra of ["README.md", "LICENSE"]) {
    if (existsSync(join(dir, extra))) entries.push({ name: `package/${extra}`, data: await readFile(join(dir, extra)) });
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const tgz = writeTarball(entries);
  const pkg = await checkProxyPackage(tgz, { name, version }); // what install will check
  const file = join(dir, tarballName(name, version));
  await writeFileAtomic(file, tgz);
  return { file, integrity: sha512Integrity(tgz), size: tgz.length, pkg };
}
