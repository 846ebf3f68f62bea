/**
 * `cordon info <spec> [--registry URL] [--json]`: what a package version is before installing it —
 * fetched and verified exactly as `add` does (so a package `info` shows is one `add` accepts), then
 * its manifest, requested grants in plain words, and the registry's versions and tags. Writes
 * nothing but the component-validation cache.
 */
import { dirname, resolve } from "node:path";
import { registryFor, registrySettings } from "../distribution/npmrc.js";
import { resolveSpec } from "../distribution/resolve.js";
import { parseSpec } from "../distribution/spec.js";
import { DEFAULT_CONFIG } from "./chain-files.js";
import { describeFetched, EXIT, failure, parseCommand, UsageError } from "./distribution-command.js";

const USAGE = "usage: cordon info <spec> [--registry <url>] [--config chain.json] [--json]\n";

export async function info(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseCommand("info", argv, ["config", "registry", "json"]);
    if (values.help) {
      process.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (positionals.length !== 1) throw new UsageError(`cordon info: give exactly one package spec\n${USAGE}`);
    const spec = parseSpec(positionals[0]);
    const settings = registrySettings(dirname(resolve(values.config ?? DEFAULT_CONFIG)), values.registry);
    const fetched = await resolveSpec(spec, registryFor(spec.name, settings));
    if (values.json) {
      const { entry, pkg, versions, deprecated } = fetched;
      process.stdout.write(
        `${JSON.stringify({ ...entry, manifest: pkg.manifest, versions, deprecated, warnings: pkg.warnings }, null, 2)}\n`,
      );
      return EXIT.ok;
    }
    process.stdout.write(describeFetched(fetched));
    const m = fetched.pkg.manifest;
    process.stdout.write(
      `  config schema ${m.config ? JSON.stringify(m.config) : "none declared"}\n  versions ${fetched.versions.join(", ")}\n`,
    );
    return EXIT.ok;
  } catch (error) {
    return failure("info", error);
  }
}
