/**
 * The runtime package (`@cordon/cli`) installs only its `dependencies`, so every package the
 * runtime's own modules import must be one of them — not a devDependency, and not the SDK's
 * toolchain (assemblyscript, json-as, jco-transpile and the binaryen it drags in), which running a
 * chain must never need. A static scan of runtime/ and bin/; `package-install.test.ts` checks
 * the same from a real install.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_NAME } from "../runtime/package-root.js";
import { ROOT } from "./helpers/paths.js";

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.(ts|js|mjs)$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [path] : [];
  });
}

/** `x` of `from "x"`, `import("x")`, `require("x")`, reduced to its package name; none for node:, relative paths and prose. */
function importedPackages(text: string): string[] {
  const found = [...text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)["']([^"']+)["']/g)].map((m) => m[1]);
  return found
    .filter((s) => /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/[\w./-]*)?$/.test(s)) // a package specifier, not prose or a path
    .map((s) =>
      s
        .split("/")
        .slice(0, s.startsWith("@") ? 2 : 1)
        .join("/"),
    );
}

describe("the runtime package's dependencies", () => {
  it("cover every package the runtime imports, and hold none of the build toolchain", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(pkg.name).toBe(PACKAGE_NAME);
    const dependencies = Object.keys(pkg.dependencies);
    for (const tool of ["assemblyscript", "json-as", "@bytecodealliance/jco-transpile", "binaryen"])
      expect(dependencies).not.toContain(tool);
    const missing: string[] = [];
    for (const file of [...sources(join(ROOT, "runtime")), ...sources(join(ROOT, "bin"))]) {
      for (const name of importedPackages(readFileSync(file, "utf8"))) {
        if (name !== PACKAGE_NAME && !dependencies.includes(name)) missing.push(`${relative(ROOT, file)} imports ${name}`);
      }
    }
    expect(missing, "not a dependency of the runtime package").toEqual([]);
  });
});
