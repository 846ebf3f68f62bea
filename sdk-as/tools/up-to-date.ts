/**
 * Whether a proxy's component is up to date, by content: the build records, next to the output
 * (`<out dir>/.build/<name>.deps.json`), the SHA-256 of every file asc read (the author's sources,
 * the SDK's AssemblyScript, the WIT), of the manifest, of the build options, of the tool itself
 * (its own compiled files and the compilers' package manifests), and of the component it wrote.
 * The output is up to date exactly when all of them still hash the same.
 *
 * Modification times play no part: `make build` regenerates the tool with tsc on every run, and
 * a checkout or `touch` changes times without changing what a build would produce. A changed byte
 * anywhere in the inputs, a replaced or damaged output, or a manifest that appeared since all
 * rebuild. Cost: hashing the inputs (about 40 small files, well under 10 ms a proxy).
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { findSdkRoot, type World } from "./compose.js";
import { manifestCandidates } from "./manifest.js";
import { jsonCacheSetting } from "./memory-options.js";

const require = createRequire(import.meta.url);
const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Bumped when the deps record changes shape; an older record means "rebuild". */
const RECORD_VERSION = 2;

/** What a build was made from, as written to the deps file. */
export interface BuildRecord {
  version: number;
  entry: string;
  /** Every input file asc read, and the manifest, with its SHA-256 (hex). */
  files: Record<string, string>;
  /** SHA-256 of the tool: its own files and the compilers' package manifests. */
  tool: string;
  /** The build options the output depends on (the requested world, json-as's cache), as compact JSON. */
  options: string;
  /** SHA-256 of the component written. */
  output: string;
  /** The world the output was built for. */
  world: World;
}

export function sha256(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function hashFile(file: string): string | null {
  try {
    return sha256(readFileSync(file));
  } catch {
    return null; // a vanished input forces a rebuild
  }
}

export function depsFileFor(out: string): string {
  return path.join(path.dirname(out), ".build", `${path.basename(out, ".wasm")}.deps.json`);
}

/** A package's package.json path (directly, or from its main file when an exports map hides it). */
function manifestOf(pkg: string): string | null {
  try {
    return require.resolve(`${pkg}/package.json`);
  } catch {
    try {
      let dir = path.dirname(require.resolve(pkg));
      while (!existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
      return path.join(dir, "package.json");
    } catch {
      return null;
    }
  }
}

let toolHash: string | null = null;

/** The tool's own files: its TypeScript sources where they are (a checkout), else the compiled files that run. */
function toolFiles(): string[] {
  const sources = path.join(findSdkRoot(), "tools");
  const list = (dir: string, pattern: RegExp) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => pattern.test(f) && !f.endsWith(".d.ts") && !f.endsWith(".test.ts"))
          .sort()
          .map((f) => path.join(dir, f))
      : [];
  const ts = list(sources, /\.(ts|mjs)$/);
  return ts.some((f) => f.endsWith(".ts")) ? ts : list(HERE, /\.(js|mjs)$/);
}

/**
 * The tool's fingerprint: its own files (the same whether the sources or the compiled tool run,
 * so tests and \`make build\` agree), the SDK's WASI world, and the compilers' package manifests
 * (a reinstall of another version rebuilds). Computed once per process.
 */
export function toolFingerprint(): string {
  if (toolHash) return toolHash;
  const files = toolFiles();
  files.push(path.join(findSdkRoot(), "wit", "proxy-wasi.wit"));
  for (const pkg of ["assemblyscript", "json-as", "@bytecodealliance/jco-transpile"]) {
    const manifest = manifestOf(pkg);
    if (manifest) files.push(manifest);
  }
  const hash = createHash("sha256");
  for (const file of files) hash.update(`${path.basename(file)}\0${hashFile(file) ?? "missing"}\0`);
  return (toolHash = hash.digest("hex"));
}

export function optionsKey(world: World | null): string {
  return JSON.stringify({ world: world ?? null, jsonCache: jsonCacheSetting() });
}

/** The record to write after a build of `entry` from `files` that produced `component`. */
export function recordFor(entry: string, files: string[], world: World | null, used: World, component: Uint8Array): BuildRecord {
  const hashed: Record<string, string> = {};
  for (const file of [...new Set(files)].sort()) hashed[file] = hashFile(file) ?? "missing";
  return {
    version: RECORD_VERSION,
    entry: path.resolve(entry),
    files: hashed,
    tool: toolFingerprint(),
    options: optionsKey(world),
    output: sha256(component),
    world: used,
  };
}

/** The record of `out`'s last build, or null (none, unreadable, or of an older shape). */
export function readRecord(out: string): BuildRecord | null {
  try {
    const record = JSON.parse(readFileSync(depsFileFor(out), "utf8")) as BuildRecord;
    if (record?.version !== RECORD_VERSION || typeof record.files !== "object" || record.files === null) return null;
    return record;
  } catch {
    return null;
  }
}

/** The reason given when there is nothing to compare with (not worth printing). */
export const NO_OUTPUT = "no output yet";

/**
 * Why `out` must be rebuilt from `entry`, or null when it is up to date (every input, the tool,
 * the options and the output itself hash as recorded, and no manifest appeared since).
 */
/** A path as the user would type it: relative to the working folder when inside it. */
function shown(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file;
}

export function staleReason(entry: string, out: string, world: World | null = null): string | null {
  if (!existsSync(out)) return NO_OUTPUT;
  const record = readRecord(out);
  if (!record) return "no build record";
  if (record.entry !== path.resolve(entry)) return "built from another source";
  if (record.options !== optionsKey(world)) return "other build options";
  if (record.tool !== toolFingerprint()) return "the build tool changed";
  if (hashFile(out) !== record.output) return "the output was changed or replaced";
  for (const [file, hash] of Object.entries(record.files)) {
    if (hashFile(file) !== hash) return `${shown(file)} changed`;
  }
  for (const file of manifestCandidates(path.resolve(entry))) {
    if (existsSync(file) && !(realpathSync(file) in record.files)) return `${path.basename(file)} appeared`;
  }
  return null;
}
