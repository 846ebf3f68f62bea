/**
 * Turns a `.wasm` component file into something the sandbox can run: validated against the
 * `cordon:proxy` world, its core module taken out, its string encodings read.
 *
 * Cordon reads what it needs from the binary itself, with no toolchain at run time: the world's
 * names (`component-world.ts`), the string encodings (`string-encoding.ts`), the manifest, and the
 * top-level core modules, each compiled (so validated) by V8; the guest is the one with a memory.
 * It never instantiates the component's own wiring, so the rest of the component is never run
 * (see component-world.ts for why that makes a full component validator unnecessary here). What a
 * first load found is cached on disk by the component's SHA-256.
 *
 * The cache is an optimisation, never a trust anchor, so that a pin (`sha256` in the chain
 * config) covers the code that runs:
 * - the code always comes from the component's own bytes: the entry only says which of the
 *   component's top-level core modules is the guest, with that module's SHA-256, and a load takes
 *   that module out of the (hashed) component and checks the hash. Replacing a cache file can make
 *   Cordon rebuild the entry, never run other code under the pinned hash;
 * - the entry names the component's SHA-256 and its core's; on any mismatch, a damaged entry, or
 *   an entry whose recorded imports do not cover what the core module really imports, the entry
 *   is rebuilt from the component;
 * - the manifest and string encodings are read from the component on every load (cheap), so
 *   `cordon inspect` shows what the file says, not what the cache says;
 * - the core module's imports and exports are checked on every load (`checkCoreModule`) — that
 *   check is what confines the guest;
 * - the cache directory is created 0700 (files 0600); one that is writable by group or others,
 *   or owned by another user, is not used at all (a warning says so; components are then
 *   validated in memory on every start).
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { writeFileAtomic } from "../atomic-write.js";
import { CHANNEL_IMPORT, checkCoreModule, type GuestEncodings } from "./canonical-host.js";
import { type ComponentWorld, readComponentWorld } from "./component-world.js";
import { type Manifest, readManifest } from "./manifest.js";
import { type CanonicalEncodings, readCanonicalEncodings } from "./string-encoding.js";
import { grantForInterface, WASI_GRANTS } from "./wasi-grants.js";
import { sections } from "./wasm-binary.js";

const HANDLER_EXPORT = "cordon:proxy/handler@0.1.0";

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
  /** The cache directory this load used (null: none was usable); the thread sandbox keeps its metered module there. */
  cacheDir?: string | null;
}

export class ComponentRejected extends Error {
  constructor(source: string, reason: string) {
    super(`${basename(source)} cannot run as a Cordon proxy: ${reason}`);
    this.name = "ComponentRejected";
  }
}

/** Largest component file Cordon loads (a proxy is typically 0.1–1 MiB). */
export const MAX_COMPONENT_BYTES = 64 * 1024 * 1024;

/** Version of the cache entry format; entries of another version are rebuilt. */
const CACHE_FORMAT = 2;

/** `<component sha256>.json` in the cache directory. Nothing in it is code. */
interface CacheEntry {
  format: typeof CACHE_FORMAT;
  /** The component's SHA-256 (also the file name). */
  sha256: string;
  /** The guest: which of the component's top-level core module sections (0-based), and that module's SHA-256. */
  core: { index: number; sha256: string };
  imports: string[];
  exports: string[];
}

function defaultCacheDir(): string {
  if (process.env.CORDON_CACHE_DIR) return process.env.CORDON_CACHE_DIR;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(base, "cordon", "components");
}

/**
 * The world check: what a component may import and must export. Throws a message naming the
 * culprit. `grants` may admit the wall clock and randomness; nothing admits other WASI.
 */
function checkWorld(source: string, items: { imports: string[]; exports: string[] }, grants: readonly string[] = []): void {
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
  /** Called with a warning (a cache directory that is not safe to use); default: stderr. */
  warn?: (line: string) => void;
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function tooBig(source: string, size: number): ComponentRejected {
  return new ComponentRejected(
    source,
    `it is ${(size / 2 ** 20).toFixed(1)} MiB, larger than the ${MAX_COMPONENT_BYTES / 2 ** 20} MiB Cordon loads`,
  );
}

/** The component's top-level core module sections, in order (a guest's core module is one of them). */
export function coreModules(component: Uint8Array): Uint8Array[] {
  return [...sections(component)].filter((s) => s.id === 1).map((s) => component.subarray(s.body, s.end));
}

/** Verdict per cache directory, once per process: usable, or not (and warned about once). */
const cacheDirVerdicts = new Map<string, Promise<boolean>>();

/**
 * Whether the cache directory may be trusted with entries: absent (it will be created 0700), or
 * a directory owned by this user that neither group nor others can write. Otherwise warns once
 * and returns false: the component is validated in memory and nothing is cached.
 */
function usableCacheDir(dir: string, warn?: (line: string) => void): Promise<boolean> {
  let verdict = cacheDirVerdicts.get(dir);
  if (!verdict) {
    verdict = (async () => {
      const problem = await cacheDirProblem(dir);
      if (problem === null) return true;
      const line = `component cache ${dir} ${problem}; not using it (components are validated in memory on every start; make it a directory of yours with mode 0700 to cache again)`;
      if (warn) warn(line);
      else process.stderr.write(`[cordon] warn: ${line}\n`);
      return false;
    })();
    cacheDirVerdicts.set(dir, verdict);
  }
  return verdict;
}

async function cacheDirProblem(dir: string): Promise<string | null> {
  let info;
  try {
    info = await stat(dir);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? null : `cannot be read (${(error as NodeJS.ErrnoException).code})`;
  }
  if (!info.isDirectory()) return "is not a directory";
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) return `is owned by another user (uid ${info.uid})`;
  if (info.mode & 0o022) return `is writable by ${info.mode & 0o002 ? "others" : "its group"} (mode 0${(info.mode & 0o777).toString(8)})`;
  return null;
}

/** Loads a component from bytes already read (the hash is of these bytes). */
export async function loadComponentBytes(source: string, bytes: Uint8Array, options: LoadOptions = {}): Promise<LoadedComponent> {
  if (bytes.length > MAX_COMPONENT_BYTES) throw tooBig(source, bytes.length);
  const sha256 = sha(bytes);
  const requested = options.cacheDir ?? defaultCacheDir();
  const cacheDir = (await usableCacheDir(requested, options.warn)) ? requested : null;
  let cached = true;
  let pending = loaded.get(sha256);
  if (!pending) {
    pending = (async () => {
      const hit = cacheDir === null ? null : await readCache(cacheDir, sha256, bytes);
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
  return { ...result, source, cached, cacheDir };
}

export async function loadComponent(path: string, options: LoadOptions = {}): Promise<LoadedComponent> {
  let bytes: Uint8Array;
  try {
    const { size } = await stat(path);
    if (size > MAX_COMPONENT_BYTES) throw tooBig(path, size);
    bytes = await readFile(path);
  } catch (error) {
    if (error instanceof ComponentRejected) throw error;
    throw new ComponentRejected(path, `cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return loadComponentBytes(path, bytes, options);
}

/**
 * A cache hit: the guest's core module taken out of the component itself, as the entry says, and
 * checked against the hash the entry recorded; null (rebuild) on anything unexpected.
 */
async function readCache(cacheDir: string, sha256: string, bytes: Uint8Array) {
  try {
    const entry = JSON.parse(await readFile(join(cacheDir, `${sha256}.json`), "utf8")) as CacheEntry;
    if (entry.format !== CACHE_FORMAT || entry.sha256 !== sha256 || !Array.isArray(entry.imports) || !Array.isArray(entry.exports))
      return null;
    const core = coreModules(bytes)[entry.core.index];
    if (!core || sha(core) !== entry.core.sha256) return null;
    const coreBytes = core.slice();
    const module = new WebAssembly.Module(coreBytes);
    checkCoreModule(module, WASI_GRANTS); // the world's imports at most, whatever the entry says
    // The recorded world must cover what the code imports, so checkWorld and `inspect` see every import.
    const imported = new Set(WebAssembly.Module.imports(module).map((i) => i.module));
    if ([...imported].some((name) => !entry.imports.includes(name))) return null;
    const encodings = pickEncodings("cache", readCanonicalEncodings(bytes));
    return { sha256, module, coreBytes, encodings, imports: entry.imports, exports: entry.exports, manifest: readManifest(bytes) };
  } catch {
    return null; // a missing or damaged entry is rebuilt
  }
}

async function unpack(source: string, bytes: Uint8Array, sha256: string, cacheDir: string | null, progress?: (line: string) => void) {
  progress?.(`validating ${basename(source)} (first load; cached afterwards)`);
  const declared = readEncodings(source, bytes);
  let items: ComponentWorld;
  try {
    items = readComponentWorld(bytes);
  } catch (error) {
    throw new ComponentRejected(source, `it is not a valid WebAssembly component (${firstLine(error)})`);
  }
  if (!items.exports.includes(HANDLER_EXPORT)) checkWorld(source, items, WASI_GRANTS);
  const encodings = pickEncodings(source, declared);
  let manifest: Manifest | null;
  try {
    manifest = readManifest(bytes);
  } catch (error) {
    throw new ComponentRejected(source, (error as Error).message);
  }
  // Every top-level core module must compile (V8 validates it); wit-component adds shim/fixup
  // modules beside the guest, and the guest is the one with a memory.
  const guests: { index: number; core: Uint8Array; module: WebAssembly.Module }[] = [];
  coreModules(bytes).forEach((view, index) => {
    const core = view.slice();
    let module: WebAssembly.Module;
    try {
      module = new WebAssembly.Module(core);
    } catch (error) {
      throw new ComponentRejected(source, `its core module #${index} is not valid WebAssembly (${firstLine(error)})`);
    }
    if (WebAssembly.Module.exports(module).some((e) => e.kind === "memory")) guests.push({ index, core, module });
  });
  if (guests.length !== 1) throw new ComponentRejected(source, `expected one core module with a memory, found ${guests.length}`);
  const [{ index, core, module }] = guests;
  if (cacheDir !== null) {
    await writeCache(cacheDir, { format: CACHE_FORMAT, sha256, core: { index, sha256: sha(core) }, ...items });
  }
  return { sha256, module, coreBytes: core, encodings, ...items, manifest };
}

async function writeCache(cacheDir: string, entry: CacheEntry): Promise<void> {
  try {
    await mkdir(cacheDir, { recursive: true, mode: 0o700 });
    if ((await cacheDirProblem(cacheDir)) !== null) return; // created by someone else meanwhile
    await writeFileAtomic(join(cacheDir, `${entry.sha256}.json`), JSON.stringify(entry), 0o600);
  } catch {
    // An unwritable cache only costs speed.
  }
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split("\n")[0];
}
