/** Resident memory and CPU time of a process and all its descendants, from /proc (Linux). */
import { readdirSync, readFileSync } from "node:fs";

function children(): Map<number, number[]> {
  const byParent = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = byParent.get(ppid) ?? [];
      list.push(Number(entry));
      byParent.set(ppid, list);
    } catch {
      // the process ended while we looked
    }
  }
  return byParent;
}

function rssKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/**
 * Sum of VmRSS over `pid` and its descendants, in MiB. `exclude(commandLine)` leaves a process
 * and its own descendants out (the benchmark leaves out the agent, to show the conductor's cost).
 */
export function treeRssMiB(pid: number, exclude?: (commandLine: string) => boolean): number {
  return sumOverTree(pid, rssKiB, exclude) / 1024;
}

/** `measure` summed over `pid` and its descendants, leaving out `exclude`d ones and theirs. */
function sumOverTree(pid: number, measure: (pid: number) => number, exclude?: (commandLine: string) => boolean): number {
  const tree = children();
  let total = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop()!;
    if (exclude && p !== pid && exclude(commandLine(p))) continue;
    total += measure(p);
    stack.push(...(tree.get(p) ?? []));
  }
  return total;
}

/** `utime + stime` of a `/proc/.../stat` file, in ms (clock ticks, USER_HZ = 100); 0 once it is gone. */
function ticksMs(path: string): number {
  try {
    const stat = readFileSync(path, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** Whether the kernel keeps each thread's run time (`schedstat`): this process has run, so its own is not 0. */
const SCHEDSTAT = (() => {
  try {
    return Number(readFileSync("/proc/self/schedstat", "utf8").split(" ")[0]) > 0;
  } catch {
    return false;
  }
})();

/** The nanoseconds a thread has run, from its `schedstat`, in ms; null once it is gone. */
function ranMs(path: string): number | null {
  try {
    return Number(readFileSync(path, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system, all threads, ended ones included) of one process, in ms; 0 once it is
 * gone. The process's `stat` counts it in clock ticks, which the kernel charges by sampling the
 * thread it finds running at each tick (10 ms): over a turn of 50 of P3's prompts (~70 ms of CPU)
 * that alone moved a figure by ±15 %. So each live thread counts what its `schedstat` says it ran,
 * to the nanosecond, and only the threads that ended (whose time `stat` still holds) count in ticks.
 */
function cpuMs(pid: number): number {
  const total = ticksMs(`/proc/${pid}/stat`);
  if (!SCHEDSTAT) return total;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return total;
  }
  let ran = 0;
  let liveTicks = 0;
  for (const tid of tasks) {
    const exact = ranMs(`/proc/${pid}/task/${tid}/schedstat`);
    if (exact === null) continue; // ended meanwhile: counted among the ended, in ticks
    ran += exact;
    liveTicks += ticksMs(`/proc/${pid}/task/${tid}/stat`);
  }
  return ran + Math.max(0, total - liveTicks);
}

/** CPU time of `pid` and its descendants (minus `exclude`d ones, as `treeRssMiB`), in ms. */
export function treeCpuMs(pid: number, exclude?: (commandLine: string) => boolean): number {
  return sumOverTree(pid, cpuMs, exclude);
}
