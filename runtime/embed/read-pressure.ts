/**
 * Backpressure from the application's readers to the chain. A prompt run that is being read but
 * whose reader falls behind says so here; while any does, the chain is told its client is
 * congested, and the conductor stops reading the agent and running the proxies (as it does for a
 * stdio client that stops reading its stdout) until every reader has caught up. The application's
 * own writes (a `session/cancel`, answers to the agent's requests) still go through meanwhile.
 *
 * Invariant: `congested(true)` is signalled once when the first reader falls behind and
 * `congested(false)` once when the last catches up; a reader that ends (finished, left, failed)
 * must {@link ReadPressure.set} itself clear.
 */
export class ReadPressure {
  private readonly behind = new Set<object>();

  constructor(private readonly signal: (congested: boolean) => void) {}

  /** Whether any reader is behind now. */
  get congested(): boolean {
    return this.behind.size > 0;
  }

  /** `reader` has fallen behind (true) or caught up (false). */
  set(reader: object, behind: boolean): void {
    if (behind === this.behind.has(reader)) return;
    if (behind) this.behind.add(reader);
    else this.behind.delete(reader);
    if (behind && this.behind.size === 1) this.signal(true);
    else if (!behind && this.behind.size === 0) this.signal(false);
  }
}
