/**
 * `cordon run` and `cordon proxy`: host a chain on this process's stdio. In `run` the chain ends
 * in an agent process, so an editor can launch Cordon wherever it would launch an agent. In
 * `proxy` the chain ends at the parent conductor, so Cordon can sit inside another chain.
 */

import { constants as osConstants } from "node:os";
import { basename, resolve } from "node:path";
import { ChildProcessPeer, type EarlyProcess } from "../components/child-process.js";
import { INITIALIZE_TIMEOUT_ENV, InitializeWatch, initializeTimeoutMs } from "../components/initialize-watch.js";
import { killAllGroups } from "../components/process-group.js";
import { StdioClientPeer } from "../components/stdio-client.js";
import { WasmProxyPeer } from "../components/wasm-proxy.js";
import { createLogger, type Logger } from "../log.js";
import { BRIDGE_GRANTS, McpBridgePeer } from "../mcp/bridge.js";
import { Conductor, type ConductorOptions } from "../routing/conductor.js";
import { GRANTS, type Grant } from "../routing/grants.js";
import type { Peer } from "../routing/peer.js";
import { TraceFile } from "../routing/trace.js";
import { defaultIsolation, type Isolation, sandboxFactory } from "../sandbox/sandbox-factory.js";
import type { AgentEntry, ProxyEntry } from "./chain-config.js";
import { isNativeProxy } from "./chain-entries.js";
import { sameProcess } from "./early-agent.js";
import { tuneHeap } from "./heap-tuning.js";
import { allowWorkerPipes, StartWatch, startOrigins, ttyHint } from "./start-diagnostics.js";

export interface RunOptions {
  mode: "agent" | "proxy";
  config?: string;
  /** Proxies from the command line, in flag order, after the config's. */
  proxies: ProxyEntry[];
  /** The agent command line after `--` (agent mode). */
  agent: string[];
  /** Write every message at every hop to this file. */
  trace?: string;
  /** Sandbox for WASM proxies whose config entry does not choose one (default: `defaultIsolation()`). */
  isolation?: Isolation;
  /** How long the agent has to answer `initialize` (ms; `--initialize-timeout`, `CORDON_INITIALIZE_TIMEOUT_MS`). */
  initializeTimeoutMs?: number;
  /** The agent, already started (`early-agent.ts`): the agent peer adopts it if it is the one the chain names. */
  early?: EarlyProcess;
}

export async function run(options: RunOptions): Promise<number> {
  const log = createLogger();
  const heapFlags = tuneHeap();
  if (heapFlags) log.debug(`V8 heap: ${heapFlags} (CORDON_V8_TUNING=off for V8's defaults)`);
  let proxies: ProxyEntry[] = [];
  let agent: AgentEntry | undefined;
  // The config's schema (zod) is loaded only when there is a config file to read.
  const chainConfig = options.config ? await import("./chain-config.js") : null;
  try {
    if (options.config) ({ proxies, agent } = await chainConfig!.readChainConfig(resolve(options.config)));
  } catch (error) {
    if (chainConfig && error instanceof chainConfig.ConfigError) {
      for (const line of error.message.split("\n")) log.error(line); // one log line per issue
      return 2;
    }
    throw error;
  }
  proxies = [...proxies, ...options.proxies];
  if (options.agent.length > 0) agent = { command: options.agent[0], args: options.agent.slice(1), env: {} };
  if (options.mode === "proxy" && (agent || options.agent.length > 0)) {
    log.error("cordon proxy has no agent: its successor is the parent conductor's next component");
    return 2;
  }
  if (options.mode === "agent" && !agent) {
    log.error('no agent: give one after `--` (cordon run [--proxy p.wasm]... -- <agent command> [args...]) or in the config\'s "agent"');
    return 2;
  }

  const hint = ttyHint(options.mode);
  if (hint) process.stderr.write(hint);
  const client = new StdioClientPeer();
  const trace = options.trace ? new TraceFile(options.trace) : null;
  const peers = buildProxies(proxies, log, options.isolation ?? defaultIsolation());
  // MCP-over-ACP: the bridge sits right before the agent (in proxy mode the outermost conductor bridges).
  if (options.mode === "agent") peers.push(new McpBridgePeer({ log }));
  const agentSpec = agent && { command: agent.command, args: agent.args, env: agent.env, cwd: agent.cwd };
  // The agent started early is used only if it is the one the validated config (or `--`) names.
  const early = options.early && agentSpec && sameProcess(options.early.spec, agentSpec) ? options.early : undefined;
  if (options.early && !early) void options.early.discard();
  const agentPeer = agentSpec && new ChildProcessPeer(agentSpec, "agent", undefined, undefined, early);
  // Diagnostics (start-diagnostics.ts): a failed start never exits 0; an agent silent on initialize is reported; room for worker pipes.
  const startWatch = new StartWatch([...peers, agentPeer], startOrigins(proxies, peers, agent, agentPeer));
  allowWorkerPipes(peers.length);

  // How Cordon ends (see EXIT_CODES): the client closing its input, a signal, or the agent dying
  // all close the agent's stdin, wait a grace, then signal its whole process group (TERM, then
  // KILL), never waiting on pipes a grandchild holds. A signal while that runs ends Cordon at once.
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  const onSignal: Partial<Record<NodeJS.Signals, () => void>> = {};
  return await new Promise<number>((resolveExit) => {
    let exiting = false;
    const done = (code: number) => {
      for (const signal of signals) process.removeListener(signal, onSignal[signal]!);
      resolveExit(code);
    };
    const finish = async (code: number) => {
      if (exiting) return;
      exiting = true;
      code = await startWatch.exitCode(code);
      await withinMs(client.flush(), 2000);
      await conductor.shutdown();
      await trace?.close();
      done(code);
    };
    const conductor = new Conductor({
      client,
      proxies: peers,
      agent:
        agentPeer &&
        new InitializeWatch(agentPeer, {
          timeoutMs: options.initializeTimeoutMs ?? initializeTimeoutMs(undefined),
          setBy: `--initialize-timeout <ms> or ${INITIALIZE_TIMEOUT_ENV}`,
        }),
      mode: options.mode,
      log,
      trace: trace?.write,
      ...proxyOptions(proxies, options.mode === "agent"),
      onExit: (code) => void finish(code),
    });
    for (const signal of signals) {
      onSignal[signal] = () => {
        const code = EXIT_CODES.signalBase + osConstants.signals[signal];
        if (exiting) {
          log.warn(`${signal} while ending: stopping now`);
          killAllGroups("SIGKILL");
          done(code);
          return;
        }
        log.info(`${signal}: ending the chain`);
        void finish(code);
      };
      process.on(signal, onSignal[signal]!);
    }
    const started = Date.now();
    startWatch.started(conductor.start()).then(
      () =>
        log.debug(`chain up in ${Date.now() - started} ms: ${[...peers.map((p) => p.label), agentPeer?.label ?? "parent"].join(" → ")}`),
      (error: Error) => {
        log.error(error.message);
        void finish(1);
      },
    );
  });
}

/**
 * The conductor's per-proxy options for these entries (the same for `cordon run` and the embedding
 * API); `bridge`: the MCP bridge follows them (agent mode) and gets its grants.
 */
export function proxyOptions(entries: ProxyEntry[], bridge: boolean): Pick<ConductorOptions, "proxySettings" | "slowRequestMs"> {
  const slow = Number(process.env.CORDON_SLOW_REQUEST_MS);
  return {
    // CORDON_SLOW_REQUEST_MS: report requests that sit inside a proxy longer than this (0: never).
    slowRequestMs: Number.isFinite(slow) && slow >= 0 && process.env.CORDON_SLOW_REQUEST_MS !== "" ? slow : undefined,
    proxySettings: [
      ...entries.map((p) => ({
        policy: p.onFailure ?? "fail-closed",
        // Native proxies are trusted: they run with the user's privileges anyway.
        grants: isNativeProxy(p) ? GRANTS : p.grants.filter((g): g is Grant => (GRANTS as readonly string[]).includes(g)),
        dialect: isNativeProxy(p) ? p.dialect : undefined,
      })),
      ...(bridge ? [{ grants: BRIDGE_GRANTS }] : []),
    ],
  };
}

/**
 * What `cordon run` / `cordon proxy` exit with. 70 (a proxy's worker thread refused to stop) is
 * set by the sandbox; anything uncaught exits 1 as Node does.
 */
const EXIT_CODES = {
  /** The client (or, for `cordon proxy`, the parent conductor) closed its input. */
  clientClosed: 0,
  /** The agent died, or the chain could not start. */
  agentDied: 1,
  /** Bad command line or chain config. */
  usage: 2,
  /** Ended by signal n: 128 + n (SIGHUP 129, SIGINT 130, SIGTERM 143), a second signal too. */
  signalBase: 128,
} as const;

function withinMs(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}

/** One peer per entry: WASM components in sandboxes, trusted native proxies as child processes. */
export function buildProxies(entries: ProxyEntry[], log: Logger, isolation: Isolation): Peer[] {
  const seen = new Map<string, number>();
  return entries.map((entry) => {
    const base = entry.name ?? (isNativeProxy(entry) ? basename(entry.command) : basename(entry.wasm).replace(/\.wasm$/, ""));
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const name = n === 1 ? base : `${base}#${n}`;
    if (isNativeProxy(entry)) {
      return new ChildProcessPeer({ command: entry.command, args: entry.args, env: entry.env, cwd: entry.cwd }, "proxy", undefined, name);
    }
    const { maxMemoryMiB, ...limits } = entry.limits ?? {};
    const sandboxLimits = maxMemoryMiB === undefined ? limits : { ...limits, maxMemoryPages: maxMemoryMiB * 16 };
    return new WasmProxyPeer(
      { name, path: entry.wasm, config: entry.config ?? {}, limits: sandboxLimits, sha256: entry.sha256, grants: entry.grants },
      { progress: (line) => log.info(line), warn: (line) => log.warn(line) },
      sandboxFactory(entry.isolation ?? isolation, (line) => log.warn(line)),
    );
  });
}
