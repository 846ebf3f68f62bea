/**
 * `cordon pack [<project dir>] [--no-build] [--json]`: builds the proxy project (through `cordon
 * build`, as the project's own build does), checks it, and writes the publishable tarball into the
 * project folder (`distribution/pack.ts`). Then `npm publish ./<tarball>` publishes it.
 */
import { resolve } from "node:path";
import { packProject } from "../distribution/pack.js";
import { EXIT, failure, parseCommand, UsageError } from "./distribution-command.js";

const USAGE = "usage: cordon pack [<project dir>] [--no-build] [--json]\n";

export async function pack(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseCommand("pack", argv, ["no-build", "json"]);
    if (values.help) {
      process.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (positionals.length > 1) throw new UsageError(`cordon pack: give at most one project folder\n${USAGE}`);
    const dir = resolve(positionals[0] ?? ".");
    if (!values["no-build"]) {
      const { build } = await import("./build.js");
      const cwd = process.cwd();
      process.chdir(dir); // the build finds the project in the working folder
      try {
        const code = await build([]);
        if (code !== 0) {
          process.stderr.write("cordon pack: the build failed; nothing packed\n");
          return code;
        }
      } finally {
        process.chdir(cwd);
      }
    }
    const packed = await packProject(dir);
    if (values.json) {
      const { file, integrity, size, pkg } = packed;
      process.stdout.write(
        `${JSON.stringify({ file, integrity, size, name: pkg.name, version: pkg.version, sha256: pkg.sha256, requested: pkg.requested }, null, 2)}\n`,
      );
    } else {
      process.stdout.write(
        `packed ${packed.pkg.name}@${packed.pkg.version} → ${packed.file} (${(packed.size / 1024).toFixed(1)} KiB)\n  integrity ${packed.integrity}\n  publish: npm publish ${packed.file}\n`,
      );
    }
    return EXIT.ok;
  } catch (error) {
    return failure("pack", error);
  }
}
