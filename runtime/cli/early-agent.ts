/**
 * The agent `cordon run` starts before it loads the conductor and compiles the proxies, so the
 * agent boots meanwhile instead of after (`EarlyProcess`): the one after `--`, or else the chain
 * config's — read here with a plain `JSON.parse`, before the config is validated (zod is not even
 * loaded yet). The validated entry must then be the same process (`sameProcess`), or the early
 * one is ended and the validated one started: validation stays the only judge of what runs.
 * `CORDON_EARLY_AGENT=off` starts the agent only once the chain is built.
 *
 * The entry (`bin/cordon.js`) calls `startAgentFromCommandLine` before it loads anything else of
 * Cordon: this file imports only Node's modules, `early-process.ts` and `run-options.ts`, so the
 * agent is spawned a few milliseconds into Cordon's life instead of after the command line's
 * modules have loaded (~40 ms here).
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { parseArgs } from "node:util";
import { EarlyProcess, type ProcessSpec } from "../components/early-process.js";
import { RUN_OPTIONS, splitAgent } from "./run-options.js";

/** Larger configs are left to the real read (a chain config is a few KB). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** What the entry started for `cordon run`: `agent` is undefined when it started none. */
export interface EarlyStart {
  agent: EarlyProcess | undefined;
}

/**
 * The agent of a `cordon run` command line (`argv`: the words after `run`), started now; none when
 * the command line does not parse or asks for help (the real parse in `main.ts` then reports it).
 */
export function startAgentFromCommandLine(argv: string[]): EarlyStart {
  const { own, agent } = splitAgent(argv);
  let values: { config?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ args: own, options: RUN_OPTIONS, strict: true, allowPositionals: false }));
  } catch {
    return { agent: undefined };
  }
  return { agent: values.help ? undefined : startAgentEarly(agent, values.config) };
}

export function startAgentEarly(agentArgv: string[], configPath: string | undefined): EarlyProcess | undefined {
  if (process.env.CORDON_EARLY_AGENT === "off") return undefined;
  const spec = earlyAgentSpec(agentArgv, configPath);
  return spec && new EarlyProcess(spec);
}

/** What `startAgentEarly` would start: the agent after `--` (as `cordon run` runs it), else the config's. */
export function earlyAgentSpec(agentArgv: string[], configPath: string | undefined): ProcessSpec | undefined {
  if (agentArgv.length > 0) return { command: agentArgv[0], args: agentArgv.slice(1), env: {} };
  return configPath === undefined ? undefined : configAgent(resolve(configPath));
}

/** The config's `agent` if it has the shape the schema requires (with its defaults); anything else: undefined. */
function configAgent(path: string): ProcessSpec | undefined {
  let config: unknown;
  try {
    // Synchronous, so only a regular file of config size (never a FIFO or a device that blocks or never ends).
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > MAX_CONFIG_BYTES) return undefined;
    config = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined; // the real read reports it
  }
  const agent = (config as { agent?: unknown } | null)?.agent as Record<string, unknown> | undefined;
  if (typeof agent !== "object" || agent === null || typeof agent.command !== "string" || agent.command === "") return undefined;
  const args = agent.args ?? [];
  const env = agent.env ?? {};
  if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) return undefined;
  if (typeof env !== "object" || env === null || Array.isArray(env) || !Object.values(env).every((v) => typeof v === "string")) {
    return undefined;
  }
  if (agent.cwd !== undefined && typeof agent.cwd !== "string") return undefined;
  const cwd = agent.cwd === undefined ? undefined : isAbsolute(agent.cwd) ? agent.cwd : resolve(dirname(path), agent.cwd);
  return { command: agent.command, args: args as string[], env: env as Record<string, string>, cwd };
}

/** Whether two specs start the same process (command, arguments, added environment, directory). */
export function sameProcess(a: ProcessSpec, b: ProcessSpec): boolean {
  const envA = Object.entries(a.env ?? {}).sort();
  const envB = Object.entries(b.env ?? {}).sort();
  return (
    a.command === b.command &&
    a.cwd === b.cwd &&
    a.args.length === b.args.length &&
    a.args.every((arg, i) => arg === b.args[i]) &&
    JSON.stringify(envA) === JSON.stringify(envB)
  );
}
