/**
 * Starts a sandbox under test with handlers that record what it does: its outputs, its congestion
 * changes, and its failure (`died` resolves when it fails).
 */
import type { ProxySandbox, SandboxFailure } from "../../runtime/sandbox/sandbox.js";

export function watchSandbox<S extends ProxySandbox>(sandbox: S) {
  const outputs: string[] = [];
  const congestion: boolean[] = [];
  let failure: SandboxFailure | null = null;
  let failed: () => void = () => {};
  const died = new Promise<void>((resolve) => (failed = resolve));
  const started = sandbox.start({
    output: (messages) => outputs.push(...messages),
    congested: (c) => congestion.push(c),
    failed: (f) => {
      failure = f;
      failed();
    },
  });
  return { sandbox, outputs, congestion, started, died, failure: () => failure };
}
