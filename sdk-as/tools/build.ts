/**
 * One proxy build — compile (compile.ts) → check (check.ts) → componentize (componentize.ts) →
 * embed the manifest (manifest.ts) → write atomically — skipped when nothing it was built from
 * changed, by content (up-to-date.ts); and many builds on worker threads.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { compileCore } from "./compile.js";
import { componentize } from "./componentize.js";
import { WORLDS, type World } from "./compose.js";
import { BuildError } from "./errors.js";
import { MANIFEST_SECTION, readManifestFor, withCustomSection } from "./manifest.js";
import { depsFileFor, NO_OUTPUT, readRecord, recordFor, staleReason } from "./up-to-date.js";

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
  /** Why it was rebuilt, when an earlier output existed (what changed). */
  because?: string;
}

/** What `buildAll` did. */
export interface BuildSummary {
  built: number;
  upToDate: number;
  failed: number;
}

/** True when `out` is up to date with `entry`: every input, the tool and the output hash as recorded (up-to-date.ts). */
export function isUpToDate(entry: string, out: string, world: World | null = null): boolean {
  return staleReason(entry, out, world) === null;
}

/** The world an up-to-date output was built for (from its build record). */
function builtWorld(out: string): World {
  return readRecord(out)?.world ?? "proxy";
}

/**
 * Builds one proxy. `world`: "proxy", "proxy-wasi", or null (the default) for automatic —
 * `proxy-wasi` exactly when the proxy imports the wall clock or randomness. Throws BuildError with
 * asc's diagnostics when the source does not compile.
 */
export async function buildProxy({
  entry,
  out,
  force = false,
  world = null,
  because,
}: BuildJob & { force?: boolean; because?: string }): Promise<BuildResult> {
  const started = performance.now();
  entry = path.resolve(entry);
  const name = path.basename(entry, ".ts");
  out = path.resolve(out ?? path.join(path.dirname(entry), `${name}.wasm`));
  if (world != null && !WORLDS.includes(world)) throw new BuildError(`${name}: unknown world ${world} (choose from ${WORLDS.join(", ")})`);
  if (!existsSync(entry)) throw new BuildError(`${name}: no such file ${path.relative(process.cwd(), entry) || entry}`);
  if (!force) {
    because = staleReason(entry, out, world) ?? undefined;
    if (because === undefined) {
      return { name, out, bytes: statSync(out).size, ms: performance.now() - started, skipped: true, world: builtWorld(out) };
    }
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
  writeFileSync(depsTmp, JSON.stringify(recordFor(entry, files, world, used, component), null, 1));
  renameSync(depsTmp, depsFile);

  const warnings = diagnostics && /WARNING/.test(diagnostics) ? diagnostics : "";
  if (!/\b(register|setReceiver)\s*\(/.test(readFileSync(entry, "utf8"))) {
    process.stderr.write(`warning: ${name}: the source never calls register(...); the proxy will trap on its first message\n`);
  }
  return {
    name,
    out,
    bytes: component.length,
    ms: performance.now() - started,
    skipped: false,
    warnings,
    world: used,
    ...(because && because !== NO_OUTPUT ? { because } : {}),
  };
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
    `${what.padEnd(10)} ${result.name.padEnd(16)} ${formatSize(result.bytes).padStart(9)} ${(result.ms / 1000).toFixed(2).padStart(6)} s  ${rel}${world}${result.because ? `  (${result.because})` : ""}\n`,
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
export async function buildMany(jobs: BuildJob[], options: { force?: boolean; parallel?: number } = {}): Promise<number> {
  return (await buildAll(jobs, options)).failed;
}

/** `buildMany`, saying how many were built, up to date, and failed. */
export async function buildAll(
  jobs: BuildJob[],
  { force = false, parallel = Math.min(2, availableParallelism()) } = {},
): Promise<BuildSummary> {
  const pending: (BuildJob & { because?: string })[] = [];
  for (const job of jobs) {
    const out = path.resolve(job.out ?? path.join(path.dirname(job.entry), `${path.basename(job.entry, ".ts")}.wasm`));
    const because = force ? "--force" : staleReason(job.entry, out, job.world ?? null);
    if (because === null) {
      report({ name: path.basename(job.entry, ".ts"), out, bytes: statSync(out).size, ms: 0, skipped: true, world: builtWorld(out) });
    } else {
      pending.push({ ...job, out, because });
    }
  }
  let failures = 0;
  const summary = () => ({ built: pending.length - failures, upToDate: jobs.length - pending.length, failed: failures });
  if (pending.length <= 1 || parallel <= 1 || !existsSync(WORKER)) {
    for (const job of pending) {
      try {
        report(await buildProxy({ ...job, force: true }));
      } catch (error) {
        failures++;
        reportError(error);
      }
    }
    return summary();
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
  return summary();
}
