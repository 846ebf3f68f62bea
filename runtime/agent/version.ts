/**
 * Cordon's version as the reference agent reports it (`agentInfo.version`, the MCP client's
 * `clientInfo.version`): the `version` of the nearest `package.json` named `cordon` above this module,
 * so it is right both from the sources (tests) and from `dist/`. Read once per process, then cached;
 * `0.0.0` when there is none.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let version: string | undefined;

export function cordonVersion(): string {
  if (version !== undefined) return version;
  version = "0.0.0";
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      try {
        const pkg = JSON.parse(readFileSync(candidate, "utf8")) as { name?: string; version?: string };
        if (pkg.name === "cordon" && typeof pkg.version === "string") {
          version = pkg.version;
          break;
        }
      } catch {
        // Not readable JSON: keep looking upwards.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return version;
}
