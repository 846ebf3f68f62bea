/** Resident memory of a process and all its descendants, from /proc (Linux). */
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

/** CPU time (user + system, all threads) of one process, in ms; 0 once it is gone. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return 0;
  }
}

/** CPU time of `pid` and its descendants (minus `exclude`d ones, as `treeRssMiB`), in ms. */
export function treeCpuMs(pid: number, exclude?: (commandLine: string) => boolean): number {
  return sumOverTree(pid, cpuMs, exclude);
}
