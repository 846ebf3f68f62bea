/**
 * A proxy's manifest: found next to its source, checked with the runtime's own check (the one the
 * loader applies to the embedded section), and written as the component's `cordon:manifest`
 * custom section.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { MANIFEST_SECTION, manifestProblem } from "../../runtime/sandbox/manifest.js";
import { BuildError, firstLine } from "./errors.js";

export { MANIFEST_SECTION };

/** Where a proxy's manifest may be: `<name>.manifest.json`, or `manifest.json` in its own `<name>/` directory. */
export function manifestCandidates(entry: string): string[] {
  const dir = path.dirname(entry);
  const name = path.basename(entry, ".ts");
  const list = [path.join(dir, `${name}.manifest.json`)];
  if (path.basename(dir) === name) list.push(path.join(dir, "manifest.json"));
  return list;
}

/** Reads and checks the proxy's manifest: `{ file, json }` (compact JSON text), or null when there is none. */
export function readManifestFor(entry: string): { file: string; json: string } | null {
  const name = path.basename(entry, ".ts");
  const file = manifestCandidates(path.resolve(entry)).find((f) => existsSync(f));
  if (!file) return null;
  const rel = path.relative(process.cwd(), file) || file;
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new BuildError(`${name}: ${rel} is not valid JSON (${firstLine(error)})`);
  }
  const problem = manifestProblem(manifest);
  if (problem) throw new BuildError(`${name}: ${rel}: ${problem}`);
  return { file: realpathSync(file), json: JSON.stringify(manifest) };
}

function leb128(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

/** Appends a top-level custom section to a component (or module) binary. */
export function withCustomSection(binary: Uint8Array, name: string, payload: string): Uint8Array {
  const nameBytes = Buffer.from(name, "utf8");
  const body = Buffer.concat([Buffer.from(leb128(nameBytes.length)), nameBytes, Buffer.from(payload, "utf8")]);
  return Buffer.concat([binary, Buffer.from([0, ...leb128(body.length)]), body]);
}
