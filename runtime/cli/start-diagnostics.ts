/**
 * What `cordon run` / `cordon proxy` say and do around starting a chain, kept out of `run.ts`:
 *
 * - a one-line hint on stderr when stdin is a terminal (someone typed `cordon run` by hand: it
 *   waits for an ACP client, which an editor is, and would otherwise just sit there);
 * - a start that failed never ends with exit 0: the conductor answers the client's first request
 *   with the error, but when the client closes its input before asking anything (or before the
 *   chain finished starting), the exit status still says the chain could not start;
 * - room on stderr for what each WASM proxy's worker pipes into it (two pipes per worker, so a
 *   chain of five proxies passed Node's default of 10 listeners and printed
 *   `MaxListenersExceededWarning`). The pipes are per live worker and removed when it ends, so
 *   the allowance is bounded by the chain, not a leak being hidden.
 */
import { EventEmitter } from "node:events";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { Peer } from "../routing/peer.js";
import type { AgentEntry, ProxyEntry } from "./chain-config.js";
import { isNativeProxy } from "./chain-entries.js";

/** The hint for a human at a terminal, or null when stdin is not one. */
export function ttyHint(mode: "agent" | "proxy", stdin: { isTTY?: boolean } = process.stdin): string | null {
  if (!stdin.isTTY) return null;
  return mode === "agent"
    ? "cordon run: waiting for an ACP client on stdin/stdout (an editor or acpx launches it as its agent; try `cordon demo` to see a session) — Ctrl-C to quit\n"
    : "cordon proxy: waiting for a parent conductor on stdin/stdout (it sends proxy/initialize) — Ctrl-C to quit\n";
}

/** A process's command line, or a component's file. */
export type Origin = { command: string; cwd?: string } | { path: string };

/** The origin of each proxy peer (`peers[i]` was built from `entries[i]`) and of the agent. */
export function startOrigins(entries: ProxyEntry[], peers: Peer[], agent?: AgentEntry, agentPeer?: Peer): Map<Peer, Origin> {
  const origins = new Map<Peer, Origin>();
  entries.forEach((entry, i) => {
    if (peers[i]) origins.set(peers[i], isNativeProxy(entry) ? { command: entry.command, cwd: entry.cwd } : { path: resolve(entry.wasm) });
  });
  if (agent && agentPeer) origins.set(agentPeer, { command: agent.command, cwd: agent.cwd });
  return origins;
}

/** `message`, completed with the resolved path it is about when it does not show it already. */
export function withOrigin(message: string, origin: Origin): string {
  if ("path" in origin) return message.includes(origin.path) ? message : `${message} (${origin.path})`;
  return /command not found$/.test(message) ? `${message}: ${whereLooked(origin.command, origin.cwd)}` : message;
}

/** How long an ending Cordon waits for a start still in progress to settle, to know whether it failed. */
const START_SETTLE_MS = 10_000;

/**
 * Watches the components' `open` during the chain's start. `exitCode(code)` is what Cordon should
 * exit with: `code`, except that an ordinary end (0) after a failed start becomes 1.
 */
export class StartWatch {
  private failure: string | null = null;
  private done = false;
  private settled: Promise<void> = Promise.resolve();

  /** `origins`: where each peer comes from (see {@link startOrigins}), so a failure can say it with a resolved path. */
  constructor(peers: (Peer | undefined)[], origins: Map<Peer, Origin> = new Map()) {
    for (const peer of peers) {
      if (!peer) continue;
      const open = peer.open.bind(peer);
      peer.open = (sink) =>
        open(sink).catch((error: unknown) => {
          const origin = origins.get(peer);
          if (origin && error instanceof Error) error.message = withOrigin(error.message, origin);
          if (!this.done) this.failure ??= error instanceof Error ? error.message : String(error);
          throw error;
        });
    }
  }

  /** Give it the conductor's start; resolves as that does. Failures after it (restarts) are not start failures. */
  started<T>(start: Promise<T>): Promise<T> {
    this.settled = start.then(
      () => {
        this.done = true;
      },
      () => {
        this.done = true;
      },
    );
    return start;
  }

  /** The reason the start failed, if it did. */
  get failed(): string | null {
    return this.failure;
  }

  async exitCode(code: number): Promise<number> {
    if (code !== 0) return code;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.settled, new Promise<void>((r) => (timer = setTimeout(r, START_SETTLE_MS)))]).finally(() =>
      clearTimeout(timer),
    );
    return this.failure !== null ? 1 : code;
  }
}

/** Raises stderr's listener allowance by what `workers` worker threads' stdout and stderr pipes add. */
export function allowWorkerPipes(workers: number): void {
  for (const stream of [process.stderr, process.stdout]) {
    const max = stream.getMaxListeners();
    if (max !== 0 && max !== Infinity) stream.setMaxListeners(Math.max(max, EventEmitter.defaultMaxListeners + 2 * workers));
  }
}

/** Where `command` would be found when spawned (a path resolved against cwd, or the first PATH entry holding it), or null. */
export function findCommand(command: string, cwd?: string): string | null {
  const executable = (p: string) => {
    try {
      if (!statSync(p).isFile()) return false;
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes("/")) {
    const p = isAbsolute(command) ? command : resolve(cwd ?? process.cwd(), command);
    return executable(p) ? p : null;
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, command);
    if (executable(p)) return p;
  }
  return null;
}

/** Where Cordon looked for a command it could not find: the resolved path, or the PATH it searched. */
export function whereLooked(command: string, cwd?: string): string {
  return command.includes("/")
    ? `${isAbsolute(command) ? command : resolve(cwd ?? process.cwd(), command)} does not exist or is not executable`
    : `"${command}" is not in any directory of PATH (${process.env.PATH ?? ""})`;
}
