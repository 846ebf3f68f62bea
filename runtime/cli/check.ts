/**
 * `cordon check <chain.json> [--isolation thread|worker] [--json]`: everything `cordon run` would
 * refuse at start, found without starting the agent. The config is validated; every WASM proxy is
 * loaded and started as `cordon run` starts it (component checks, its pin, its config against its
 * manifest's schema, instantiation in its sandbox, the `_cordon/configure` delivery) and then
 * stopped; native proxies and the agent are only looked up on PATH (they are processes with your
 * privileges, not started by a check). Then the chain is printed: names, files, hashes, grants,
 * what each proxy watches (in words), limits, isolation, failure policy. Two proxies that would go
 * by the same name are refused as a config mistake, naming the field.
 *
 * Exit 0 when the chain would start, 1 when something in it would not, 2 for a bad command line
 * or config.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { WasmProxyPeer } from "../components/wasm-proxy.js";
import { type LoadedComponent, loadComponent } from "../sandbox/component-loader.js";
import type { Watches } from "../sandbox/manifest.js";
import { DEFAULT_LIMITS, type SandboxLimits } from "../sandbox/sandbox.js";
import { defaultIsolation, type Isolation, isIsolation, sandboxFactory } from "../sandbox/sandbox-factory.js";
import { type AgentEntry, isNativeProxy, type ProxyEntry, readChainConfig } from "./chain-config.js";
import { grantLines } from "./grant-words.js";
import { proxyNames } from "./proxy-names.js";
import { findCommand, whereLooked } from "./start-diagnostics.js";
import { watchLines } from "./watch-words.js";

const USAGE = "usage: cordon check <chain.json> [--isolation thread|worker] [--json]\n";

/** How long a started proxy is watched for a failure on its configure delivery before it is stopped. */
const SETTLE_MS = 150;

interface ProxyReport {
  position: number;
  name: string;
  kind: "wasm" | "native";
  /** The component file, resolved; or the native command as found on PATH. */
  path: string;
  sha256?: string;
  pinned?: boolean;
  /** For a `package` entry: what the lock pinned. */
  package?: { spec: string; package: string; version: string };
  manifest?: { name?: string; version?: string; description?: string; grants?: string[]; watches?: Watches } | null;
  grants: string[];
  /** Effective sandbox limits (WASM); `set` lists the ones the config chose. */
  limits?: Record<string, number>;
  limitsSet?: string[];
  isolation?: Isolation;
  onFailure: string;
  /** Native: command line; never started by a check. */
  command?: string[];
  ok: boolean;
  problem?: string;
  warnings: string[];
}

interface CheckReport {
  config: string;
  ok: boolean;
  proxies: ProxyReport[];
  agent: { command: string[]; path: string | null; cwd?: string; ok: boolean; problem?: string } | null;
  problems: string[];
}

export async function check(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { isolation: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`cordon check: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (parsed.positionals.length !== 1) {
    process.stderr.write(`cordon check: give exactly one chain config\n${USAGE}`);
    return 2;
  }
  const isolationFlag = parsed.values.isolation;
  if (isolationFlag !== undefined && !isIsolation(isolationFlag)) {
    process.stderr.write(`cordon check: --isolation must be thread or worker, not ${JSON.stringify(isolationFlag)}\n`);
    return 2;
  }
  const configPath = resolve(parsed.positionals[0]);
  let entries: ProxyEntry[];
  let agent: AgentEntry | undefined;
  let isolation: Isolation;
  try {
    isolation = isolationFlag ?? defaultIsolation();
    ({ proxies: entries, agent } = await readChainConfig(configPath));
  } catch (error) {
    process.stderr.write(`cordon check: ${(error as Error).message}\n`);
    return 2;
  }

  const clashes = sameNames(entries);
  if (clashes.length > 0) {
    process.stderr.write(`cordon check: ${configPath}: invalid chain config\n${clashes.map((c) => `  ${c}\n`).join("")}`);
    return 2;
  }
  const names = proxyNames(entries);
  const proxies = await Promise.all(entries.map((entry, i) => checkProxy(entry, i, names[i], isolation)));
  const agentReport = agent ? checkAgent(agent) : null;
  const problems = [
    ...proxies.filter((p) => !p.ok).map((p) => `proxy ${p.position + 1} "${p.name}": ${p.problem}`),
    ...(agentReport && !agentReport.ok ? [`agent: ${agentReport.problem}`] : []),
  ];
  const report: CheckReport = { config: configPath, ok: problems.length === 0, proxies, agent: agentReport, problems };
  process.stdout.write(parsed.values.json ? JSON.stringify(report, null, 2) + "\n" : describe(report));
  if (!report.ok)
    process.stderr.write(`cordon check: ${configPath}: ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}\n`).join("")}`);
  return report.ok ? 0 : 1;
}

async function checkProxy(entry: ProxyEntry, position: number, name: string, isolation: Isolation): Promise<ProxyReport> {
  const onFailure = entry.onFailure ?? "fail-closed";
  if (isNativeProxy(entry)) {
    const found = findCommand(entry.command, entry.cwd);
    return {
      position,
      name,
      kind: "native",
      path: found ?? entry.command,
      command: [entry.command, ...entry.args],
      grants: ["(all: trusted native process)"],
      onFailure,
      ok: found !== null,
      problem: found === null ? whereLooked(entry.command, entry.cwd) : undefined,
      warnings: [],
    };
  }
  const path = resolve(entry.wasm);
  const { maxMemoryMiB, ...rest } = entry.limits ?? {};
  const limits: Partial<SandboxLimits> = maxMemoryMiB === undefined ? rest : { ...rest, maxMemoryPages: maxMemoryMiB * 16 };
  const effective = { ...DEFAULT_LIMITS, ...limits };
  const { maxMemoryPages, ...shown } = effective;
  const report: ProxyReport = {
    position,
    name,
    kind: "wasm",
    path,
    package: entry.locked,
    grants: entry.grants,
    limits: { ...shown, maxMemoryMiB: maxMemoryPages / 16 },
    limitsSet: Object.keys(entry.limits ?? {}),
    isolation: entry.isolation ?? isolation,
    onFailure,
    ok: true,
    warnings: [],
  };
  let component: LoadedComponent;
  try {
    component = await loadComponent(path, { grants: entry.grants });
  } catch (error) {
    return { ...report, ok: false, problem: `${path}: ${(error as Error).message}` };
  }
  report.sha256 = component.sha256;
  report.pinned = entry.sha256 !== undefined;
  const m = component.manifest;
  report.manifest = m && { name: m.name, version: m.version, description: m.description, grants: m.grants, watches: m.watches };
  // Start it the way `cordon run` does, then stop it.
  const warn = (line: string) => report.warnings.push(line);
  const peer = new WasmProxyPeer(
    { name, path, config: entry.config ?? {}, limits, sha256: entry.sha256, grants: entry.grants },
    { warn },
    sandboxFactory(report.isolation, warn),
  );
  let failure: string | null = null;
  try {
    await peer.open({
      message: () => {},
      malformed: () => {},
      closed: (reason) => (failure ??= `${peer.label} ${reason}`),
    });
    await new Promise((r) => setTimeout(r, SETTLE_MS));
  } catch (error) {
    failure = (error as Error).message;
  } finally {
    await peer.close().catch(() => {});
  }
  if (failure !== null) return { ...report, ok: false, problem: failure.includes(path) ? failure : `${failure} (${path})` };
  return report;
}

/**
 * Two proxies going by one name (given, or from the same file): `cordon run` would call the second
 * `redact#2` in traces, logs and errors, so which is which could not be told. One issue per clash,
 * naming the field (`proxies[2].name: …`).
 */
function sameNames(entries: ProxyEntry[]): string[] {
  const first = new Map<string, number>();
  const issues: string[] = [];
  entries.forEach((entry, i) => {
    const name = proxyNames([entry])[0];
    const before = first.get(name);
    if (before === undefined) {
      first.set(name, i);
      return;
    }
    issues.push(
      entry.name !== undefined
        ? `proxies[${i}].name: ${JSON.stringify(name)} is also the name of proxies[${before}]; give each proxy its own name`
        : `proxies[${i}]: goes by ${JSON.stringify(name)} (from its ${isNativeProxy(entry) ? "command" : "file"}), as proxies[${before}] does; give it a "name" of its own`,
    );
  });
  return issues;
}

function checkAgent(agent: AgentEntry): NonNullable<CheckReport["agent"]> {
  const found = findCommand(agent.command, agent.cwd);
  return {
    command: [agent.command, ...agent.args],
    path: found,
    cwd: agent.cwd,
    ok: found !== null,
    problem: found === null ? whereLooked(agent.command, agent.cwd) : undefined,
  };
}

/** The limits the text report always shows (the README's); `--json` has them all. */
const MAIN_LIMITS = ["receiveTimeoutMs", "startTimeoutMs", "maxMemoryMiB", "maxMessageUnits", "maxSendsPerReceive"];

function describe(r: CheckReport): string {
  const lines: string[] = [`chain ${r.config}`];
  const n = r.proxies.length;
  lines.push(
    n === 0
      ? "  no proxies"
      : `  ${n} ${n === 1 ? "proxy" : "proxies"}, in order (the client is before the first, the agent after the last):`,
  );
  for (const p of r.proxies) {
    const mark = p.ok ? "ok" : "FAILED";
    lines.push(`  ${p.position + 1}. ${p.name}  [${p.kind}] ${mark}`);
    if (p.kind === "native") {
      lines.push(`       command    ${p.command!.join(" ")}${p.ok ? ` (${p.path})` : ""}`);
      lines.push("       trust      trusted native process: runs outside the sandbox with your privileges (not started by check)");
    } else {
      if (p.package) lines.push(`       package    ${p.package.package} ${p.package.version} (locked for ${p.package.spec})`);
      lines.push(`       file       ${p.path}`);
      if (p.sha256)
        lines.push(
          `       sha256     ${p.sha256}${p.package ? " (pinned by the lock, matches)" : p.pinned ? " (pinned, matches)" : " (not pinned)"}`,
        );
      if (p.manifest) {
        const m = p.manifest;
        lines.push(
          `       manifest   ${[m.name, m.version].filter(Boolean).join(" ") || "(unnamed)"}${m.description ? ` — ${m.description}` : ""}`,
        );
      }
      lines.push(
        `       grants     ${p.grants.length ? p.grants.join(", ") : "none"}${p.manifest?.grants?.length ? ` (asks for ${p.manifest.grants.join(", ")})` : ""}`,
      );
      lines.push(...grantLines(p.grants, "                  "));
      if (p.manifest !== undefined) {
        const [seen, ...rest] = watchLines(p.manifest?.watches, "                  ");
        lines.push(`       watches    ${seen}`, ...rest);
      }
      const set = new Set(p.limitsSet);
      const limits = Object.entries(p.limits ?? {})
        .filter(([k]) => MAIN_LIMITS.includes(k) || set.has(k))
        .map(([k, v]) => `${k} ${v}${set.has(k) ? "*" : ""}`);
      lines.push(`       limits     ${limits.join(", ")}${set.size ? "  (* set by the config)" : ""}`);
      lines.push(`       isolation  ${p.isolation}`);
    }
    lines.push(`       onFailure  ${p.onFailure}`);
    for (const w of p.warnings) lines.push(`       warning    ${w}`);
    if (!p.ok) lines.push(`       problem    ${p.problem}`);
  }
  if (r.agent) {
    lines.push(`  agent  ${r.agent.command.join(" ")}  ${r.agent.ok ? `found: ${r.agent.path}` : "NOT FOUND"} (not started by check)`);
    if (r.agent.cwd) lines.push(`       cwd        ${r.agent.cwd}`);
  } else {
    lines.push("  agent  none in the config: give one after `--` to cordon run");
  }
  lines.push(
    r.ok ? "OK: every proxy loads and starts; the agent was not started." : `FAILED: ${r.problems.length} problem(s) (listed on stderr).`,
  );
  return lines.join("\n") + "\n";
}
