/**
 * Cordon's version as the reference agent reports it (`agentInfo.version`, the MCP client's
 * `clientInfo.version`): the `version` of Cordon's package.json (`findPackageRoot`), so it is right
 * both from the sources (tests) and from `dist/`. Read once per process, then cached; `0.0.0` when
 * there is none.
 */
import { findPackageRoot } from "../package-root.js";

let version: string | undefined;

export function cordonVersion(): string {
  version ??= findPackageRoot()?.version ?? "0.0.0";
  return version;
}
