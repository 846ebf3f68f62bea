/**
 * Where Cordon's own package is — a checkout of the repository or the installed `@cordon/cli` —
 * found from a module inside it by walking up to the nearest `package.json` with Cordon's name.
 * It serves from the sources (tests) and from `dist/` alike. Cost: a few `stat`s and one JSON
 * parse per directory walked, so callers read it once.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The name the runtime package is published under (the root package.json's `name`). */
export const PACKAGE_NAME = "@cordon/cli";

/** The package's folder and version, or null when `from` is not inside it. */
export function findPackageRoot(from: string = import.meta.url): { dir: string; version: string } | null {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      try {
        const pkg = JSON.parse(readFileSync(candidate, "utf8")) as { name?: string; version?: string };
        if (pkg.name === PACKAGE_NAME && typeof pkg.version === "string") return { dir, version: pkg.version };
      } catch {
        // Not readable JSON: keep looking upwards.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

let root: string | undefined;

/**
 * A path inside Cordon's own package (`packagePath("bin", "cordon.js")`). Modules find their
 * package's files through this, not relative to their own location: `make build` also bundles the
 * start path into `dist/bundle/` (build/bundle.mjs), where `import.meta.url` is the bundle's.
 */
export function packagePath(...parts: string[]): string {
  root ??= findPackageRoot()?.dir;
  if (root === undefined) throw new Error(`cannot find the ${PACKAGE_NAME} package around ${import.meta.url}`);
  return join(root, ...parts);
}
