/**
 * Where the author verbs (`cordon build`, `cordon test`, and the build `cordon pack` runs) find
 * the proxy SDK's tools. Those tools need the AssemblyScript toolchain, which the runtime package
 * leaves out so that running chains installs no build tooling; they come from the SDK package,
 * `@cordon/sdk-as`, in this order:
 * 1. the one the project in the working folder depends on (what `cordon new` sets up), resolved
 *    as Node resolves it from there, so a project builds with the SDK version it pins;
 * 2. in a checkout of the repository, the repository's compiled SDK (`dist/sdk-as/`, `make build`).
 * Otherwise the caller gets a message saying exactly what to install.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { findPackageRoot, PACKAGE_NAME } from "../package-root.js";

const SDK_PACKAGE = "@cordon/sdk-as";

/** A tool's command-line entry: `main(argv, command)` → exit code. */
type ToolMain = (argv: string[], command: string) => Promise<number>;

/** The compiled tool, relative to a `dist/` folder. */
export type SdkTool = "sdk-as/tools/cli.js" | "sdk-as/testing/cli.js";

interface Places {
  /** The folder whose project's SDK is used (default: the working folder). */
  cwd?: string;
  /** Cordon's own package, for the checkout fallback (default: this package). */
  cordon?: { dir: string; version: string } | null;
}

function isCordonRoot(dir: string): boolean {
  try {
    return JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).name === PACKAGE_NAME;
  } catch {
    return false;
  }
}

/** The project's SDK folder, if the project in `cwd` (or a folder above it) has it installed. */
function projectSdk(cwd: string): string | null {
  try {
    return path.dirname(createRequire(path.join(cwd, "package.json")).resolve(`${SDK_PACKAGE}/package.json`));
  } catch {
    return null;
  }
}

/** The file of `tool` to run, or a message saying what to install (`command` names the verb). */
export function locateSdkTool(tool: SdkTool, command: string, places: Places = {}): { file: string } | { problem: string } {
  const cwd = places.cwd ?? process.cwd();
  const candidates: string[] = [];
  const sdk = projectSdk(cwd);
  if (sdk) {
    candidates.push(path.join(sdk, "dist", tool)); // the published SDK carries its compiled tools
    // The repository's workspace link (node_modules/@cordon/sdk-as → sdk-as/): compiled into the repository's dist/.
    if (isCordonRoot(path.dirname(sdk))) candidates.push(path.join(path.dirname(sdk), "dist", tool));
  }
  const cordon = places.cordon === undefined ? findPackageRoot() : places.cordon;
  if (cordon && existsSync(path.join(cordon.dir, "sdk-as", "package.json"))) candidates.push(path.join(cordon.dir, "dist", tool));
  const file = candidates.find((f) => existsSync(f));
  if (file) return { file };
  const spec = cordon ? `${SDK_PACKAGE}@^${cordon.version}` : SDK_PACKAGE;
  const problem = sdk
    ? `${command}: ${SDK_PACKAGE} in ${sdk} has no compiled tools (dist/${tool}); reinstall it: npm install --save-dev ${spec}`
    : [
        `${command}: needs the proxy SDK, ${SDK_PACKAGE}, which is not installed for ${cwd}.`,
        `  It carries the build tool, the testing kit and the AssemblyScript toolchain (the ${PACKAGE_NAME} package leaves them out).`,
        "  In a project made by `cordon new`: npm install",
        `  In another project: npm install --save-dev ${spec}   (or a packed SDK: npm install --save-dev ./cordon-sdk-as-<version>.tgz)`,
      ].join("\n");
  return { problem };
}

/** Runs an SDK tool's command line; exit 1 with the message when the SDK is not there. */
export async function runSdkTool(tool: SdkTool, argv: string[], command: string): Promise<number> {
  const found = locateSdkTool(tool, command);
  if ("problem" in found) {
    process.stderr.write(`${found.problem}\n`);
    return 1;
  }
  const { main } = (await import(pathToFileURL(found.file).href)) as { main: ToolMain };
  return main(argv, command);
}
