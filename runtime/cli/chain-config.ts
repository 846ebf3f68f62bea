/**
 * The chain configuration file (`cordon run --config chain.json`), validated with zod so that a
 * mistake is reported with the path of the offending field. Relative paths are resolved against
 * the file's own folder, so a config can travel with its proxies.
 *
 * {
 *   "proxies": [
 *     { "name": "redact", "wasm": "proxies/dist/redact.wasm", "config": { ... } },
 *     { "name": "native", "command": "my-proxy", "args": [], "trusted": true }
 *   ],
 *   "agent": { "command": "cordon", "args": ["reference-agent"], "env": { "KEY": "v" } }
 * }
 */
import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { GRANTS } from "../routing/grants.js";
import { ISOLATIONS } from "../sandbox/sandbox-factory.js";
import { WASI_GRANTS } from "../sandbox/wasi-grants.js";
import { isNativeProxy } from "./chain-entries.js";

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
const proxy = z.unknown().transform((value, ctx): WasmProxyEntry | NativeProxyEntry => {
  const kind = typeof value === "object" && value !== null && "command" in value && !("wasm" in value) ? nativeProxy : wasmProxy;
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

export type ChainConfig = z.infer<typeof ChainConfigSchema>;
export type WasmProxyEntry = z.infer<typeof wasmProxy>;
export type NativeProxyEntry = z.infer<typeof nativeProxy>;
export type ProxyEntry = WasmProxyEntry | NativeProxyEntry;
export { isNativeProxy };
export type AgentEntry = z.infer<typeof agent>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Parses config text; errors name the file and the field (`proxies[1].wasm: expected string`). */
export function parseChainConfig(text: string, source: string): ChainConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${source}: not valid JSON (${(error as Error).message})`);
  }
  const parsed = ChainConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => {
      const path = issue.path.reduce<string>(
        (acc, part) => (typeof part === "number" ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)),
        "",
      );
      return `${path || "(top level)"}: ${issue.message}`;
    });
    throw new ConfigError(`${source}: invalid chain config\n  ${issues.join("\n  ")}`);
  }
  return parsed.data;
}

export async function readChainConfig(path: string): Promise<ChainConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read chain config ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const config = parseChainConfig(text, path);
  const base = dirname(resolve(path));
  const at = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  return {
    ...config,
    proxies: config.proxies.map((p) => (isNativeProxy(p) ? { ...p, cwd: p.cwd && at(p.cwd) } : { ...p, wasm: at(p.wasm) })),
    agent: config.agent && { ...config.agent, cwd: config.agent.cwd && at(config.agent.cwd) },
  };
}
