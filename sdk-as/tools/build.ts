/**
 * One proxy build — compile (compile.ts) → check (check.ts) → componentize (componentize.ts) →
 * embed the manifest (manifest.ts) → write atomically — skipped when the output is newer than
 * every input it was built from (recorded in `<out dir>/.build/<name>.deps.json`); and many builds
 * on worker threads.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { compileCore } from "./compile.js";
import { componentize } from "./componentize.js";
import { findSdkRoot, WORLDS, type World } from "./compose.js";
import { BuildError } from "./errors.js";
import { MANIFEST_SECTION, manifestCandidates, readManifestFor, withCustomSection } from "./manifest.js";

const require = createRequire(import.meta.url);
const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The compiled worker script (absent when the tool runs from its TypeScript sources, e.g. under vitest). */
const WORKER = path.join(HERE, "build-worker.js");

export interface BuildJob {
  entry: string;
  out?: string;
  world?: World | null;
}

export interface BuildResult {
  name: string;
  out: string;
  bytes: number;
  ms: number;
  skipped: boolean;
  world: World;
  warnings?: string;
}

function mtimeMs(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return Infinity; // a vanished input forces a rebuild
  }
}

function depsFileFor(out: string): string {
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

/** The tool's own files, the SDK's WIT, and the compilers' package manifests (a reinstall rebuilds). */
function toolchainFiles(): string[] {
  const files = readdirSync(HERE)
    .filter((f) => /\.(js|ts|mjs)$/.test(f))
    .map((f) => path.join(HERE, f));
  files.push(path.join(findSdkRoot(), "wit", "proxy-wasi.wit"));
  for (const pkg of ["assemblyscript", "json-as", "@bytecodealliance/jco-transpile"]) {
    const manifest = manifestOf(pkg);
    if (manifest) files.push(manifest);
  }
  return files;
}

/** True when `out` exists and is newer than every input recorded at its last build. */
export function isUpToDate(entry: string, out: string, world: World | null = null): boolean {
  if (!existsSync(out)) return false;
  let deps: { entry?: string; files?: string[]; requestedWorld?: string | null };
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

/** The world an up-to-date output was built for (from its dependency list). */
function builtWorld(out: string): World {
  try {
    return JSON.parse(readFileSync(depsFileFor(out), "utf8")).world ?? "proxy";
  } catch {
    return "proxy";
  }
}

/**
 * Builds one proxy. `world`: "proxy", "proxy-wasi", or null (the default) for automatic —
 * `proxy-wasi` exactly when the proxy imports the wall clock or randomness. Throws BuildError with
 * asc's diagnostics when the source does not compile.
 */
export async function buildProxy({ entry, out, force = false, world = null }: BuildJob & { force?: boolean }): Promise<BuildResult> {
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

/** `<dir>/<name>/<name>.ts` for every such directory under `dir`. */
export function findProxies(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === "dist" || entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const source = path.join(dir, entry.name, `${entry.name}.ts`);
    if (existsSync(source)) found.push(source);
  }
  return found.sort();
}

function formatSize(bytes: number): string {
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${bytes} B`;
}

export function report(result: BuildResult): void {
  const rel = path.relative(process.cwd(), result.out) || result.out;
  const what = result.skipped ? "up to date" : "built";
  const world = result.world && result.world !== "proxy" ? `  (world ${result.world}: needs the grants wasi:clocks, wasi:random)` : "";
  process.stderr.write(
    `${what.padEnd(10)} ${result.name.padEnd(16)} ${formatSize(result.bytes).padStart(9)} ${(result.ms / 1000).toFixed(2).padStart(6)} s  ${rel}${world}\n`,
  );
  if (result.warnings) process.stderr.write(`${result.warnings}\n`);
}

export function reportError(error: unknown): void {
  if (error instanceof BuildError) {
    process.stderr.write(`error: ${error.message}\n`);
    if (error.diagnostics) process.stderr.write(`${error.diagnostics}\n`);
  } else {
    process.stderr.write(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
}

/** Builds many proxies, on up to `parallel` worker threads (asc is single-threaded); returns the number that failed. */
export async function buildMany(jobs: BuildJob[], { force = false, parallel = Math.min(2, availableParallelism()) } = {}): Promise<number> {
  const pending: BuildJob[] = [];
  for (const job of jobs) {
    const out = path.resolve(job.out ?? path.join(path.dirname(job.entry), `${path.basename(job.entry, ".ts")}.wasm`));
    if (!force && isUpToDate(job.entry, out, job.world ?? null)) {
      report({ name: path.basename(job.entry, ".ts"), out, bytes: statSync(out).size, ms: 0, skipped: true, world: builtWorld(out) });
    } else {
      pending.push({ ...job, out });
    }
  }
  let failures = 0;
  if (pending.length <= 1 || parallel <= 1 || !existsSync(WORKER)) {
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
    new Promise<void>((resolve) => {
      const worker = new Worker(WORKER);
      const next = () => worker.postMessage(queue.shift() ?? null);
      worker.on(
        "message",
        (msg: { ok: true; result: BuildResult } | { ok: false; message: string; diagnostics: string; plain: boolean }) => {
          if (msg.ok) report(msg.result);
          else {
            failures++;
            reportError(msg.plain ? new Error(msg.message) : new BuildError(msg.message, msg.diagnostics));
          }
          next();
        },
      );
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
