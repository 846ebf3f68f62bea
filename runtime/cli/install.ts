/**
 * `cordon install [--config chain.json] [--offline] [--frozen] [--registry URL]`: puts into the
 * store exactly what the lock pins, never resolving a range for a locked entry. Each tarball is
 * fetched by its locked path on the configured registry (a mirror works), must have the locked
 * integrity (`EINTEGRITY` otherwise, naming both digests), and goes through every check `add` makes.
 *
 * - `--frozen` (the default when `CI` is set): config and lock must agree — every package entry
 *   locked with the same spec, no lock entry without one — or it fails naming the disagreement.
 * - Without it, entries missing from the lock are resolved as `add` would, but only granted as the
 *   config already grants (exit 3 otherwise), and lock entries the config no longer names are dropped.
 * - `--offline`: only the store; every entry it lacks is named.
 *
 * The invariant requested ⊆ granted is checked on the lock before anything is fetched, so a lock
 * edited to ask for more is refused. Everything is fetched and checked before anything is written.
 */
import { missingGrants } from "../distribution/authority.js";
import type { LockEntry } from "../distribution/lockfile.js";
import { registryFor } from "../distribution/npmrc.js";
import { fetchLocked, resolveSpec } from "../distribution/resolve.js";
import { parseSpec } from "../distribution/spec.js";
import { readStoredWasm, storeWasm } from "../distribution/store.js";
import { type ChainFiles, configFlag, openChain, packageEntries, registriesFor, saveChain } from "./chain-files.js";
import { EXIT, failure, parseCommand, UsageError } from "./distribution-command.js";

const USAGE = "usage: cordon install [--config chain.json] [--offline] [--frozen] [--registry <url>]\n";

const ciFrozen = () => !!process.env.CI && process.env.CI !== "false" && process.env.CI !== "0";

export async function install(argv: string[]): Promise<number> {
  let files: ChainFiles | undefined;
  try {
    const { values, positionals } = parseCommand("install", argv, ["config", "registry", "offline", "frozen"]);
    if (values.help) {
      process.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (positionals.length) throw new UsageError(`cordon install: takes no packages (cordon add <spec> adds one)\n${USAGE}`);
    const offline = values.offline === true;
    const frozen = values.frozen === true || ciFrozen();
    files = await openChain(values.config);
    const entries = packageEntries(files);
    const settings = registriesFor(files, values.registry);
    const lock = files.lock;

    const disagreements = [
      ...entries.flatMap((e) => {
        const locked = lock.proxies[e.name];
        if (!locked) return [`"${e.name}" (${e.package}) is not in the lock`];
        return locked.spec === e.package ? [] : [`"${e.name}" is ${e.package} in the config but ${locked.spec} in the lock`];
      }),
      ...Object.keys(lock.proxies)
        .filter((name) => !entries.some((e) => e.name === name))
        .map((name) => `the lock has "${name}", which the config does not`),
    ];
    if (frozen && disagreements.length) {
      process.stderr.write(
        `cordon install: --frozen${values.frozen ? "" : " (CI is set)"}: ${files.configPath} and its lock disagree:\n${disagreements.map((d) => `  - ${d}\n`).join("")}` +
          `  fix: run \`cordon install${configFlag(files.configPath)}\` without --frozen (or \`cordon update <name>\`) and commit the lock\n`,
      );
      return EXIT.refused;
    }

    // The invariant on what is locked, before any fetch.
    for (const e of entries) {
      const locked = lock.proxies[e.name];
      if (!locked || locked.spec !== e.package) continue;
      const missing = missingGrants(locked.requested, e.grants);
      if (missing.length) {
        process.stderr.write(
          `cordon install: "${e.name}": the lock pins ${locked.package}@${locked.version}, which requests ${missing.join(", ")}; the config does not grant ${missing.length === 1 ? "it" : "them"}: refused\n`,
        );
        return EXIT.approval;
      }
    }

    const next: Record<string, LockEntry> = {};
    const wasm: Uint8Array[] = [];
    const absent: string[] = [];
    for (const e of entries) {
      const locked = lock.proxies[e.name];
      if (locked && locked.spec === e.package) {
        if (offline) {
          const bytes = await readStoredWasm(locked.wasm.sha256);
          if (bytes === null) absent.push(`"${e.name}" ${locked.package}@${locked.version} (sha256 ${locked.wasm.sha256})`);
        } else {
          const fetched = await fetchLocked(locked, registryFor(locked.package, settings));
          wasm.push(fetched.pkg.wasm);
          for (const w of fetched.pkg.warnings) process.stderr.write(`cordon install: warning: ${w}\n`);
        }
        next[e.name] = locked;
        continue;
      }
      if (offline) {
        absent.push(`"${e.name}" ${e.package} (not locked; cannot be resolved offline)`);
        continue;
      }
      const spec = parseSpec(e.package);
      const fetched = await resolveSpec(spec, registryFor(spec.name, settings));
      const missing = missingGrants(fetched.entry.requested, e.grants);
      if (missing.length) {
        process.stderr.write(
          `cordon install: "${e.name}": ${fetched.entry.package}@${fetched.entry.version} requests ${missing.join(", ")}, which the config does not grant: not installed\n` +
            `  approve: cordon update ${e.name}${missing.map((g) => ` --grant ${g}`).join("")}${configFlag(files.configPath)}\n`,
        );
        return EXIT.approval;
      }
      wasm.push(fetched.pkg.wasm);
      next[e.name] = fetched.entry;
    }
    if (absent.length) {
      process.stderr.write(
        `cordon install: --offline: not in the local store:\n${absent.map((a) => `  - ${a}\n`).join("")}  run \`cordon install\` online\n`,
      );
      return EXIT.refused;
    }
    for (const bytes of wasm) await storeWasm(bytes);
    files.lock = { ...lock, proxies: next };
    await saveChain(files, { lockOnly: true });
    process.stdout.write(
      `installed ${entries.length} ${entries.length === 1 ? "proxy" : "proxies"} from ${files.lockPath}${offline ? " (offline, from the store)" : ""}\n`,
    );
    return EXIT.ok;
  } catch (error) {
    return failure("install", error); // thrown before anything was written
  } finally {
    await files?.release();
  }
}
