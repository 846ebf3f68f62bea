/**
 * What `cordon run` and `cordon check` run for a `package` entry: the component the lock pins,
 * from the store, with the lock's sha256 as its pin (so the bytes are re-hashed at every load),
 * never a range resolved now. Refused, with the command that fixes it, when the entry is not
 * locked, when config and lock disagree on the spec, when the stored file is missing, or when the
 * locked version requests more than the entry grants (a hand-edited lock included).
 */
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import type { PackageProxyEntry, WasmProxyEntry } from "../cli/chain-config.js";
import { missingGrants } from "./authority.js";
import { LockfileError, lockPathFor, readLockfile } from "./lockfile.js";
import { storedWasmPath } from "./store.js";

type Positioned = PackageProxyEntry & { index: number };

export async function lockedWasm(configPath: string, entries: (Positioned | null)[]): Promise<(WasmProxyEntry | null)[]> {
  const lockPath = lockPathFor(configPath);
  const lock = await readLockfile(lockPath);
  const lockName = basename(lockPath);
  return Promise.all(
    entries.map(async (entry) => {
      if (entry === null) return null;
      const { index, package: spec, ...rest } = entry;
      const where = `${basename(configPath)}: proxies[${index}] "${entry.name}" (${spec})`;
      const locked = lock.proxies[entry.name];
      if (!locked) throw new LockfileError(`${where} is not installed (no entry in ${lockName}): run \`cordon install\``);
      if (locked.spec !== spec) {
        throw new LockfileError(
          `${where}: ${lockName} has it as ${locked.spec}: run \`cordon install\` (or \`cordon update ${entry.name}\`)`,
        );
      }
      const missing = missingGrants(locked.requested, entry.grants);
      if (missing.length) {
        throw new LockfileError(
          `${where}: the locked ${locked.package}@${locked.version} requests ${missing.join(", ")}, which the config does not grant: refused (approve with \`cordon update ${entry.name} ${missing.map((g) => `--grant ${g}`).join(" ")}\`)`,
        );
      }
      const path = storedWasmPath(locked.wasm.sha256);
      try {
        await stat(path);
      } catch {
        throw new LockfileError(
          `${where}: ${locked.package}@${locked.version} is not in the local store (${path}): run \`cordon install\``,
        );
      }
      const pinned = { spec, package: locked.package, version: locked.version };
      return { ...rest, wasm: path, sha256: locked.wasm.sha256, grants: entry.grants, locked: pinned } as WasmProxyEntry;
    }),
  );
}
