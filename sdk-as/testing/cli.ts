/**
 * cordon-test-proxy (= `cordon test`): tests a built proxy.
 *
 *   cordon-test-proxy                                  in a proxy project (package.json "cordon"):
 *                                                      build it when stale, replay every test/**\/*.jsonl
 *                                                      transcript against it, then run test/**\/*.test.{js,mjs}
 *                                                      with node --test
 *   cordon-test-proxy <proxy.wasm> <transcript.jsonl>... [--grant wasi:clocks]...
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { buildMany } from "../tools/build.js";
import { findProject } from "../tools/project.js";
import { runTranscriptFile } from "./transcript.js";

function usage(command = "cordon-test-proxy"): string {
  return [
    `usage: ${command}                                   (in a proxy project: build, transcripts, node --test)`,
    `       ${command} <proxy.wasm> <transcript.jsonl>... [--grant <grant>]...`,
    "",
    '  transcript.jsonl   a golden transcript: one JSON object per line (see the SDK README, "Golden transcripts")',
    "  --grant <g>        WASI the chain would grant (wasi:clocks, wasi:random) for a proxy-wasi proxy",
  ].join("\n");
}

function filesUnder(dir: string, test: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(file, test));
    else if (test(entry.name)) out.push(file);
  }
  return out.sort();
}

async function transcripts(wasm: string, files: string[], grants: string[]): Promise<number> {
  let failed = 0;
  for (const file of files) {
    const rel = path.relative(process.cwd(), file) || file;
    const result = await runTranscriptFile(wasm, file, { grants });
    if (result.ok) process.stdout.write(`ok    ${rel} (${result.steps} steps)\n`);
    else {
      failed++;
      process.stdout.write(`FAIL  ${rel}:${result.failure!.line}: ${result.failure!.message}\n`);
    }
  }
  return failed;
}

export async function main(argv: string[], command = "cordon-test-proxy"): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { grant: { type: "string", multiple: true }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n${usage(command)}\n`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(`${usage(command)}\n`);
    return 0;
  }
  const grants = parsed.values.grant ?? [];
  const args = parsed.positionals;
  if (args.length > 0) {
    const [wasm, ...files] = args;
    if (!wasm.endsWith(".wasm") || files.length === 0) {
      process.stderr.write(`${usage(command)}\n`);
      return 2;
    }
    try {
      const failed = await transcripts(wasm, files, grants);
      return failed ? 1 : 0;
    } catch (error) {
      process.stderr.write(`error: ${(error as Error).message}\n`);
      return 1;
    }
  }
  let project;
  try {
    project = findProject();
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    return 1;
  }
  if (!project) {
    process.stderr.write(`${usage(command)}\n`);
    return 2;
  }
  if (await buildMany([{ entry: project.entry, out: project.out, world: project.world }])) return 1;
  const testDir = path.join(project.dir, "test");
  let failed = await transcripts(
    project.out,
    filesUnder(testDir, (n) => n.endsWith(".jsonl")),
    grants,
  );
  const tests = filesUnder(testDir, (n) => /\.test\.(js|mjs|cjs)$/.test(n));
  if (tests.length) {
    const run = spawnSync(process.execPath, ["--test", ...tests], { stdio: "inherit", cwd: project.dir });
    if (run.status !== 0) failed++;
  }
  if (!tests.length && !filesUnder(testDir, (n) => n.endsWith(".jsonl")).length) {
    process.stderr.write(
      `${command}: no tests under ${path.relative(process.cwd(), testDir) || testDir} (*.test.mjs, *.jsonl transcripts)\n`,
    );
    return 1;
  }
  return failed ? 1 : 0;
}
