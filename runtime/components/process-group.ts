/**
 * Process groups for the native processes Cordon starts (the agent, trusted native proxies).
 *
 * Each one is spawned `detached`, so it leads its own process group (on POSIX Node calls
 * `setsid()`: a new session and group whose id is the child's pid). Launchers (`npx …`, an npm
 * wrapper that `spawnSync`s a native binary) put the real agent one or two levels below the
 * process Cordon knows; signalling the group reaches all of them, and "the group is empty" is the
 * test for "nothing of it is left" — not the pipes, which a grandchild may hold forever.
 *
 * Three things keep a group from outliving Cordon:
 *  - the normal exit paths end each group (`endGroup`: EOF, a grace, SIGTERM to the group, a grace,
 *    SIGKILL to the group);
 *  - `process.on("exit")` SIGKILLs every group still registered (an uncaught error, a forced exit);
 *  - a watchdog: a tiny `/bin/sh` in its own session, started with the first group, reads the
 *    registered group ids on a pipe from Cordon. When that pipe reaches EOF with groups still
 *    registered — Cordon was SIGKILLed or crashed without running its exit hook — it waits a
 *    second, SIGTERMs those groups, waits a second and SIGKILLs them.
 *
 * Not covered: a process that leaves its group on purpose (`setsid`, `setpgid`: daemons), the
 * watchdog itself being SIGKILLed together with Cordon (e.g. an OOM kill or a cgroup kill of both),
 * and Windows, which has no process groups (there the direct child alone is signalled).
 * Set `CORDON_WATCHDOG=0` to start no watchdog.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Whether this platform has process groups we can signal. */
export const PROCESS_GROUPS = process.platform !== "win32";

const live = new Set<number>();
let hooked = false;
let watchdog: ChildProcess | null | undefined;

/** Registers a group (its leader's pid) so that no exit path of Cordon leaves it behind. */
export function registerGroup(pgid: number): void {
  if (!PROCESS_GROUPS) return;
  live.add(pgid);
  if (!hooked) {
    hooked = true;
    process.on("exit", () => killAllGroups("SIGKILL"));
  }
  tellWatchdog(`+${pgid}`);
}

/** The group is gone (or ended by us): forget it. */
export function unregisterGroup(pgid: number): void {
  if (!live.delete(pgid)) return;
  tellWatchdog(`-${pgid}`);
}

/** Signals every registered group at once, synchronously (a second signal to Cordon, exit). */
export function killAllGroups(signal: NodeJS.Signals = "SIGKILL"): void {
  for (const pgid of live) signalGroup(pgid, signal);
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: nothing left in it
  }
}

/**
 * True while any live process is left in the group (EPERM still means it exists). A zombie does
 * not count: where orphans are reparented to an init that does not reap them (some containers),
 * a dead grandchild would otherwise keep its group "alive" forever — on Linux the members are
 * looked up in /proc.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  const members = groupMembers(pgid);
  return members === null || members.length > 0;
}

/** Linux: the pids of the group's processes that are not zombies (null if /proc cannot be read). */
function groupMembers(pgid: number): number[] | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat && stat.pgrp === pgid && stat.state !== "Z" && stat.state !== "X") members.push(Number(entry));
  }
  return members;
}

/** Linux: state and process group of a pid from /proc/<pid>/stat (null if it is gone). */
export function procStat(pid: number): { state: string; ppid: number; pgrp: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid pgrp …" — comm may hold spaces and parentheses, so split after the last ")".
    const [state, ppid, pgrp] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state, ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return null;
  }
}

/** Polls `done` every 20 ms until it holds (true) or `ms` pass (false). */
async function waitFor(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

export interface EndOptions {
  /** How long the group gets after its stdin closed before SIGTERM, and again before SIGKILL. */
  graceMs: number;
  /** Closes the child's stdin (EOF), done first. */
  closeInput: () => void;
  /** Whether anything of it is left (the group, or the direct child where there are no groups). */
  alive: () => boolean;
  /** Sends a signal to the whole group (or the direct child). */
  signal: (signal: NodeJS.Signals) => void;
}

/** EOF, grace, SIGTERM, grace, SIGKILL — stopping as soon as nothing is left. Bounded: 2 graces + 1 s. */
export async function endGroup(o: EndOptions): Promise<"eof" | "SIGTERM" | "SIGKILL" | "survived"> {
  o.closeInput();
  if (await waitFor(() => !o.alive(), o.graceMs)) return "eof";
  o.signal("SIGTERM");
  if (await waitFor(() => !o.alive(), o.graceMs)) return "SIGTERM";
  o.signal("SIGKILL");
  return (await waitFor(() => !o.alive(), 1000)) ? "SIGKILL" : "survived";
}

// ---- the watchdog --------------------------------------------------------------------------

/**
 * Reads `+pgid` / `-pgid` lines until EOF; then ends what is still registered. Signals that reach
 * it are ignored (it is in its own session, but a parent may signal it by pid along with Cordon).
 * `kill -TERM -N` is the form every POSIX sh (dash included) reads as "group N".
 */
const WATCHDOG_SCRIPT = `
trap '' HUP INT TERM PIPE
groups=
while IFS= read -r line; do
  case $line in
    +*) groups="$groups \${line#+}" ;;
    -*) rest=; for g in $groups; do [ "$g" = "\${line#-}" ] || rest="$rest $g"; done; groups=$rest ;;
  esac
done
[ -z "$groups" ] && exit 0
sleep 1
for g in $groups; do kill -TERM -$g 2>/dev/null; done
sleep 1
for g in $groups; do kill -KILL -$g 2>/dev/null; done
exit 0
`;

function tellWatchdog(line: string): void {
  if (watchdog === undefined) watchdog = startWatchdog();
  if (!watchdog?.stdin?.writable) return;
  watchdog.stdin.write(`${line}\n`);
}

function startWatchdog(): ChildProcess | null {
  if (process.env.CORDON_WATCHDOG === "0") return null;
  try {
    // Its own session (so a signal to Cordon's group does not reach it); no stdout or stderr, so it
    // never holds the pipes of whoever launched Cordon.
    const child = spawn("/bin/sh", ["-c", WATCHDOG_SCRIPT], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", () => {
      if (watchdog === child) watchdog = null;
    });
    child.stdin!.on("error", () => {
      if (watchdog === child) watchdog = null;
    });
    // It must not keep Cordon (or a test process) alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    return child;
  } catch {
    return null;
  }
}
