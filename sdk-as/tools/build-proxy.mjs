#!/usr/bin/env node
// cordon-build-proxy: AssemblyScript proxy source → WebAssembly component for the cordon:proxy world.
//
//   node sdk-as/tools/build-proxy.mjs <entry.ts> [-o <out.wasm>] [--world <world>] [--force]
//   node sdk-as/tools/build-proxy.mjs --all <dir> [--out-dir <dir>] [--world <world>] [--force]
//
// `--all proxies` builds every `proxies/<name>/<name>.ts` into `proxies/dist/<name>.wasm`.
//
// A manifest next to the source (`<name>.manifest.json`, or `manifest.json` in the proxy's own
// directory `<name>/`) is checked and embedded as the component's `cordon:manifest` custom section:
//   {"name", "version", "description", "config": <JSON Schema of the config>, "grants": [...]}
//
// One build is: asc (in process, -O3, incremental GC, json-as + export-rename transforms) on a
// generated entry that imports the author's file and re-exports the SDK's ABI functions → the core
// module is embedded with wit/proxy.wit (world "proxy", utf16 strings) → `componentNew`.
// A proxy that uses the SDK's `Clock`/`Random` imports `wasi:clocks/wall-clock@0.2.0` /
// `wasi:random/random@0.2.0`; it is embedded with the SDK's variant world `proxy-wasi`
// (sdk-as/wit/proxy-wasi.wit) instead — automatically, or forced with `--world`. Nothing
// intermediate touches the disk except a small dependency list next to the output
// (`<out dir>/.build/<name>.deps.json`) that makes an unchanged proxy skip its rebuild.
import { createRequire } from "node:module";
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { availableParallelism } from "node:os";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";

const require = createRequire(import.meta.url);
const TOOL_FILE = fileURLToPath(import.meta.url);
const TOOLS_DIR = path.dirname(TOOL_FILE);
const SDK_ROOT = path.resolve(TOOLS_DIR, "..");
const SDK_PACKAGE = "@cordon/sdk-as";
const RENAME_TRANSFORM = path.join(TOOLS_DIR, "rename-exports.mjs");
/** Internal (asc) path of the SDK's ABI module, as seen through the package import. */
const ABI_MODULE = `${SDK_PACKAGE}/assembly/abi`;
const ENTRY_SUFFIX = ".cordon-entry.ts";

export class BuildError extends Error {
  constructor(message, diagnostics = "") {
    super(message);
    this.name = "BuildError";
    this.diagnostics = diagnostics;
  }
}

/** The WIT contract: shipped next to the SDK package (published layout) or at the repository root. */
export function findWit() {
  for (const candidate of [path.join(SDK_ROOT, "wit", "proxy.wit"), path.join(SDK_ROOT, "..", "wit", "proxy.wit")]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new BuildError(`cannot find wit/proxy.wit next to ${SDK_ROOT}`);
}

/** The SDK's variant world with the wall clock and randomness (`proxy-wasi`). */
export function findWasiWit() {
  const file = path.join(SDK_ROOT, "wit", "proxy-wasi.wit");
  if (!existsSync(file)) throw new BuildError(`cannot find ${file}`);
  return file;
}

/** The worlds a proxy can be built for. */
export const WORLDS = ["proxy", "proxy-wasi"];

/** The WASI functions the `proxy-wasi` world offers, by core import module. */
const WASI_IMPORTS = {
  "wasi:clocks/wall-clock@0.2.0": ["now", "resolution"],
  "wasi:random/random@0.2.0": ["get-random-bytes", "get-random-u64"],
};

/** The WIT text to embed a core module with, for `world`. */
export function witSourceFor(world) {
  const base = readFileSync(findWit(), "utf8");
  if (world === "proxy") return base;
  // proxy-wasi.wit includes `cordon:proxy/proxy@0.1.0`: add wit/proxy.wit as a nested package.
  const nested = base.replace(/^(\s*(?:\/\/[^\n]*\n\s*)*)package\s+([^;\s]+)\s*;/, "$1package $2 {");
  if (nested === base) throw new BuildError(`${findWit()} does not start with a package declaration`);
  return `${readFileSync(findWasiWit(), "utf8")}\n${nested}\n}\n`;
}

/** Directory that holds node_modules packages the tool itself resolves (json-as, assemblyscript). */
function packagesDirOf(pkg) {
  const pkgJson = require.resolve(`${pkg}/package.json`);
  return path.dirname(path.dirname(pkgJson));
}

function mtimeMs(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return Infinity; // a vanished input forces a rebuild
  }
}

function depsFileFor(out) {
  return path.join(path.dirname(out), ".build", `${path.basename(out, ".wasm")}.deps.json`);
}

/** True when `out` exists and is newer than every input recorded at its last build. */
export function isUpToDate(entry, out, world = null) {
  if (!existsSync(out)) return false;
  let deps;
  try {
    deps = JSON.parse(readFileSync(depsFileFor(out), "utf8"));
  } catch {
    return false;
  }
  if (deps.entry !== path.resolve(entry) || !Array.isArray(deps.files)) return false;
  if ((deps.requestedWorld ?? null) !== (world ?? null)) return false;
  const built = mtimeMs(out);
  for (const file of [...deps.files, ...toolchainFiles()]) {
    if (mtimeMs(file) >= built) return false;
  }
  // files that may appear later (a manifest added after the build)
  for (const file of manifestCandidates(path.resolve(entry))) {
    if (existsSync(file) && !deps.files.includes(realpathSync(file))) return false;
  }
  return true;
}

/** The tool, its transform, and the compilers' package manifests (a reinstall rebuilds). */
function toolchainFiles() {
  const files = [TOOL_FILE, RENAME_TRANSFORM, path.join(SDK_ROOT, "wit", "proxy-wasi.wit")];
  for (const pkg of ["assemblyscript", "json-as", "@bytecodealliance/jco-transpile"]) {
    const manifest = manifestOf(pkg);
    if (manifest) files.push(manifest);
  }
  return files;
}

/** A package's package.json path (directly, or from its main file when an exports map hides it). */
function manifestOf(pkg) {
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

/** Where a proxy's manifest may be: `<name>.manifest.json`, or `manifest.json` in its own `<name>/` directory. */
function manifestCandidates(entry) {
  const dir = path.dirname(entry);
  const name = path.basename(entry, ".ts");
  const list = [path.join(dir, `${name}.manifest.json`)];
  if (path.basename(dir) === name) list.push(path.join(dir, "manifest.json"));
  return list;
}

const MANIFEST_SECTION = "cordon:manifest";

/** Reads and checks the proxy's manifest: `{ file, json }` (compact JSON text), or null when there is none. */
export function readManifestFor(entry) {
  const name = path.basename(entry, ".ts");
  const file = manifestCandidates(path.resolve(entry)).find((f) => existsSync(f));
  if (!file) return null;
  const rel = path.relative(process.cwd(), file) || file;
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new BuildError(`${name}: ${rel} is not valid JSON (${firstLine(error)})`);
  }
  const problem = manifestProblem(manifest);
  if (problem) throw new BuildError(`${name}: ${rel}: ${problem}`);
  return { file: realpathSync(file), json: JSON.stringify(manifest) };
}

function manifestProblem(m) {
  if (m === null || typeof m !== "object" || Array.isArray(m)) return "a manifest is a JSON object";
  for (const key of ["name", "version", "description"]) {
    if (key in m && typeof m[key] !== "string") return `"${key}" must be a string`;
  }
  if ("config" in m && (m.config === null || typeof m.config !== "object" || Array.isArray(m.config))) {
    return '"config" must be a JSON Schema object';
  }
  if ("grants" in m && !(Array.isArray(m.grants) && m.grants.every((g) => typeof g === "string"))) {
    return '"grants" must be an array of strings';
  }
  return null;
}

function leb128(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

/** Appends a top-level custom section to a component (or module) binary. */
export function withCustomSection(binary, name, payload) {
  const nameBytes = Buffer.from(name, "utf8");
  const body = Buffer.concat([Buffer.from(leb128(nameBytes.length)), nameBytes, Buffer.from(payload, "utf8")]);
  return Buffer.concat([binary, Buffer.from([0, ...leb128(body.length)]), body]);
}

function entrySource(authorFile) {
  // Imported for its top-level code (the author's `register(new MyProxy())`); the exports come from
  // the SDK so the author never re-exports anything.
  return [
    `import "./${path.basename(authorFile, ".ts")}";`,
    `export { cordon_receive, cabi_realloc } from "${ABI_MODULE}";`,
    "",
  ].join("\n");
}

let ascModule = null;
let wasmTools = null;

/**
 * Builds one proxy. Returns `{ name, out, bytes, ms, skipped, world }`; throws BuildError with asc's
 * diagnostics when the source does not compile. `world`: "proxy", "proxy-wasi", or null (the
 * default) for automatic — `proxy-wasi` exactly when the proxy imports the wall clock or randomness.
 */
export async function buildProxy({ entry, out, force = false, world = null }) {
  const started = performance.now();
  entry = path.resolve(entry);
  const name = path.basename(entry, ".ts");
  out = path.resolve(out ?? path.join(path.dirname(entry), `${name}.wasm`));
  if (world != null && !WORLDS.includes(world)) throw new BuildError(`${name}: unknown world ${world} (choose from ${WORLDS.join(", ")})`);
  if (!existsSync(entry)) throw new BuildError(`${name}: no such file ${path.relative(process.cwd(), entry) || entry}`);
  if (!force && isUpToDate(entry, out, world)) {
    return { name, out, bytes: statSync(out).size, ms: performance.now() - started, skipped: true, world: builtWorld(out) };
  }

  const manifest = readManifestFor(entry); // checked before the slow part
  const { core, files, diagnostics, world: used } = await compileCore(entry, { world });
  let component = await componentize(name, core, used);
  if (manifest) {
    component = withCustomSection(component, MANIFEST_SECTION, manifest.json);
    files.push(manifest.file);
  }

  mkdirSync(path.dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, component);
  renameSync(tmp, out);
  const depsFile = depsFileFor(out);
  mkdirSync(path.dirname(depsFile), { recursive: true });
  const depsTmp = `${depsFile}.${process.pid}.tmp`;
  writeFileSync(depsTmp, JSON.stringify({ entry, files, world: used, requestedWorld: world }, null, 1));
  renameSync(depsTmp, depsFile);

  const warnings = diagnostics && /WARNING/.test(diagnostics) ? diagnostics : "";
  if (!/\b(register|setReceiver)\s*\(/.test(readFileSync(entry, "utf8"))) {
    process.stderr.write(`warning: ${name}: the source never calls register(...); the proxy will trap on its first message\n`);
  }
  return { name, out, bytes: component.length, ms: performance.now() - started, skipped: false, warnings, world: used };
}

/** The world an up-to-date output was built for (from its dependency list). */
function builtWorld(out) {
  try {
    return JSON.parse(readFileSync(depsFileFor(out), "utf8")).world ?? "proxy";
  } catch {
    return "proxy";
  }
}

/**
 * Compiles an author's proxy source into the core module (asc, in memory). Returns the module's
 * bytes, every file asc read (for the up-to-date check), asc's diagnostics text, and the world the
 * module is for (`world` forces one; null decides by the module's imports).
 */
export async function compileCore(entry, { world = null } = {}) {
  entry = path.resolve(entry);
  const name = path.basename(entry, ".ts");
  const witFile = findWit();
  ascModule ??= (await import("assemblyscript/asc")).default;
  const asc = ascModule;

  const entryDir = path.dirname(entry);
  const virtualEntry = path.join(entryDir, `${name}${ENTRY_SUFFIX}`);
  const baseDir = process.cwd();
  const read = new Set([entry, witFile]);
  const outputs = new Map();
  const sdkMarker = `${path.sep}node_modules${path.sep}${SDK_PACKAGE.replace("/", path.sep)}${path.sep}`;

  const readFileHook = async (filename, dir) => {
    const file = path.resolve(dir, filename);
    if (file === virtualEntry) return entrySource(entry);
    try {
      const text = await readFile(file, "utf8");
      read.add(realpathSync(file));
      return text;
    } catch {
      // `@cordon/sdk-as` not installed where asc looks (an author building outside a project that
      // depends on it): serve the SDK this tool belongs to, so the ABI and the tool always match.
      const at = file.lastIndexOf(sdkMarker);
      if (at < 0) return null;
      const inside = path.join(SDK_ROOT, file.slice(at + sdkMarker.length));
      try {
        const text = await readFile(inside, "utf8");
        read.add(realpathSync(inside));
        return text;
      } catch {
        return null;
      }
    }
  };

  const stderr = asc.createMemoryStream();
  const stdout = asc.createMemoryStream();
  const args = [
    path.relative(baseDir, virtualEntry),
    "--outFile", "proxy.core.wasm",
    "-O3",
    "--runtime", "incremental",
    "--use", `abort=~lib/${ABI_MODULE}/abort`,
    "--transform", require.resolve("json-as"),
    "--transform", RENAME_TRANSFORM,
    "--disableWarning", "201",
    "--path", packagesDirOf("json-as"),
    "--noColors",
  ];
  const result = await asc.main(args, {
    stdout,
    stderr,
    readFile: readFileHook,
    writeFile: (file, contents) => void outputs.set(path.basename(file), contents),
    listFiles: () => [],
  });
  const diagnostics = stderr.toString().trim();
  if (result.error) {
    throw new BuildError(`${name}: AssemblyScript compilation failed (${result.error.message})`, diagnostics);
  }
  const core = outputs.get("proxy.core.wasm");
  if (!core) throw new BuildError(`${name}: asc produced no output`, diagnostics);
  const used = checkCoreModule(name, core, world);
  if (used === "proxy-wasi") read.add(realpathSync(findWasiWit()));
  return { core, files: [...read].sort(), diagnostics, world: used };
}

/** Wraps a core module into a component of the cordon:proxy world, or the SDK's proxy-wasi (utf16 strings). */
export async function componentize(name, core, world = "proxy") {
  wasmTools ??= await import("@bytecodealliance/jco-transpile/wasm-tools");
  try {
    const embedded = await wasmTools.componentEmbed({
      binary: core,
      witSource: witSourceFor(world),
      world,
      stringEncoding: "utf16",
    });
    return await wasmTools.componentNew(embedded, []);
  } catch (error) {
    throw new BuildError(`${name}: could not make a component for the ${world === "proxy" ? "cordon:proxy" : `SDK's ${world}`} world: ${firstLine(error)}`);
  }
}

/**
 * Checks the core module's imports and exports; returns the world it is for: `world` when given,
 * else `proxy-wasi` when it imports the wall clock or randomness and `proxy` otherwise.
 */
function checkCoreModule(name, core, world) {
  const module = new WebAssembly.Module(core);
  const others = WebAssembly.Module.imports(module).filter(
    (i) => !(i.module === "cordon:proxy/channel@0.1.0" && i.name === "send"),
  );
  const wasi = others.filter((i) => WASI_IMPORTS[i.module]?.includes(i.name));
  const imports = others.filter((i) => !wasi.includes(i));
  if (imports.length) {
    const list = imports.map((i) => `${i.module}.${i.name}`).join(", ");
    const hint = imports.some((i) => i.module === "env")
      ? " (Math.random, Date.now, trace and console functions need host imports Cordon does not provide; the SDK's Clock and Random give the time and randomness through WASI, with the proxy-wasi world)"
      : "";
    throw new BuildError(`${name}: the module imports ${list}, which a Cordon proxy cannot have${hint}`);
  }
  if (world === "proxy" && wasi.length) {
    const list = wasi.map((i) => `${i.module}.${i.name}`).join(", ");
    throw new BuildError(`${name}: the module imports ${list} (the SDK's Clock/Random), which the proxy world does not have; build it for the proxy-wasi world (--world proxy-wasi, or leave --world out)`);
  }
  const names = WebAssembly.Module.exports(module).map((e) => e.name);
  for (const needed of ["memory", "cabi_realloc", "cordon:proxy/handler@0.1.0#receive"]) {
    if (!names.includes(needed)) throw new BuildError(`${name}: the core module does not export ${needed}`);
  }
  return world ?? (wasi.length ? "proxy-wasi" : "proxy");
}

function firstLine(error) {
  return String(error instanceof Error ? error.message : error).split("\n")[0];
}

/** `proxies/<name>/<name>.ts` for every such directory under `dir`. */
export function findProxies(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === "dist" || entry.name.startsWith(".")) continue;
    const source = path.join(dir, entry.name, `${entry.name}.ts`);
    if (existsSync(source)) found.push(source);
  }
  return found.sort();
}

function formatSize(bytes) {
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${bytes} B`;
}

function report(result) {
  const rel = path.relative(process.cwd(), result.out) || result.out;
  const what = result.skipped ? "up to date" : "built";
  const world = result.world && result.world !== "proxy" ? `  (world ${result.world}: needs the grants wasi:clocks, wasi:random)` : "";
  process.stderr.write(
    `${what.padEnd(10)} ${result.name.padEnd(16)} ${formatSize(result.bytes).padStart(9)} ${(result.ms / 1000).toFixed(2).padStart(6)} s  ${rel}${world}\n`,
  );
  if (result.warnings) process.stderr.write(`${result.warnings}\n`);
}

function reportError(error) {
  if (error instanceof BuildError) {
    process.stderr.write(`error: ${error.message}\n`);
    if (error.diagnostics) process.stderr.write(`${error.diagnostics}\n`);
  } else {
    process.stderr.write(`error: ${error?.stack ?? error}\n`);
  }
}

/** Builds many proxies, on up to `parallel` worker threads (asc is single-threaded). */
export async function buildMany(jobs, { force = false, parallel = Math.min(2, availableParallelism()) } = {}) {
  const pending = [];
  for (const job of jobs) {
    if (!force && isUpToDate(job.entry, job.out, job.world ?? null)) {
      const out = path.resolve(job.out);
      const result = { name: path.basename(job.entry, ".ts"), out, bytes: statSync(out).size, ms: 0, skipped: true, world: builtWorld(out) };
      report(result);
    } else {
      pending.push(job);
    }
  }
  let failures = 0;
  if (pending.length <= 1 || parallel <= 1) {
    for (const job of pending) {
      try {
        report(await buildProxy({ ...job, force: true }));
      } catch (error) {
        failures++;
        reportError(error);
      }
    }
    return failures;
  }
  const queue = [...pending];
  const runWorker = () =>
    new Promise((resolve) => {
      const worker = new Worker(pathToFileURL(TOOL_FILE), { workerData: { cordonBuildWorker: true } });
      const next = () => {
        const job = queue.shift();
        if (!job) {
          worker.postMessage(null);
          return;
        }
        worker.postMessage(job);
      };
      worker.on("message", (msg) => {
        if (msg.ok) report(msg.result);
        else {
          failures++;
          reportError(Object.assign(new BuildError(msg.message, msg.diagnostics), msg.plain ? { name: "Error" } : {}));
        }
        next();
      });
      worker.on("error", (error) => {
        failures++;
        reportError(error);
        resolve();
      });
      worker.on("exit", () => resolve());
      next();
    });
  await Promise.all(Array.from({ length: Math.min(parallel, pending.length) }, runWorker));
  return failures;
}

function usage() {
  return [
    "usage: cordon-build-proxy <entry.ts> [-o <out.wasm>] [--world <world>] [--force]",
    "       cordon-build-proxy --all <dir> [--out-dir <dir>] [--world <world>] [--force]",
    "",
    "  <entry.ts>      an AssemblyScript file that calls register(new MyProxy())",
    "  -o <out.wasm>   component to write (default: next to the source)",
    "  --all <dir>     build every <dir>/<name>/<name>.ts into <dir>/dist/<name>.wasm",
    "  --out-dir <d>   with --all: where the components go (default <dir>/dist)",
    "  --world <w>     proxy | proxy-wasi (default: proxy-wasi exactly when the proxy uses the",
    "                  SDK's Clock/Random; such a proxy needs the grants wasi:clocks, wasi:random)",
    "  --force         rebuild even when the output is newer than every input",
  ].join("\n");
}

async function cli(argv) {
  let all = null;
  let outDir = null;
  let out = null;
  let force = false;
  let world = null;
  const entries = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--all") all = argv[++i];
    else if (arg === "-o" || arg === "--out") out = argv[++i];
    else if (arg === "--out-dir") outDir = argv[++i];
    else if (arg === "--force" || arg === "-f") force = true;
    else if (arg === "--world") {
      world = argv[++i];
      if (!WORLDS.includes(world)) {
        process.stderr.write(`error: --world takes one of ${WORLDS.join(", ")}\n${usage()}\n`);
        return 2;
      }
    }
    else if (arg === "-h" || arg === "--help") {
      process.stdout.write(`${usage()}\n`);
      return 0;
    } else if (arg.startsWith("-")) {
      process.stderr.write(`error: unknown option ${arg}\n${usage()}\n`);
      return 2;
    } else entries.push(arg);
  }
  if (all == null && entries.length !== 1) {
    process.stderr.write(`${usage()}\n`);
    return 2;
  }
  if (all != null && (entries.length || out)) {
    process.stderr.write(`error: --all takes no entry file and no -o\n${usage()}\n`);
    return 2;
  }
  const started = performance.now();
  let jobs;
  if (all != null) {
    if (!existsSync(all)) {
      process.stderr.write(`error: no such directory ${all}\n`);
      return 1;
    }
    const dist = outDir ?? path.join(all, "dist");
    jobs = findProxies(all).map((entry) => ({ entry, out: path.join(dist, `${path.basename(entry, ".ts")}.wasm`), world }));
    if (!jobs.length) {
      process.stderr.write(`error: no <name>/<name>.ts proxies under ${all}\n`);
      return 1;
    }
  } else {
    jobs = [{ entry: entries[0], out: out ?? undefined, world }];
  }
  const failures = await buildMany(jobs, { force });
  if (jobs.length > 1) {
    process.stderr.write(
      `${failures ? `${failures} of ${jobs.length} proxies failed` : `${jobs.length} proxies ok`} in ${((performance.now() - started) / 1000).toFixed(2)} s\n`,
    );
  }
  return failures ? 1 : 0;
}

if (!isMainThread && workerData?.cordonBuildWorker) {
  parentPort.on("message", async (job) => {
    if (job === null) {
      parentPort.close();
      return;
    }
    try {
      parentPort.postMessage({ ok: true, result: await buildProxy({ ...job, force: true }) });
    } catch (error) {
      parentPort.postMessage({
        ok: false,
        message: error instanceof BuildError ? error.message : String(error?.stack ?? error),
        diagnostics: error instanceof BuildError ? error.diagnostics : "",
      });
    }
  });
} else if (isMainThread && process.argv[1] && realpathSync(path.resolve(process.argv[1])) === TOOL_FILE) {
  process.exitCode = await cli(process.argv.slice(2));
}
