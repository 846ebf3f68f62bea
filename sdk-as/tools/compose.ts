/**
 * Composing a proxy build: where the SDK's AssemblyScript sources and the WIT contract are (in
 * the SDK package, in the Cordon package, or in the repository), the worlds a proxy can be built
 * for, and the generated entry module that imports the author's file and exports the SDK's ABI.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BuildError } from "./errors.js";

export const SDK_PACKAGE = "@cordon/sdk-as";
/** Internal (asc) path of the SDK's ABI module, as seen through the package import. */
export const ABI_MODULE = `${SDK_PACKAGE}/assembly/abi`;
/** Suffix of the generated entry module, which lives only in memory, next to the author's file. */
export const ENTRY_SUFFIX = ".cordon-entry.ts";

/** The worlds a proxy can be built for. */
export const WORLDS = ["proxy", "proxy-wasi"] as const;
export type World = (typeof WORLDS)[number];

const HERE = path.dirname(fileURLToPath(import.meta.url));

let sdkRoot: string | null = null;

/**
 * The SDK directory (the one holding `assembly/abi.ts` and `index.ts`): this tool's own package
 * (`<pkg>/dist/sdk-as/tools` → `<pkg>`), the repository's `sdk-as/` (sources or `dist/`), or the
 * Cordon package's bundled copy.
 */
export function findSdkRoot(): string {
  if (sdkRoot) return sdkRoot;
  let dir = HERE;
  for (let i = 0; i < 6; i++) {
    for (const candidate of [dir, path.join(dir, "sdk-as")]) {
      if (existsSync(path.join(candidate, "assembly", "abi.ts")) && existsSync(path.join(candidate, "index.ts"))) {
        return (sdkRoot = candidate);
      }
    }
    dir = path.dirname(dir);
  }
  throw new BuildError(`cannot find the SDK's AssemblyScript sources (assembly/abi.ts) above ${HERE}`);
}

/** The WIT contract: shipped inside the SDK package (`wit/proxy.wit`) or at the repository root. */
export function findWit(): string {
  const root = findSdkRoot();
  for (const candidate of [path.join(root, "wit", "proxy.wit"), path.join(root, "..", "wit", "proxy.wit")]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new BuildError(`cannot find wit/proxy.wit next to ${root}`);
}

/** The SDK's variant world with the wall clock and randomness (`proxy-wasi`). */
export function findWasiWit(): string {
  const file = path.join(findSdkRoot(), "wit", "proxy-wasi.wit");
  if (!existsSync(file)) throw new BuildError(`cannot find ${file}`);
  return file;
}

/** The WIT text to embed a core module with, for `world`. */
export function witSourceFor(world: World): string {
  const base = readFileSync(findWit(), "utf8");
  if (world === "proxy") return base;
  // proxy-wasi.wit includes `cordon:proxy/proxy@0.1.0`: add wit/proxy.wit as a nested package.
  const nested = base.replace(/^(\s*(?:\/\/[^\n]*\n\s*)*)package\s+([^;\s]+)\s*;/, "$1package $2 {");
  if (nested === base) throw new BuildError(`${findWit()} does not start with a package declaration`);
  return `${readFileSync(findWasiWit(), "utf8")}\n${nested}\n}\n`;
}

/**
 * The generated entry: imported for its top-level code (the author's `register(new MyProxy())`);
 * the exports come from the SDK, so the author never re-exports anything.
 */
export function entrySource(authorFile: string): string {
  return [`import "./${path.basename(authorFile, ".ts")}";`, `export { cordon_receive, cabi_realloc } from "${ABI_MODULE}";`, ""].join(
    "\n",
  );
}
