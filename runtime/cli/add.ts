/**
 * `cordon add <spec> [--name N] [--grant G]... [--config chain.json] [--registry URL]`: resolves a
 * proxy package, fetches and verifies it (`distribution/resolve.ts`), shows what it is and what it
 * asks for in plain words, and asks for each requested grant on a terminal. Without a terminal
 * every requested grant must be given with `--grant`, or nothing is added and it exits 3 naming the
 * missing ones: there is no blanket yes. Then the component goes into the store and the entry
 * (`grants` = what was approved) and its lock entry are written, each file atomically. The config
 * is created when missing.
 */

import { missingGrants } from "../distribution/authority.js";
import { registryFor } from "../distribution/npmrc.js";
import { requestedAuthority } from "../distribution/package-contents.js";
import { resolveSpec } from "../distribution/resolve.js";
import { baseName, parseSpec } from "../distribution/spec.js";
import { storeWasm } from "../distribution/store.js";
import { configProblems } from "../sandbox/manifest.js";
import { type ChainFiles, configFlag, openChain, registriesFor, saveChain } from "./chain-files.js";
import { askGrants, describeFetched, EXIT, failure, grantFlags, interactive, parseCommand, UsageError } from "./distribution-command.js";

const USAGE = "usage: cordon add <spec> [--name <name>] [--grant <grant>]... [--config chain.json] [--registry <url>]\n";

export async function add(argv: string[]): Promise<number> {
  let files: ChainFiles | undefined;
  try {
    const { values, positionals } = parseCommand("add", argv, ["config", "registry", "grant", "name"]);
    if (values.help) {
      process.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (positionals.length !== 1) throw new UsageError(`cordon add: give exactly one package spec\n${USAGE}`);
    const given = grantFlags(values.grant);
    const spec = parseSpec(positionals[0]);
    const name = values.name ?? baseName(spec.name);
    files = await openChain(values.config, { create: true });
    const proxies = (files.raw.proxies ??= []);
    if (proxies.some((p) => p.name === name)) {
      throw new UsageError(
        `cordon add: the chain already has a proxy named "${name}" (cordon update ${name}, cordon remove ${name}, or --name)`,
      );
    }
    const registry = registryFor(spec.name, registriesFor(files, values.registry));
    const fetched = await resolveSpec(spec, registry);
    process.stdout.write(describeFetched(fetched));

    const requested = requestedAuthority(fetched.entry.requested);
    let granted = given.filter((g) => requested.includes(g));
    for (const g of given.filter((g) => !requested.includes(g)))
      process.stderr.write(`cordon add: --grant ${g} ignored: ${fetched.entry.version} does not request it\n`);
    const missing = missingGrants(fetched.entry.requested, granted);
    if (missing.length && interactive()) granted = [...granted, ...(await askGrants(missing))];
    const refused = missingGrants(fetched.entry.requested, granted);
    if (refused.length) {
      process.stderr.write(
        `cordon add: NOT ADDED: ${fetched.entry.package}@${fetched.entry.version} requests ${refused.join(", ")}, not granted.\n` +
          `  approve: cordon add ${positionals[0]}${values.name ? ` --name ${name}` : ""}${requested.map((g) => ` --grant ${g}`).join("")}${configFlag(files.configPath)}\n`,
      );
      return EXIT.approval;
    }

    // A bare name or a tag is saved as npm saves it: a caret range on the version found.
    const saved =
      spec.type === "version" || (spec.type === "range" && spec.selector !== "*") ? spec.raw : `${spec.name}@^${fetched.entry.version}`;
    await storeWasm(fetched.pkg.wasm);
    files.lock.proxies[name] = { ...fetched.entry, spec: saved };
    proxies.push({ name, package: saved, grants: [...granted].sort() });
    await saveChain(files);
    process.stdout.write(
      `added "${name}" (${fetched.entry.package}@${fetched.entry.version}) to ${files.configPath}${files.existed ? "" : " (created)"}\n`,
    );
    const problems = await configProblems(fetched.pkg.manifest, {});
    if (problems.length) {
      process.stderr.write(`cordon add: note: "${name}" needs a "config" in ${files.configPath} before it runs (${problems.join("; ")})\n`);
    }
    return EXIT.ok;
  } catch (error) {
    return failure("add", error);
  } finally {
    await files?.release();
  }
}
