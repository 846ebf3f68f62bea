/**
 * Spawning a component's process the way Cordon runs every one (its own process group, registered
 * with the watchdog; stdio piped), ending it, and `EarlyProcess`: the agent started before the rest
 * of Cordon is loaded. Kept apart from `child-process.ts` so that starting the agent early loads
 * only this file and `process-group.ts` (no framing, routing or logging modules).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { endGroup, groupAlive, PROCESS_GROUPS, registerGroup, signalGroup, unregisterGroup } from "./process-group.js";

export interface ProcessSpec {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/** The grace for a process that was never sent anything (a chain that failed to start around it): nothing of it can be lost. */
export const UNUSED_GRACE_MS = 200;

/** Whether the process was started at all (a failed spawn has no pid and never exits). */
export const spawnedOk = (child: ChildProcess): boolean => child.pid !== undefined;

/** Spawns `spec` as Cordon runs every component: in its own process group (registered), stdio piped. */
export function spawnComponent(spec: ProcessSpec): { child: ChildProcess; pgid: number | undefined } {
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: { ...process.env, ...spec.env },
    stdio: ["pipe", "pipe", "pipe"],
    detached: PROCESS_GROUPS,
  });
  const pgid = PROCESS_GROUPS ? child.pid : undefined;
  if (pgid !== undefined) registerGroup(pgid);
  return { child, pgid };
}

/**
 * Ends what Cordon started: EOF (`closeInput`), a grace, SIGTERM, a grace, SIGKILL — to the whole
 * process group when it has one (else to the process, until `exited`) — then forgets the group.
 */
export async function endProcess(
  child: ChildProcess,
  pgid: number | undefined,
  graceMs: number,
  closeInput: () => void,
  exited: () => boolean,
): Promise<void> {
  await endGroup({
    graceMs,
    closeInput,
    alive: () => (pgid !== undefined ? groupAlive(pgid) : !exited()),
    signal: (signal) => (pgid !== undefined ? signalGroup(pgid, signal) : child.kill(signal)),
  });
  if (pgid !== undefined) unregisterGroup(pgid);
}

export type ChildEvent = "spawn" | "error" | "exit";
// biome-ignore lint/suspicious/noExplicitAny: the listener types of ChildProcess's own `once` overloads
export type ChildListener = (...args: any[]) => void;

/**
 * A process started ahead of the rest of Cordon, until its peer adopts it: `cordon run` starts the
 * agent before it loads the conductor and compiles the proxies, so the agent boots meanwhile
 * instead of after. What happens to it before adoption (`spawn`, `error`, `exit`) is recorded and
 * replayed to the peer; its output waits in its pipes, unread. Never adopted (Cordon stopped on a
 * usage error), `discard` ends its group.
 */
export class EarlyProcess {
  readonly child: ChildProcess;
  readonly pgid: number | undefined;
  private readonly seen = new Map<ChildEvent, unknown[]>();
  private taken = false;

  constructor(readonly spec: ProcessSpec) {
    ({ child: this.child, pgid: this.pgid } = spawnComponent(spec));
    for (const event of ["spawn", "error", "exit"] as const) this.child.once(event, (...args: unknown[]) => this.seen.set(event, args));
  }

  /** The process, once; `once` gives a listener the event at once if it already happened. */
  adopt(): { child: ChildProcess; pgid: number | undefined; once: (event: ChildEvent, listener: ChildListener) => void } | null {
    if (this.taken) return null;
    this.taken = true;
    const once = (event: ChildEvent, listener: ChildListener) => {
      const args = this.seen.get(event);
      if (args) listener(...args);
      else this.child.once(event, listener);
    };
    return { child: this.child, pgid: this.pgid, once };
  }

  /** Ends it if no peer adopted it (EOF, then TERM and KILL to its group, briefly: it was never sent anything). */
  async discard(): Promise<void> {
    if (this.taken) return;
    this.taken = true;
    const { child, pgid } = this;
    if (!spawnedOk(child)) return;
    await endProcess(
      child,
      pgid,
      UNUSED_GRACE_MS,
      () => child.stdin?.end(),
      () => this.seen.has("exit"),
    );
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
  }
}
