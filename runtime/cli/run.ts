/**
 * `cordon run`: host a chain on this process's stdio, so an editor can launch Cordon wherever it
 * would launch an agent.
 */
import { basename } from "node:path";
import { ChildProcessPeer } from "../components/child-process.js";
import { StdioClient } from "../components/stdio-client.js";
import { WasmProxyPeer } from "../components/wasm-proxy.js";
import { createLogger } from "../log.js";
import { Conductor } from "../routing/conductor.js";
import { ConfigError, readChainConfig, type AgentEntry, type ProxyEntry } from "./chain-config.js";

export interface RunOptions {
  config?: string;
  proxies: string[];
  agent: string[];
}

export async function run(options: RunOptions): Promise<number> {
  const log = createLogger();
  let proxies: ProxyEntry[] = [];
  let agent: AgentEntry | undefined;
  try {
    if (options.config) ({ proxies, agent } = await readChainConfig(options.config));
  } catch (error) {
    if (error instanceof ConfigError) {
      log.error(error.message);
      return 2;
    }
    throw error;
  }
  proxies = [...proxies, ...options.proxies.map((wasm) => ({ wasm }))];
  if (options.agent.length > 0) agent = { command: options.agent[0], args: options.agent.slice(1), env: {} };
  if (!agent) {
    log.error("no agent: give one after `--` (cordon run [--proxy p.wasm]... -- <agent command> [args...]) or in the config's \"agent\"");
    return 2;
  }

  const names = uniqueNames(proxies);
  const client = new StdioClient();
  const peers = proxies.map(
    (p, i) => new WasmProxyPeer({ name: names[i], path: p.wasm, config: p.config ?? {}, limits: p.limits }, { progress: (line) => log.info(line) }),
  );
  const agentPeer = new ChildProcessPeer({ command: agent.command, args: agent.args, env: agent.env, cwd: agent.cwd }, "agent");

  return await new Promise<number>((resolveExit) => {
    let exiting = false;
    const finish = async (code: number) => {
      if (exiting) return;
      exiting = true;
      await client.flush();
      await conductor.shutdown();
      resolveExit(code);
    };
    const conductor = new Conductor({ client, proxies: peers, agent: agentPeer, log, onExit: (code) => void finish(code) });
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void finish(0));
    const started = Date.now();
    conductor.start().then(
      () => {
        const chain = [...names.map((n) => `proxy "${n}"`), agentPeer.label].join(" → ");
        log.debug(`chain up in ${Date.now() - started} ms: ${chain}`);
      },
      (error: Error) => {
        log.error(error.message);
        void finish(1);
      },
    );
  });
}

/** Proxy names: the configured name, else the file name; repeats get `#2`, `#3`… */
function uniqueNames(proxies: ProxyEntry[]): string[] {
  const seen = new Map<string, number>();
  return proxies.map((p) => {
    const base = p.name ?? basename(p.wasm).replace(/\.wasm$/, "");
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base}#${n}`;
  });
}
