/**
 * The chain configuration file (`cordon run --config chain.json`), validated with zod so that a
 * mistake is reported with the path of the offending field. Relative paths are resolved against
 * the file's own folder, so a config can travel with its proxies.
 *
 * A `package` entry names a proxy package by npm spec; what runs is what the lock beside the
 * config (`chain.lock.json`) pins, from the local store (`runtime/distribution/`): reading the
 * config turns it into a `wasm` entry with the locked sha256, or fails saying to run `cordon install`.
 *
 * {
 *   "proxies": [
 *     { "name": "redact", "wasm": "proxies/dist/redact.wasm", "config": { ... } },
 *     { "name": "native", "command": "my-proxy", "args": [], "trusted": true },
 *     { "name": "guard", "package": "@acme/guard@^1.2", "grants": ["fs:read"] }
 *   ],
 *   "agent": { "command": "cordon", "args": ["reference-agent"], "env": { "KEY": "v" } }
 * }
 */
import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { KNOWN_GRANTS } from "../distribution/grant-names.js";
import { CordonError } from "../embed/errors.js";
import { GRANTS } from "../routing/grants.js";
import { ISOLATIONS } from "../sandbox/sandbox-factory.js";
import { WASI_GRANTS } from "../sandbox/wasi-grants.js";
import { isNativeProxy } from "./chain-entries.js";
import { jsonSyntaxPosition } from "./json-position.js";
import { nearestName } from "./nearest-name.js";

const limits = z
  .object({
    receiveTimeoutMs: z.number().int().positive().optional(),
    startTimeoutMs: z.number().int().positive().optional(),
    maxMessageUnits: z.number().int().positive().optional(),
    maxSendsPerReceive: z.number().int().positive().optional(),
    maxMemoryMiB: z.number().int().positive().max(4096).optional(),
    // What one delivery, and the proxy over a window, may use (runtime/sandbox/sandbox.ts has the defaults).
    maxOutputUnitsPerDelivery: z.number().int().positive().optional(),
    maxTableElements: z.number().int().positive().max(10_000_000).optional(),
    cpuWindowMs: z.number().int().positive().optional(),
    maxCpuMsPerWindow: z.number().int().positive().optional(),
    outputWindowMs: z.number().int().positive().optional(),
    maxOutputMessagesPerWindow: z.number().int().positive().optional(),
    maxOutputUnitsPerWindow: z.number().int().positive().optional(),
  })
  .strict();

const onFailure = z.enum(["fail-closed", "restart", "bypass"]);

const wasmProxy = z
  .object({
    name: z.string().min(1).optional(),
    onFailure: onFailure.optional(),
    wasm: z.string().min(1),
    /** Pin: the component must have exactly this SHA-256 (hex), or the chain does not start. */
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, "expected 64 hex digits")
      .transform((h) => h.toLowerCase())
      .optional(),
    /** Authority beyond the conversation: originating fs / terminal requests toward the client. */
    grants: z.array(z.enum([...GRANTS, ...WASI_GRANTS])).default([]),
    config: z.unknown().optional(),
    limits: limits.optional(),
    /** Where the guest runs: "thread" (the conductor's, fuel-metered) or "worker" (its own thread); default: --isolation. */
    isolation: z.enum(ISOLATIONS).optional(),
  })
  .strict();

/** A proxy package from a registry (`cordon add`); its name keys its lock entry, so it is required. */
const packageProxy = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "a package entry needs a name (letters, digits, . _ -)"),
    onFailure: onFailure.optional(),
    package: z.string().min(1),
    /** What the user gives it; a version requesting more is never run (requested ⊆ granted). */
    grants: z.array(z.enum(KNOWN_GRANTS as [string, ...string[]])).default([]),
    config: z.unknown().optional(),
    limits: limits.optional(),
    isolation: z.enum(ISOLATIONS).optional(),
  })
  .strict();

/** A proxy that is a native process: it runs with the user's privileges, so it must be marked trusted. */
const nativeProxy = z
  .object({
    name: z.string().min(1).optional(),
    onFailure: onFailure.optional(),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
    /** Proxy-chain spelling it speaks: the RFD's `proxy/*` (default; `rust` is detected too) or the Rust SDK's `_proxy/*`. */
    dialect: z.enum(["rfd", "rust"]).optional(),
    trusted: z.literal(true, {
      error: 'a native proxy runs outside the sandbox with your privileges; set "trusted": true to allow it',
    }),
  })
  .strict();

/** Chooses the schema by the entry's shape, so errors speak about the right kind of proxy. */
const proxy = z.unknown().transform((value, ctx): WasmProxyEntry | NativeProxyEntry | PackageProxyEntry => {
  const has = (key: string) => typeof value === "object" && value !== null && key in value;
  const kind = has("package") && !has("wasm") ? packageProxy : has("command") && !has("wasm") ? nativeProxy : wasmProxy;
  const parsed = kind.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: issue.path } as never);
  return z.NEVER;
});

const agent = z
  .object({
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
  })
  .strict();

export const ChainConfigSchema = z
  .object({
    $schema: z.string().optional(),
    proxies: z.array(proxy).default([]),
    agent: agent.optional(),
  })
  .strict();

/** A config file as written (package entries not yet resolved). */
export type ChainConfigFile = z.infer<typeof ChainConfigSchema>;
/** `locked`: set on the entry a `package` entry runs as (what the lock pinned, for `cordon check`). */
export type WasmProxyEntry = z.infer<typeof wasmProxy> & { locked?: { spec: string; package: string; version: string } };
export type NativeProxyEntry = z.infer<typeof nativeProxy>;
export type PackageProxyEntry = z.infer<typeof packageProxy>;
/** What runs: package entries are turned into the locked `wasm` entries. */
export type ProxyEntry = WasmProxyEntry | NativeProxyEntry;
export type ChainConfig = Omit<ChainConfigFile, "proxies"> & { proxies: ProxyEntry[] };
export { isNativeProxy };
export type AgentEntry = z.infer<typeof agent>;

/** A chain config that cannot be read or does not validate; the message names the file and every field at fault. */
export class ConfigError extends CordonError {
  constructor(message: string) {
    super(message, "config");
  }
}

const isPackageProxy = (p: ChainConfigFile["proxies"][number]): p is PackageProxyEntry => "package" in p;

/** The keys an object at `path` in a config may have (a proxy entry: those of every kind), for "did you mean". */
function knownKeys(path: readonly PropertyKey[]): string[] {
  const at = path.map(String).join(".");
  if (at === "") return Object.keys(ChainConfigSchema.shape);
  if (at === "agent") return Object.keys(agent.shape);
  if (/^proxies\.\d+$/.test(at)) return [...new Set([wasmProxy, packageProxy, nativeProxy].flatMap((k) => Object.keys(k.shape)))];
  if (/^proxies\.\d+\.limits$/.test(at)) return Object.keys(limits.shape);
  return [];
}

/** An unknown key's issue, with the nearest valid key when one is near (`"wams"` → did you mean "wasm"?). */
function unknownKeysMessage(keys: readonly string[], path: readonly PropertyKey[]): string {
  const known = knownKeys(path);
  const named = keys.map((key) => {
    const near = nearestName(key, known);
    return near ? `${JSON.stringify(key)} (did you mean ${JSON.stringify(near)}?)` : JSON.stringify(key);
  });
  return `Unrecognized key${keys.length === 1 ? "" : "s"}: ${named.join(", ")}`;
}

/**
 * Parses config text; errors name the file and the field (`proxies[1].wasm: expected string`), a
 * syntax error its line and column (`chain.json:3:5: not valid JSON: …`).
 */
export function parseChainConfigFile(text: string, source: string): ChainConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const at = jsonSyntaxPosition(text, error as Error);
    throw new ConfigError(
      at ? `${source}:${at.line}:${at.column}: not valid JSON: ${at.reason}` : `${source}: not valid JSON (${(error as Error).message})`,
    );
  }
  const parsed = ChainConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => {
      const path = issue.path.reduce<string>(
        (acc, part) => (typeof part === "number" ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)),
        "",
      );
      const message = issue.code === "unrecognized_keys" ? unknownKeysMessage(issue.keys, issue.path) : issue.message;
      return `${path || "(top level)"}: ${message}`;
    });
    throw new ConfigError(`${source}: invalid chain config\n  ${issues.join("\n  ")}`);
  }
  return parsed.data;
}

/** Parses a config that cannot have package entries (no file beside it to hold their lock). */
export function parseChainConfig(text: string, source: string): ChainConfig {
  const config = parseChainConfigFile(text, source);
  const i = config.proxies.findIndex(isPackageProxy);
  if (i !== -1) throw new ConfigError(`${source}: proxies[${i}]: a "package" entry needs a chain config file (its lock lives beside it)`);
  return config as ChainConfig;
}

/** The `wasm` entry each package entry runs as (by position), from the lock beside the config. */
async function lockedEntries(configPath: string, proxies: ChainConfigFile["proxies"]): Promise<(WasmProxyEntry | null)[]> {
  const { lockedWasm } = await import("../distribution/locked-chain.js");
  try {
    return await lockedWasm(
      configPath,
      proxies.map((p, i) => (isPackageProxy(p) ? { index: i, ...p } : null)),
    );
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

export async function readChainConfig(path: string): Promise<ChainConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read chain config ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const config = parseChainConfigFile(text, path);
  const base = dirname(resolve(path));
  const at = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  // Package entries run what the lock pins (the lock and store code loads only when there is one).
  const locked = config.proxies.some(isPackageProxy) ? await lockedEntries(resolve(path), config.proxies) : null;
  return {
    ...config,
    proxies: config.proxies.map((p, i) =>
      isPackageProxy(p) ? locked![i]! : isNativeProxy(p) ? { ...p, cwd: p.cwd && at(p.cwd) } : { ...p, wasm: at(p.wasm) },
    ),
    agent: config.agent && { ...config.agent, cwd: config.agent.cwd && at(config.agent.cwd) },
  };
}
