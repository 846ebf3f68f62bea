/**
 * The few registry requests Cordon makes, with Node's `fetch`: a package's full document
 * (packument), its tarball, and the registry's signing keys. Every response is read with a size
 * cap (a registry cannot make Cordon buffer without bound), plain HTTP is refused except to a
 * loopback address, and the auth token goes only to the registry it was configured for.
 */
import { PackageRefused } from "./errors.js";
import type { Registry } from "./npmrc.js";

/** Largest packument read (the full document of a package with many versions is a few MiB). */
const MAX_PACKUMENT_BYTES = 16 * 2 ** 20;
/** Largest tarball downloaded. */
const MAX_TARBALL_BYTES = 32 * 2 ** 20;
const MAX_KEYS_BYTES = 1 * 2 ** 20;

export interface PackumentVersion {
  name: string;
  version: string;
  dist?: { tarball?: string; integrity?: string; signatures?: { keyid: string; sig: string }[] };
  deprecated?: string;
  cordon?: unknown;
  [field: string]: unknown;
}

export interface Packument {
  name: string;
  "dist-tags"?: Record<string, string>;
  versions: Record<string, PackumentVersion>;
  time?: Record<string, string>;
}

export interface RegistryKey {
  keyid: string;
  key: string;
  keytype?: string;
  scheme?: string;
  expires?: string | null;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

function checkTransport(url: URL): void {
  if (url.protocol === "https:") return;
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return;
  throw new PackageRefused("ETRANSPORT", `${url.href}: refused: registries are reached over HTTPS (plain HTTP only on a loopback address)`);
}

/** GET with a cap on the body; null for 404 (absent), throws on other failures. */
async function get(url: string, registry: Registry, maxBytes: number, what: string): Promise<Uint8Array | null> {
  const target = new URL(url);
  checkTransport(target);
  const headers: Record<string, string> = { accept: "application/json" };
  if (registry.token && url.startsWith(registry.url)) headers.authorization = `Bearer ${registry.token}`;
  let response: Response;
  try {
    response = await fetch(target, { headers, redirect: "error" });
  } catch (error) {
    const cause = (error as { cause?: Error }).cause;
    throw new PackageRefused("EFETCH", `cannot fetch ${what} from ${url}: ${cause?.message ?? (error as Error).message}`);
  }
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new PackageRefused("EFETCH", `cannot fetch ${what} from ${url}: HTTP ${response.status}`);
  }
  const declared = Number(response.headers.get("content-length"));
  const tooBig = () => new PackageRefused("ETOOBIG", `${what} from ${url} is larger than ${maxBytes / 2 ** 20} MiB (refused)`);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw tooBig();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.length;
    if (size > maxBytes) throw tooBig();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function json<T>(bytes: Uint8Array, what: string): T {
  try {
    return JSON.parse(Buffer.from(bytes).toString("utf8")) as T;
  } catch (error) {
    throw new PackageRefused("EREGISTRY", `${what} is not JSON (${(error as Error).message})`);
  }
}

/** `@acme/redact` → `@acme%2fredact`, as the registry API spells it. */
const encodeName = (name: string) => name.replace("/", "%2f");

/** The full packument (the abbreviated one drops custom fields such as `cordon`). */
export async function fetchPackument(name: string, registry: Registry): Promise<Packument> {
  const url = `${registry.url}${encodeName(name)}`;
  const bytes = await get(url, registry, MAX_PACKUMENT_BYTES, `the package document of ${name}`);
  if (bytes === null) throw new PackageRefused("ENOTFOUND", `${name} is not in the registry ${registry.url}`);
  const doc = json<Packument>(bytes, `the package document of ${name}`);
  if (doc.name !== name)
    throw new PackageRefused("EREGISTRY", `${registry.url} answered for ${JSON.stringify(doc.name)} when asked for ${name}`);
  if (typeof doc.versions !== "object" || doc.versions === null)
    throw new PackageRefused("EREGISTRY", `the package document of ${name} has no versions`);
  return doc;
}

export async function fetchTarball(url: string, registry: Registry, what: string): Promise<Uint8Array> {
  const bytes = await get(url, registry, MAX_TARBALL_BYTES, `the tarball of ${what}`);
  if (bytes === null) throw new PackageRefused("ENOTFOUND", `the tarball of ${what} is not at ${url}`);
  return bytes;
}

/** The registry's signing keys (`/-/npm/v1/keys`), or null when it offers none. */
export async function fetchKeys(registry: Registry): Promise<RegistryKey[] | null> {
  const bytes = await get(`${registry.url}-/npm/v1/keys`, registry, MAX_KEYS_BYTES, "the registry's signing keys");
  if (bytes === null) return null;
  const doc = json<{ keys?: RegistryKey[] }>(bytes, "the registry's signing keys");
  return Array.isArray(doc.keys) && doc.keys.length > 0 ? doc.keys : null;
}
