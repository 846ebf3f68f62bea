/**
 * Turns a `.wasm` component file into something the sandbox can run: validated against the
 * `cordon:proxy` world, its core module taken out, its string encodings read.
 *
 * Validation and unpacking use jco-transpile (the wasm-tools parser/validator compiled to wasm).
 * That costs ~150 ms and ~50 MB of RSS the first time, so results are cached on disk by the
 * component's SHA-256: a later start reads the cached core module and never loads jco at all.
 * The cache is an optimisation, not a trust anchor — the core module's imports and exports are
 * checked again on every load (`checkCoreModule`), and that check is what confines the guest.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { CHANNEL_IMPORT, checkCoreModule, type GuestEncodings } from "./canonical-host.js";
import { readManifest, type Manifest } from "./manifest.js";
import { grantForInterface, WASI_GRANTS } from "./wasi-grants.js";
import { readCanonicalEncodings, type CanonicalEncodings } from "./string-encoding.js";

export const HANDLER_EXPORT = "cordon:proxy/handler@0.1.0";

export interface LoadedComponent {
  /** File the component came from (for messages). */
  source: string;
  sha256: string;
  /** The guest's core module, compiled. */
  module: WebAssembly.Module;
  /** Its bytes (the memory cap rewrites these before compiling). */
  coreBytes: Uint8Array;
  encodings: GuestEncodings;
  /** Versioned interface names, as the component's WIT says. */
  imports: string[];
  exports: string[];
  /** What the component says about itself (`cordon:manifest` custom section), if anything. */
  manifest: Manifest | null;
  /** Whether this load was served from the cache. */
  cached: boolean;
}

export class ComponentRejected extends Error {
  constructor(source: string, reason: string) {
    super(`${basename(source)} cannot run as a Cordon proxy: ${reason}`);
    this.name = "ComponentRejected";
  }
}

interface CacheEntry {
  sha256: string;
  encodings: GuestEncodings;
  imports: string[];
  exports: string[];
  manifest: Manifest | null;
}

export function defaultCacheDir(): string {
  if (process.env.CORDON_CACHE_DIR) return process.env.CORDON_CACHE_DIR;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(base, "cordon", "components");
}

/** Reads the world's imports and exports out of the WIT text jco prints for a component. */
export function parseWorldItems(wit: string): { imports: string[]; exports: string[] } {
  const imports: string[] = [];
  const exports: string[] = [];
  for (const raw of wit.split("\n")) {
    const line = raw.trim();
    const m = /^(import|export)\s+([^;{]+?)\s*(?:;|\{)?$/.exec(line);
    if (!m) continue;
    (m[1] === "import" ? imports : exports).push(m[2].trim());
  }
  return { imports, exports };
}

/**
 * The world check: what a component may import and must export. Throws a message naming the
 * culprit. `grants` may admit the wall clock and randomness; nothing admits other WASI.
 */
export function checkWorld(source: string, items: { imports: string[]; exports: string[] }, grants: readonly string[] = []): void {
  for (const imp of items.imports) {
    if (imp === CHANNEL_IMPORT) continue;
    const grant = grantForInterface(imp);
    if (grant && grants.includes(grant)) continue;
    if (grant) {
      throw new ComponentRejected(source, `it imports the WASI interface ${imp}, which needs the "${grant}" grant in the chain config`);
    }
    const what = imp.startsWith("wasi:") ? `the WASI interface ${imp}` : imp;
    throw new ComponentRejected(source, `it imports ${what}, which Cordon does not provide; a proxy may import only ${CHANNEL_IMPORT}`);
  }
  if (!items.exports.includes(HANDLER_EXPORT)) {
    throw new ComponentRejected(source, `it does not export ${HANDLER_EXPORT} (exports: ${items.exports.join(", ") || "none"})`);
  }
}

function readEncodings(source: string, bytes: Uint8Array): CanonicalEncodings {
  try {
    return readCanonicalEncodings(bytes);
  } catch (error) {
    throw new ComponentRejected(source, (error as Error).message);
  }
}

/** The world has one lift (receive) and one lower (send); each has exactly one encoding. */
function pickEncodings(source: string, enc: CanonicalEncodings): GuestEncodings {
  // Explicit encodings must agree; with none declared, the canonical ABI's default (utf8) applies.
  const one = (list: (string | null)[], what: string) => {
    const set = new Set(list.filter((e) => e !== null));
    if (set.size > 1) throw new ComponentRejected(source, `expected one ${what} string encoding, found ${[...set].join(", ")}`);
    const [e = "utf8"] = set;
    if (e !== "utf8" && e !== "utf16") throw new ComponentRejected(source, `string encoding ${e} is not supported (use utf8 or utf16)`);
    return e;
  };
  return { receive: one(enc.lifts, "export"), send: one(enc.lowers, "import") };
}

const loaded = new Map<string, Promise<Omit<LoadedComponent, "source" | "cached">>>();

/** Forgets components loaded by this process (the disk cache stays); a reload reads the cache again. */
export function forgetLoadedComponents(): void {
  loaded.clear();
}

export interface LoadOptions {
  cacheDir?: string;
  /** WASI the chain config grants (`wasi:clocks`, `wasi:random`). */
  grants?: readonly string[];
  /** Called with a line of progress for slow steps (first-time validation). */
  progress?: (line: string) => void;
}

/** Loads a component from bytes already read (the hash is of these bytes). */
export async function loadComponentBytes(source: string, bytes: Uint8Array, options: LoadOptions = {}): Promise<LoadedComponent> {
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  let cached = true;
  let pending = loaded.get(sha256);
  if (!pending) {
    pending = (async () => {
      const hit = await readCache(cacheDir, sha256);
      if (hit) return hit;
      cached = false;
      return await unpack(source, bytes, sha256, cacheDir, options.progress);
    })();
    loaded.set(sha256, pending);
    pending.catch(() => loaded.delete(sha256));
  }
  const result = await pending;
  // The world and the core module are checked on every load, against this load's grants.
  checkWorld(source, result, options.grants);
  try {
    checkCoreModule(result.module, options.grants);
  } catch (error) {
    throw new ComponentRejected(source, (error as Error).message);
  }
  return { ...result, source, cached };
}

export async function loadComponent(path: string, options: LoadOptions = {}): Promise<LoadedComponent> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new ComponentRejected(path, `cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return loadComponentBytes(path, bytes, options);
}

async function readCache(cacheDir: string, sha256: string) {
  try {
    const entry = JSON.parse(await readFile(join(cacheDir, `${sha256}.json`), "utf8")) as CacheEntry;
    const coreBytes = new Uint8Array(await readFile(join(cacheDir, `${sha256}.core.wasm`)));
    if (entry.sha256 !== sha256) return null;
    const module = new WebAssembly.Module(coreBytes);
    checkCoreModule(module, WASI_GRANTS); // a damaged or tampered entry is rebuilt, not trusted
    return { sha256, module, coreBytes, encodings: entry.encodings, imports: entry.imports, exports: entry.exports, manifest: entry.manifest ?? null };
  } catch {
    return null; // a missing or damaged entry is rebuilt
  }
}

async function unpack(source: string, bytes: Uint8Array, sha256: string, cacheDir: string, progress?: (line: string) => void) {
  progress?.(`validating ${basename(source)} (first load; cached afterwards)`);
  const declared = readEncodings(source, bytes);
  const [{ transpileBytes }, { componentWit }] = await Promise.all([
    import("@bytecodealliance/jco-transpile"),
    import("@bytecodealliance/jco-transpile/wasm-tools"),
  ]);
  let wit: string;
  try {
    wit = await componentWit(bytes);
  } catch (error) {
    throw new ComponentRejected(source, `it is not a valid WebAssembly component (${firstLine(error)})`);
  }
  const items = parseWorldItems(wit);
  if (!items.exports.includes(HANDLER_EXPORT)) checkWorld(source, items, WASI_GRANTS);
  const encodings = pickEncodings(source, declared);
  let manifest: Manifest | null;
  try {
    manifest = readManifest(bytes);
  } catch (error) {
    throw new ComponentRejected(source, (error as Error).message);
  }
  let files: Record<string, Uint8Array>;
  try {
    ({ files } = await transpileBytes(bytes, {
      name: "guest",
      instantiation: "sync",
      wasiShim: false,
      noTypescript: true,
      base64Cutoff: 0,
    } as Parameters<typeof transpileBytes>[1]));
  } catch (error) {
    throw new ComponentRejected(source, `jco could not unpack it (${firstLine(error)})`);
  }
  // wit-component adds shim/fixup core modules for lowered imports; the guest is the one with a memory.
  const guests = Object.entries(files)
    .filter(([name]) => name.endsWith(".wasm"))
    .map(([, core]) => ({ core, module: new WebAssembly.Module(core as Uint8Array<ArrayBuffer>) }))
    .filter(({ module }) => WebAssembly.Module.exports(module).some((e) => e.kind === "memory"));
  if (guests.length !== 1) throw new ComponentRejected(source, `expected one core module with a memory, found ${guests.length}`);
  const [{ core, module }] = guests;
  await writeCache(cacheDir, { sha256, encodings, ...items, manifest }, core);
  return { sha256, module, coreBytes: core, encodings, ...items, manifest };
}

async function writeCache(cacheDir: string, entry: CacheEntry, core: Uint8Array): Promise<void> {
  try {
    await mkdir(cacheDir, { recursive: true });
    const tmp = `.${process.pid}.${Date.now()}`;
    await writeFile(join(cacheDir, `${entry.sha256}.core.wasm${tmp}`), core);
    await rename(join(cacheDir, `${entry.sha256}.core.wasm${tmp}`), join(cacheDir, `${entry.sha256}.core.wasm`));
    await writeFile(join(cacheDir, `${entry.sha256}.json${tmp}`), JSON.stringify(entry));
    await rename(join(cacheDir, `${entry.sha256}.json${tmp}`), join(cacheDir, `${entry.sha256}.json`));
  } catch {
    // An unwritable cache only costs speed.
  }
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split("\n")[0];
}
