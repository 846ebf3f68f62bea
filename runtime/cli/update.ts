/**
 * `cordon update [name...] [--grant G]... [--config chain.json] [--registry URL]`: re-resolves each
 * package entry's spec (all of them without names) and moves to the version it selects — unless
 * that version requests a grant or WASI import the config does not give (counting `--grant`, and on
 * a terminal the answers to a prompt). Such an update is **not applied**: that entry's lock and
 * config stay as they were, so the old version keeps running, and the difference is printed in
 * plain words with the command that approves it; the command exits 3. Grants the new version no
 * longer requests are revoked from the config, so asking for them again means asking the user again.
 * A version whose config schema rejects the entry's `config` is not applied either (exit 1).
 * Entries are decided one by one; the applied ones are written together, each file atomically
 * (`--dry-run`: decided and printed, nothing written).
 */
import { grantLines, missingGrants } from "../distribution/authority.js";
import type { LockEntry } from "../distribution/lockfile.js";
import { registryFor } from "../distribution/npmrc.js";
import { requestedAuthority } from "../distribution/package-contents.js";
import { resolveSpec } from "../distribution/resolve.js";
import { parseSpec } from "../distribution/spec.js";
import { storeWasm } from "../distribution/store.js";
import { configProblems } from "../sandbox/manifest.js";
import { type ChainFiles, configFlag, openChain, packageEntries, registriesFor, saveChain } from "./chain-files.js";
import { askGrants, EXIT, failure, grantFlags, interactive, parseCommand, UsageError } from "./distribution-command.js";

const USAGE = "usage: cordon update [<name>...] [--grant <grant>]... [--dry-run] [--json] [--config chain.json] [--registry <url>]\n";

/** One entry's outcome, as `--json` prints it (for editors and CI). */
interface Decision {
  name: string;
  from: { package: string; version: string } | null;
  to: { package: string; version: string };
  status: "up-to-date" | "updated" | "needs-approval" | "config-rejected";
  /** Grants (and WASI) the new version requests that the entry did not give: approved, or still needed. */
  newGrants: string[];
  revoked: string[];
  approve?: string;
  problems?: string[];
}

export async function update(argv: string[]): Promise<number> {
  let files: ChainFiles | undefined;
  try {
    const { values, positionals } = parseCommand("update", argv, ["config", "registry", "grant", "dry-run", "json"]);
    if (values.help) {
      process.stdout.write(USAGE);
      return EXIT.ok;
    }
    const given = grantFlags(values.grant);
    files = await openChain(values.config);
    const all = packageEntries(files);
    const unknown = positionals.filter((n) => !all.some((e) => e.name === n));
    if (unknown.length)
      throw new UsageError(`cordon update: no package entry named ${unknown.map((n) => `"${n}"`).join(", ")} in ${files.configPath}`);
    const chosen = positionals.length ? all.filter((e) => positionals.includes(e.name)) : all;
    const settings = registriesFor(files, values.registry);

    const applied: { index: number; name: string; entry: LockEntry; grants: string[]; wasm: Uint8Array }[] = [];
    const decisions: Decision[] = [];
    // With --json, the lines for people go to stderr and stdout carries only the decisions.
    const say = (text: string) => (values.json ? process.stderr : process.stdout).write(text);
    for (const e of chosen) {
      const spec = parseSpec(e.package);
      const fetched = await resolveSpec(spec, registryFor(spec.name, settings));
      const old = files.lock.proxies[e.name];
      const from = old ? `${old.package} ${old.version}` : `${e.package} (not locked)`;
      const to = `${fetched.entry.package} ${fetched.entry.version}`;
      const decision = (status: Decision["status"], more: Partial<Decision> = {}) =>
        decisions.push({
          name: e.name,
          from: old ? { package: old.package, version: old.version } : null,
          to: { package: fetched.entry.package, version: fetched.entry.version },
          status,
          newGrants: [],
          revoked: [],
          ...more,
        });
      if (old && old.integrity === fetched.entry.integrity && old.spec === fetched.entry.spec) {
        say(`${e.name}  ${from}  up to date\n`);
        decision("up-to-date");
        continue;
      }
      const problems = await configProblems(fetched.pkg.manifest, e.config ?? {});
      if (problems.length) {
        decision("config-rejected", { problems });
        say(
          [
            `${e.name}  ${from} → ${to}   NOT UPDATED: its config schema rejects this entry's config`,
            ...problems.map((p) => `  ${p}`),
            "",
          ].join("\n"),
        );
        continue;
      }
      const requested = requestedAuthority(fetched.entry.requested);
      let granted = [...new Set([...e.grants, ...given])];
      const missing = missingGrants(fetched.entry.requested, granted);
      if (missing.length && interactive()) {
        say(`${e.name}  ${from} → ${to} asks for more:\n`);
        granted = [...granted, ...(await askGrants(missing))];
      }
      const still = missingGrants(fetched.entry.requested, granted);
      if (still.length) {
        const approve = `cordon update ${e.name}${still.map((g) => ` --grant ${g}`).join("")}${configFlag(files.configPath)}`;
        decision("needs-approval", { newGrants: still, approve });
        say(
          [
            `${e.name}  ${from} → ${to}   NOT UPDATED: asks for more`,
            ...grantLines(still, "+"),
            `  the chain keeps running ${old ? `${old.package} ${old.version}` : "without it"}`,
            `  approve: ${approve}`,
            "",
          ].join("\n"),
        );
        continue;
      }
      const kept = granted.filter((g) => requested.includes(g)).sort();
      const revoked = e.grants.filter((g) => !requested.includes(g));
      const added = kept.filter((g) => !e.grants.includes(g));
      decision("updated", { newGrants: added, revoked });
      say(
        [
          `${e.name}  ${from} → ${to}   updated`,
          ...grantLines(added, "+"),
          ...grantLines(revoked, "-").map((l) => `${l}   (revoked: ${fetched.entry.version} no longer requests it)`),
          "",
        ].join("\n"),
      );
      applied.push({ index: e.index, name: e.name, entry: fetched.entry, grants: kept, wasm: fetched.pkg.wasm });
    }
    if (applied.length && values["dry-run"]) say("(--dry-run: nothing written)\n");
    else if (applied.length) {
      for (const a of applied) {
        await storeWasm(a.wasm);
        files.lock.proxies[a.name] = a.entry;
        files.raw.proxies![a.index].grants = a.grants;
      }
      await saveChain(files);
    }
    if (values.json) process.stdout.write(`${JSON.stringify(decisions, null, 2)}\n`);
    if (decisions.some((d) => d.status === "needs-approval")) return EXIT.approval;
    return decisions.some((d) => d.status === "config-rejected") ? EXIT.refused : EXIT.ok;
  } catch (error) {
    return failure("update", error);
  } finally {
    await files?.release();
  }
}
