/**
 * What the distribution commands (`add`, `install`, `update`, `remove`, `info`, `pack`) share: their
 * options, how a failure becomes an exit code, and how a package is shown before anything is granted.
 *
 * Exit codes: 0 done; 1 a package was refused or could not be fetched (nothing written);
 * 2 a bad command line, config or lock; 3 approval needed (a grant the config does not give).
 */
import { parseArgs } from "node:util";
import { grantLines } from "../distribution/authority.js";
import { PackageRefused } from "../distribution/errors.js";
import { KNOWN_GRANTS } from "../distribution/grant-names.js";
import { LockfileError } from "../distribution/lockfile.js";
import { requestedAuthority } from "../distribution/package-contents.js";
import type { Fetched } from "../distribution/resolve.js";
import { ConfigError } from "./chain-config.js";
import { ChainBusy } from "./chain-lock.js";

export const EXIT = { ok: 0, refused: 1, usage: 2, approval: 3 } as const;

export class UsageError extends Error {}

const OPTIONS = {
  config: { type: "string", short: "c" },
  registry: { type: "string" },
  grant: { type: "string", multiple: true },
  name: { type: "string" },
  offline: { type: "boolean" },
  frozen: { type: "boolean" },
  json: { type: "boolean" },
  "no-build": { type: "boolean" },
  "dry-run": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

type Option = keyof typeof OPTIONS;

/** Parses a command line with the options this command takes (`--help` always). */
export function parseCommand(command: string, argv: string[], takes: Option[]) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`cordon ${command}: ${(error as Error).message}`);
  }
  const foreign = Object.keys(parsed.values).filter((k) => k !== "help" && !takes.includes(k as Option));
  if (foreign.length) throw new UsageError(`cordon ${command}: unknown option ${foreign.map((k) => `--${k}`).join(", ")}`);
  return parsed;
}

/** `--grant` values, each a known grant name. */
export function grantFlags(values: string[] | undefined): string[] {
  const grants = values ?? [];
  const unknown = grants.filter((g) => !KNOWN_GRANTS.includes(g));
  if (unknown.length) throw new UsageError(`unknown grant ${unknown.join(", ")} (known: ${KNOWN_GRANTS.join(", ")})`);
  return [...new Set(grants)];
}

/** Prints why a command failed and returns its exit code. */
export function failure(command: string, error: unknown): number {
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof ConfigError || error instanceof LockfileError) {
    process.stderr.write(`cordon ${command}: ${error.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof ChainBusy) {
    process.stderr.write(`cordon ${command}: ${error.message}\n`);
    return EXIT.refused;
  }
  if (error instanceof PackageRefused) {
    process.stderr.write(`cordon ${command}: ${error.message}\n`);
    return error.code === "ESPEC" ? EXIT.usage : EXIT.refused; // a spec Cordon does not take is a usage error
  }
  throw error;
}

function age(publishedAt: string | undefined): string {
  if (!publishedAt) return "publish time unknown";
  const ms = Date.now() - Date.parse(publishedAt);
  const [n, unit] =
    ms < 3_600_000
      ? [Math.max(1, Math.round(ms / 60_000)), "minute"]
      : ms < 172_800_000
        ? [Math.round(ms / 3_600_000), "hour"]
        : [Math.round(ms / 86_400_000), "day"];
  return `published ${publishedAt.slice(0, 10)} (${n} ${unit}${n === 1 ? "" : "s"} ago)`;
}

/** The package as a user should see it before granting anything. */
export function describeFetched({ entry, pkg, deprecated }: Fetched): string {
  const signature =
    entry.registrySignature.status === "verified"
      ? `registry signature verified (key ${entry.registrySignature.keyid})`
      : "the registry offers no signatures";
  const asks = requestedAuthority(entry.requested);
  const lines = [
    `${entry.package} ${entry.version}${pkg.description ? ` — ${pkg.description}` : ""}`,
    `  ${age(entry.publishedAt)}; tarball ${entry.integrity.slice(0, 20)}…; ${signature}`,
    `  component ${entry.wasm.path} (${(entry.wasm.size / 1024).toFixed(1)} KiB) sha256 ${entry.wasm.sha256}`,
    asks.length ? "  requests:" : "  requests: nothing beyond the conversation (no grants)",
    ...grantLines(asks),
  ];
  if (deprecated) lines.push(`  warning: deprecated: ${deprecated}`);
  for (const w of pkg.warnings) lines.push(`  warning: ${w}`);
  return `${lines.join("\n")}\n`;
}

/** Asks on the terminal for each grant; returns the ones approved. Only called with a TTY. */
export async function askGrants(grants: string[]): Promise<string[]> {
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const approved: string[] = [];
  try {
    const lines = grantLines(grants, "?");
    for (const [i, grant] of grants.entries()) {
      const answer = await rl.question(`${lines[i].trimStart()}\n  grant it? [y/N] `);
      if (/^y(es)?$/i.test(answer.trim())) approved.push(grant);
    }
  } finally {
    rl.close();
  }
  return approved;
}

export const interactive = () => process.stdin.isTTY === true && process.stderr.isTTY === true;
