/**
 * Ends a child process the way an editor ends an agent: EOF on its stdin; if it lingers, SIGTERM
 * (Cordon then ends its agent's process group at once); if it still lingers, SIGKILL. Waits for
 * the `exit` event only, never for pipes a grandchild may hold.
 */
import type { ChildProcess } from "node:child_process";

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How long after SIGTERM a child gets before SIGKILL. */
const TERM_GRACE_MS = 2000;

/** Resolves with how the child exited; `exited` is the promise of its `exit` event. */
export async function endChild(child: ChildProcess, exited: Promise<ExitStatus>, timeoutMs = 5000): Promise<ExitStatus> {
  child.stdin?.end();
  const term = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
  const kill = setTimeout(() => child.kill("SIGKILL"), timeoutMs + TERM_GRACE_MS);
  const result = await exited;
  clearTimeout(term);
  clearTimeout(kill);
  return result;
}
