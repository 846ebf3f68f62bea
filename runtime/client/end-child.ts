/** Ends a child process the way an editor ends an agent: EOF on its stdin, SIGKILL if it lingers. */
import type { ChildProcess } from "node:child_process";

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Resolves with how the child exited; `exited` is the promise of its `exit` event. */
export async function endChild(child: ChildProcess, exited: Promise<ExitStatus>, timeoutMs = 5000): Promise<ExitStatus> {
  child.stdin?.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const result = await exited;
  clearTimeout(timer);
  return result;
}
