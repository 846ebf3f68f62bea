/**
 * Starting a chain in-process: the same conductor, sandboxes, proxies and MCP bridge as
 * `cordon run`, built from a config object validated by the same zod schema, with the client end
 * in memory instead of on stdio. Nothing is written to stdout: Cordon's log lines go where the
 * `log` option says (stderr at `warn` by default), the agent's stderr where `agentStderr` says.
 *
 * {@link startChain} is the raw layer — JSON-RPC messages in and out, exactly as a stdio client
 * would see them; `connect` (client.ts) builds the typed client on it.
 */
import { isAbsolute, resolve } from "node:path";
import {
  type ChainConfig,
  ConfigError,
  isNativeProxy,
  type NativeProxyEntry,
  parseChainConfig,
  readChainConfig,
  type WasmProxyEntry,
} from "../cli/chain-config.js";
import { buildProxies, proxyOptions } from "../cli/run.js";
import { StartWatch, startOrigins } from "../cli/start-diagnostics.js";
import { ChildProcessPeer } from "../components/child-process.js";
import { INITIALIZE_TIMEOUT_ENV, InitializeWatch, initializeTimeoutMs } from "../components/initialize-watch.js";
import { createLogger, type Level, type Logger, parseLevel, writeStderr } from "../log.js";
import { McpBridgePeer } from "../mcp/bridge.js";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { Conductor } from "../routing/conductor.js";
import { TraceFile } from "../routing/trace.js";
import { defaultIsolation, type Isolation } from "../sandbox/sandbox-factory.js";
import { InMemoryClientPeer } from "./client-peer.js";

/** A WASM proxy entry as written in a config (`grants` may be left out). */
export type WasmProxyInput = Omit<WasmProxyEntry, "grants"> & { grants?: WasmProxyEntry["grants"] };
/** A trusted native proxy entry as written in a config (`args`, `env` may be left out). */
export type NativeProxyInput = Omit<NativeProxyEntry, "args" | "env"> & { args?: string[]; env?: Record<string, string> };
/** How the agent is started: a command line, with extra environment variables and a working directory if needed. */
export interface AgentInput {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/**
 * A chain config as an object: the same shape as a `cordon run --config` file (README, "A chain
 * config"), validated by the same schema, so unknown keys and wrong types are errors naming the
 * field (`ConfigError`).
 */
export interface ChainConfigInput {
  $schema?: string;
  proxies?: Array<WasmProxyInput | NativeProxyInput>;
  agent?: AgentInput;
}

/** Where Cordon's own log lines go. */
export type LogOption =
  /** Lines at this level and above go to stderr. */
  | Level
  /** No log lines at all. */
  | "silent"
  /** Lines at `level` (default: `$CORDON_LOG`, else `warn`) and above go to `write`, one call per line. */
  | { level?: Level; write(line: string): void };

export interface ChainOptions {
  /** The chain: a config object, or the path of a config file (whose relative paths resolve against its folder). */
  chain: ChainConfigInput | string;
  /** The agent, replacing the config's (like `cordon run … -- <agent>`): a command line or a command with env and cwd. */
  agent?: string[] | AgentInput;
  /** Folder that relative `wasm` and `cwd` paths in a config *object* resolve against (default: the current directory). */
  baseDir?: string;
  /** Sandbox for WASM proxies whose entry does not choose one (default as `cordon run`: `$CORDON_ISOLATION`, else `thread`). */
  isolation?: Isolation;
  /** Write every message at every hop to this file (`cordon run --trace`). */
  trace?: string;
  /** Cordon's log lines (default: stderr, level `$CORDON_LOG` or `warn`). Never stdout. */
  log?: LogOption;
  /** The agent's stderr: `"inherit"` (to this process's stderr), `"ignore"` (the default), or a function given each chunk. */
  agentStderr?: "inherit" | "ignore" | ((chunk: string) => void);
  /**
   * How long the agent has to answer `initialize` before the chain is failed with an error naming
   * it and what the agent wrote meanwhile (ms; default as `cordon run`: `$CORDON_INITIALIZE_TIMEOUT_MS`, else 60000).
   */
  initializeTimeoutMs?: number;
}

/** How a chain ended: `code` 0 when the client closed it, non-zero when the agent died or it could not start. */
export interface ChainExit {
  code: number;
}

/** A chain running in this process, spoken to in raw JSON-RPC. */
export interface RunningChain {
  /** The components, client side first: `proxy "redact"`, …, `MCP bridge`, `agent "…"`. */
  readonly components: string[];
  /** Cordon's logger for this chain (the `log` option). */
  readonly log: Logger;
  /** The agent's process id (also its process group). */
  readonly agentPid: number | undefined;
  /** Sends one message into the chain, as a client would write a line; false once the chain is closed. */
  write(message: JsonRpcMessage): boolean;
  /**
   * Backpressure: the application cannot keep up (true) or caught up (false). Meanwhile the
   * conductor stops reading the agent and running the proxies, as for a stdio client that stops
   * reading; what the application writes still goes in.
   */
  congested(congested: boolean): void;
  /** Resolves when the chain has ended and every component is closed. */
  readonly exited: Promise<ChainExit>;
  /** Closes the client side (as an editor closes stdin) and shuts every component down, the agent's process group included. */
  close(): Promise<ChainExit>;
}

/** Reads, validates and resolves the chain config, and applies the `agent` override. */
export async function resolveChainConfig(options: Pick<ChainOptions, "chain" | "agent" | "baseDir">): Promise<ChainConfig> {
  let config: ChainConfig;
  if (typeof options.chain === "string") config = await readChainConfig(options.chain);
  else {
    config = parseChainConfig(JSON.stringify(options.chain), "chain config");
    const base = resolve(options.baseDir ?? process.cwd());
    const at = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
    config = {
      ...config,
      proxies: config.proxies.map((p) => (isNativeProxy(p) ? { ...p, cwd: p.cwd && at(p.cwd) } : { ...p, wasm: at(p.wasm) })),
      agent: config.agent && { ...config.agent, cwd: config.agent.cwd && at(config.agent.cwd) },
    };
  }
  if (options.agent) {
    const agent = Array.isArray(options.agent) ? { command: options.agent[0], args: options.agent.slice(1) } : options.agent;
    // The override goes through the same schema as a config's agent.
    config.agent = parseChainConfig(JSON.stringify({ agent }), "agent option").agent;
  }
  return config;
}

function loggerFor(option: LogOption | undefined): Logger {
  if (option === "silent") return createLogger("error", () => {});
  if (typeof option === "string") return createLogger(parseLevel(option, "warn"));
  const level = parseLevel(option?.level ?? process.env.CORDON_LOG, "warn");
  return createLogger(level, option?.write ?? writeStderr);
}

/**
 * Starts a chain in front of its agent, with the client end in this process. `onMessage` gets
 * every message the chain sends the client, in order, each on its own microtask. Rejects only for
 * a config that does not validate (`ConfigError`); a component that cannot start is reported the
 * way `cordon run` reports it — as the error answer to the first request — and ends the chain.
 */
export async function startChain(options: ChainOptions & { onMessage(message: JsonRpcMessage): void }): Promise<RunningChain> {
  const config = await resolveChainConfig(options);
  if (!config.agent) throw new ConfigError('no agent: give one in the chain config ("agent") or in the agent option');
  // Checked before anything starts: a positive whole number of milliseconds.
  const timeoutMs = initializeTimeoutMs(options.initializeTimeoutMs === undefined ? undefined : String(options.initializeTimeoutMs));
  const log = loggerFor(options.log);
  const trace = options.trace ? new TraceFile(options.trace) : null;
  const client = new InMemoryClientPeer(options.onMessage);
  const peers = buildProxies(config.proxies, log, options.isolation ?? defaultIsolation());
  peers.push(new McpBridgePeer({ log }));
  const stderr = options.agentStderr ?? "ignore";
  // The same peer as `cordon run`'s agent: its own process group, ended as a group, watched if we die.
  const agent = new ChildProcessPeer(
    { command: config.agent.command, args: config.agent.args, env: config.agent.env, cwd: config.agent.cwd },
    "agent",
    stderr === "inherit" ? writeStderr : stderr === "ignore" ? () => {} : (chunk) => stderr(chunk.toString("utf8")),
  );

  // As `cordon run` says it: a failure to start names the resolved path, or the PATH searched.
  new StartWatch([...peers, agent], startOrigins(config.proxies, peers, config.agent, agent));

  let resolveExit!: (exit: ChainExit) => void;
  const exited = new Promise<ChainExit>((r) => (resolveExit = r));
  let finishing = false;
  const finish = async (code: number) => {
    if (finishing) return;
    finishing = true;
    client.end();
    await conductor.shutdown();
    await trace?.close();
    resolveExit({ code });
  };
  const conductor = new Conductor({
    client,
    proxies: peers,
    agent: new InitializeWatch(agent, {
      timeoutMs,
      setBy: `the initializeTimeoutMs option or ${INITIALIZE_TIMEOUT_ENV}`,
    }),
    mode: "agent",
    log,
    trace: trace?.write,
    ...proxyOptions(config.proxies, true),
    onExit: (code) => void finish(code),
  });
  const started = Date.now();
  conductor.start().then(
    () => log.debug(`chain up in ${Date.now() - started} ms: ${[...peers.map((p) => p.label), agent.label].join(" → ")}`),
    (error: Error) => {
      log.error(error.message);
      void finish(1);
    },
  );
  return {
    components: [...peers.map((p) => p.label), agent.label],
    log,
    get agentPid() {
      return agent.pid;
    },
    write: (message) => client.write(message),
    congested: (congested) => client.congested(congested),
    exited,
    close: () => {
      void finish(0);
      return exited;
    },
  };
}
