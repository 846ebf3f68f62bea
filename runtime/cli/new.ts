/**
 * `cordon new <name>`: scaffolds a proxy project from `templates/proxy/` — package.json depending on
 * the SDK package (`@cordon/sdk-as`: the SDK, its build tool, the testing kit and the AssemblyScript
 * toolchain, none of which the runtime package carries), the proxy's source and manifest, a unit
 * test, a golden transcript and a README — and installs it, so that
 * `cd <name> && npm run build && npm test` work at once.
 *
 * The SDK comes from, in order: `--sdk <spec>` (an npm spec, or a path to a packed `.tgz`, which is
 * copied into the project's `vendor/` so the project does not depend on where it was); in a
 * checkout of the repository, the repository's `sdk-as/` packed on the spot; otherwise the
 * registry's `@cordon/sdk-as@^<this Cordon's version>`.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { findPackageRoot, PACKAGE_NAME } from "../package-root.js";

const USAGE = `usage: cordon new <name> [--sdk <npm spec | path/to/sdk.tgz>] [--no-install]

  Scaffolds a proxy project in ./<name>: src/<name>.ts, its manifest, a unit test
  (test/<name>.test.mjs), a golden transcript (test/<name>.jsonl) and a README, and runs npm install.
  Then: cd <name> && npm run build && npm test.
`;

const NAME = /^[a-z][a-z0-9-]{0,62}[a-z0-9]$/;

function className(name: string): string {
  return name
    .split("-")
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join("");
}

function render(text: string, vars: Record<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (all, key: string) => vars[key] ?? all);
}

/** Copies the template tree, renaming `__name__` in file names and `gitignore` to `.gitignore`. */
function copyTemplate(from: string, to: string, vars: Record<string, string>): string[] {
  const written: string[] = [];
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const target = path.join(to, entry.name === "gitignore" ? ".gitignore" : entry.name.replace(/__name__/g, vars.name));
    const source = path.join(from, entry.name);
    if (entry.isDirectory()) written.push(...copyTemplate(source, target, vars));
    else {
      writeFileSync(target, render(readFileSync(source, "utf8"), vars));
      written.push(target);
    }
  }
  return written;
}

/** The SDK dependency spec for the project, copying a tarball into `<project>/vendor/` when there is one. */
function sdkSpec(root: string, version: string, project: string, requested: string | undefined): string {
  const vendor = path.join(project, "vendor");
  const useTarball = (tgz: string) => {
    mkdirSync(vendor, { recursive: true });
    copyFileSync(tgz, path.join(vendor, path.basename(tgz)));
    return `file:vendor/${path.basename(tgz)}`;
  };
  if (requested !== undefined) {
    const asPath = path.resolve(requested);
    if (requested.endsWith(".tgz") && existsSync(asPath) && statSync(asPath).isFile()) return useTarball(asPath);
    return requested;
  }
  if (existsSync(path.join(root, "sdk-as", "package.json"))) {
    // A checkout of the repository: pack its SDK (prepack compiles the tools into the tarball).
    mkdirSync(vendor, { recursive: true });
    const out = execFileSync("npm", ["pack", path.join(root, "sdk-as"), "--pack-destination", vendor, "--silent"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    const file = out.trim().split("\n").pop()!;
    return `file:vendor/${path.basename(file)}`;
  }
  return `^${version}`;
}

export async function newProject(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { sdk: { type: "string" }, "no-install": { type: "boolean" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`cordon new: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [name, ...extra] = parsed.positionals;
  if (!name || extra.length) {
    process.stderr.write(USAGE);
    return 2;
  }
  if (!NAME.test(name)) {
    process.stderr.write(
      `cordon new: "${name}" is not a usable proxy name: lower-case letters, digits and dashes, starting with a letter\n`,
    );
    return 2;
  }
  const project = path.resolve(name);
  if (existsSync(project) && readdirSync(project).length > 0) {
    process.stderr.write(`cordon new: ${project} already exists and is not empty\n`);
    return 1;
  }
  const cordon = findPackageRoot();
  if (!cordon) throw new Error(`cannot find the ${PACKAGE_NAME} package root`);
  const root = cordon.dir;
  const template = path.join(root, "templates", "proxy");
  let sdk: string;
  try {
    mkdirSync(project, { recursive: true });
    sdk = sdkSpec(root, cordon.version, project, parsed.values.sdk);
  } catch (error) {
    process.stderr.write(`cordon new: could not get the SDK package: ${(error as Error).message}\n`);
    return 1;
  }
  const files = copyTemplate(template, project, { name, className: className(name), sdk });
  process.stderr.write(`created ${project}\n${files.map((f) => `  ${path.relative(project, f)}\n`).join("")}  (@cordon/sdk-as: ${sdk})\n`);
  if (!parsed.values["no-install"]) {
    process.stderr.write("installing (npm install)…\n");
    const npm = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], {
      cwd: project,
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (npm.status !== 0) {
      const fromRegistry = sdk === `^${cordon.version}`;
      const hint = fromRegistry
        ? ` (the SDK was asked of the registry as @cordon/sdk-as@${sdk}; a packed one is used with --sdk path/to/cordon-sdk-as-${cordon.version}.tgz)`
        : "";
      process.stderr.write(`cordon new: npm install failed in ${project}${hint}; fix it and run npm install there\n`);
      return 1;
    }
  }
  process.stderr.write(
    `\nnext:\n  cd ${name}\n  npm run build     # dist/${name}.wasm\n  npm test\n  cordon run --proxy dist/${name}.wasm -- cordon reference-agent\n`,
  );
  return 0;
}
