/**
 * cordon-build-proxy (= `cordon build`): AssemblyScript proxy source → WebAssembly component.
 *
 *   cordon-build-proxy                                  the project's proxy (package.json "cordon")
 *   cordon-build-proxy <entry.ts> [-o <out.wasm>] [--world <world>] [--force]
 *   cordon-build-proxy --all <dir> [--out-dir <dir>] [--world <world>] [--force]
 *
 * `--all proxies` builds every `proxies/<name>/<name>.ts` into `proxies/dist/<name>.wasm`.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { type BuildJob, buildAll, findProxies } from "./build.js";
import { WORLDS, type World } from "./compose.js";
import type { BuildError } from "./errors.js";
import { findProject } from "./project.js";

export function usage(command = "cordon-build-proxy"): string {
  const pad = " ".repeat(command.length);
  return [
    `usage: ${command} [<entry.ts>] [-o <out.wasm>] [--world <world>] [--force]`,
    `       ${command} --all <dir> [--out-dir <dir>] [--world <world>] [--force]`,
    `       ${pad} (no entry: the project's proxy, from package.json "cordon": {"entry", "out"})`,
    "",
    "  <entry.ts>      an AssemblyScript file that calls register(new MyProxy())",
    "  -o <out.wasm>   component to write (default: next to the source)",
    "  --all <dir>     build every <dir>/<name>/<name>.ts into <dir>/dist/<name>.wasm",
    "  --out-dir <d>   with --all: where the components go (default <dir>/dist)",
    "  --world <w>     proxy | proxy-wasi (default: proxy-wasi exactly when the proxy uses the",
    "                  SDK's Clock/Random; such a proxy needs the grants wasi:clocks, wasi:random)",
    "  --force         rebuild even when nothing it is built from changed (by content)",
  ].join("\n");
}

/** Runs the build command line; returns the exit code. */
export async function main(argv: string[], command = "cordon-build-proxy"): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        all: { type: "string" },
        out: { type: "string", short: "o" },
        "out-dir": { type: "string" },
        world: { type: "string" },
        force: { type: "boolean", short: "f" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n${usage(command)}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${usage(command)}\n`);
    return 0;
  }
  const world = (values.world ?? null) as World | null;
  if (world !== null && !WORLDS.includes(world)) {
    process.stderr.write(`error: --world takes one of ${WORLDS.join(", ")}\n${usage(command)}\n`);
    return 2;
  }
  const force = values.force ?? false;
  const all = values.all;
  if (positionals.length > 1 || (all !== undefined && (positionals.length || values.out))) {
    process.stderr.write(`${all !== undefined ? "error: --all takes no entry file and no -o\n" : ""}${usage(command)}\n`);
    return 2;
  }
  const started = performance.now();
  let jobs: BuildJob[];
  if (all !== undefined) {
    if (!existsSync(all)) {
      process.stderr.write(`error: no such directory ${all}\n`);
      return 1;
    }
    const dist = values["out-dir"] ?? path.join(all, "dist");
    jobs = findProxies(all).map((entry) => ({ entry, out: path.join(dist, `${path.basename(entry, ".ts")}.wasm`), world }));
    if (!jobs.length) {
      process.stderr.write(`error: no <name>/<name>.ts proxies under ${all}\n`);
      return 1;
    }
  } else if (positionals.length === 1) {
    jobs = [{ entry: positionals[0], out: values.out, world }];
  } else {
    let project;
    try {
      project = findProject();
    } catch (error) {
      process.stderr.write(`error: ${(error as BuildError).message}\n`);
      return 1;
    }
    if (!project) {
      process.stderr.write(`${usage(command)}\n`);
      return 2;
    }
    jobs = [{ entry: project.entry, out: values.out ?? project.out, world: world ?? project.world }];
  }
  const { built, upToDate, failed } = await buildAll(jobs, { force });
  if (jobs.length > 1) {
    const what = failed
      ? `${failed} of ${jobs.length} proxies failed`
      : built
        ? `${jobs.length} proxies ok (${built} built, ${upToDate} up to date)`
        : `${jobs.length} proxies ok (all up to date, nothing rebuilt)`;
    process.stderr.write(`${what} in ${((performance.now() - started) / 1000).toFixed(2)} s\n`);
  }
  return failed ? 1 : 0;
}
