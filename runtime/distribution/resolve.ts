/**
 * From a spec or a lock entry to checked bytes, in the order verification must happen; any
 * failure throws `PackageRefused` and nothing is written (callers write only what this returns):
 *
 * 1. the package document, bounded, from the configured registry, for the name asked;
 * 2. the version: exact, a dist-tag, or for a range `latest` when it satisfies, else the highest
 *    match (npm's choice); for a lock entry, exactly the locked version — a range is never resolved;
 * 3. the tarball, bounded, from the registry's own origin; its sha512 against the lock when locked
 *    (the lock wins: a mismatch is `EINTEGRITY` naming both digests), and against the registry's
 *    `dist.integrity`;
 * 4. the registry signature over `name@version:integrity`, when the registry offers keys;
 * 5. the contents (`package-contents.ts`): tarball bounds and entry kinds, the component, its
 *    manifest and version; for a lock entry, the `.wasm` sha256 and requested authority must be
 *    exactly what the lock says.
 */
import semver from "semver";
import { matchesIntegrity, sha512Integrity } from "./digests.js";
import { PackageRefused } from "./errors.js";
import type { LockEntry } from "./lockfile.js";
import type { Registry } from "./npmrc.js";
import { checkProxyPackage, type ProxyPackage, requestedAuthority } from "./package-contents.js";
import { fetchKeys, fetchPackument, fetchTarball, type Packument } from "./registry-client.js";
import { checkSignatures } from "./signatures.js";
import type { PackageSpec } from "./spec.js";

export interface Fetched {
  /** What the lock records for this version. */
  entry: LockEntry;
  pkg: ProxyPackage;
  /** The registry's deprecation message, if any. */
  deprecated?: string;
}

/** The version a spec selects among the packument's, or a refusal naming what exists. */
export function pickVersion(doc: Packument, spec: PackageSpec): string {
  const versions = Object.keys(doc.versions).filter((v) => semver.valid(v));
  const tags = doc["dist-tags"] ?? {};
  let picked: string | null = null;
  if (spec.type === "version") picked = versions.includes(spec.selector) ? spec.selector : null;
  else if (spec.type === "tag") picked = tags[spec.selector] && versions.includes(tags[spec.selector]) ? tags[spec.selector] : null;
  else {
    const latest = tags.latest;
    picked =
      latest && versions.includes(latest) && semver.satisfies(latest, spec.selector)
        ? latest
        : semver.maxSatisfying(versions, spec.selector);
  }
  if (picked === null) {
    throw new PackageRefused(
      "ENOVERSION",
      `no version of ${doc.name} matches ${JSON.stringify(spec.selector)} (versions: ${versions.join(", ") || "none"})`,
    );
  }
  return picked;
}

/** A URL as `fetch` will see it (dot segments, `%2e%2e` and backslashes resolved), or null. */
function normalized(url: string): string | null {
  try {
    return new URL(url).href;
  } catch {
    return null;
  }
}

/** The tarball URL as a path under the registry (what the lock records), or a refusal. */
function registryRelative(tarball: string, registry: Registry, what: string): string {
  const base = normalized(registry.url) ?? registry.url;
  const href = normalized(tarball);
  if (href?.startsWith(base)) return href.slice(base.length);
  throw new PackageRefused("EREGISTRY", `${what}: its tarball ${tarball} is not on the registry ${registry.url} (refused)`);
}

/** The lock's relative path back to a URL on the configured registry (a mirror serves the same path). */
function onRegistry(resolved: string, registry: Registry, what: string): string {
  const base = normalized(registry.url) ?? registry.url;
  const href = /^[a-z][a-z0-9+.-]*:|^[/\\]/i.test(resolved) ? null : normalized(base + resolved);
  if (!href?.startsWith(base) || href.slice(base.length) !== resolved) {
    throw new PackageRefused("ELOCK", `${what}: the lock's "resolved" ${JSON.stringify(resolved)} is not a path under the registry`);
  }
  return href;
}

async function fetchVersion(doc: Packument, version: string, registry: Registry, spec: string, locked?: LockEntry): Promise<Fetched> {
  const what = `${doc.name}@${version}`;
  const meta = doc.versions[version];
  if (!meta)
    throw new PackageRefused(
      "ENOVERSION",
      `${what} is not in the registry ${registry.url} (it has ${Object.keys(doc.versions).join(", ")})`,
    );
  const tarballUrl = meta.dist?.tarball;
  if (typeof tarballUrl !== "string") throw new PackageRefused("EREGISTRY", `${what}: the registry gives no tarball URL`);
  const resolved = locked ? locked.resolved : registryRelative(tarballUrl, registry, what);
  const tgz = await fetchTarball(onRegistry(resolved, registry, what), registry, what);
  const actual = sha512Integrity(tgz);
  if (locked && !matchesIntegrity(tgz, locked.integrity)) {
    throw new PackageRefused(
      "EINTEGRITY",
      `${what}: EINTEGRITY: the tarball's sha512 is ${actual}, the lock says ${locked.integrity} (refused; nothing written)`,
    );
  }
  const claimed = meta.dist?.integrity;
  if (typeof claimed !== "string" || !claimed.includes("sha512-")) {
    if (!locked) throw new PackageRefused("EINTEGRITY", `${what}: the registry gives no sha512 integrity for it (refused)`);
  } else if (!matchesIntegrity(tgz, claimed)) {
    throw new PackageRefused(
      "EINTEGRITY",
      `${what}: EINTEGRITY: the tarball's sha512 is ${actual}, the registry says ${claimed} (refused; nothing written)`,
    );
  }
  const publishedAt = doc.time?.[version];
  const keys = await fetchKeys(registry);
  const registrySignature = checkSignatures(keys, doc.name, version, actual, meta.dist?.signatures, publishedAt);
  const pkg = await checkProxyPackage(tgz, { name: doc.name, version });
  if (locked) {
    const problems: string[] = [];
    if (pkg.sha256 !== locked.wasm.sha256) problems.push(`its component's sha256 is ${pkg.sha256}, the lock says ${locked.wasm.sha256}`);
    if (requestedAuthority(pkg.requested).join() !== requestedAuthority(locked.requested).join()) {
      problems.push(
        `it requests [${requestedAuthority(pkg.requested).join(", ")}], the lock says [${requestedAuthority(locked.requested).join(", ")}]`,
      );
    }
    if (problems.length) throw new PackageRefused("ELOCK", `${what}: ${problems.join("; ")} (refused)`);
  }
  const entry: LockEntry = {
    spec,
    package: doc.name,
    version,
    resolved,
    integrity: actual,
    ...(publishedAt ? { publishedAt } : {}),
    wasm: { path: pkg.wasmPath, sha256: pkg.sha256, size: pkg.wasm.length },
    requested: pkg.requested,
    registrySignature,
  };
  return { entry, pkg, deprecated: typeof meta.deprecated === "string" ? meta.deprecated : undefined };
}

/** `add`, `update`, `info`: resolves a spec to its version now and fetches it. */
export async function resolveSpec(spec: PackageSpec, registry: Registry): Promise<Fetched & { versions: string[] }> {
  const doc = await fetchPackument(spec.name, registry);
  const version = pickVersion(doc, spec);
  return { ...(await fetchVersion(doc, version, registry, spec.raw)), versions: Object.keys(doc.versions) };
}

/** `install`: exactly the locked version and bytes. */
export async function fetchLocked(locked: LockEntry, registry: Registry): Promise<Fetched> {
  const doc = await fetchPackument(locked.package, registry);
  return fetchVersion(doc, locked.version, registry, locked.spec, locked);
}
