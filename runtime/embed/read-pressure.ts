/**
 * Backpressure from the application's readers to the chain. A prompt run that is being read but
 * whose reader falls behind says so here; while any does, the chain is told its client is
 * congested, and the conductor stops reading the agent and running the proxies (as it does for a
 * stdio client that stops reading its stdout) until every reader has caught up. The application's
 * own writes (a `session/cancel`, answers to the agent's requests) still go through meanwhile.
 *
 * A reader may be behind because it awaits something from the chain itself (a request of its own,
 * another session's turn): pausing the chain then would deadlock it. So the chain is paused only
 * while `waitingOnChain` says the application waits for nothing but the behind runs themselves;
 * otherwise the runs keep buffering up to their hard bound (see `PromptRun`). It is asked again
 * whenever a reader falls behind or catches up and whenever {@link ReadPressure.recheck} is called
 * (the connection does so when its outstanding requests change).
 *
 * Invariant: `signal(true)` and `signal(false)` alternate, starting with true; after
 * {@link ReadPressure.close} (having signalled false if needed) nothing is signalled again.
 */
export class ReadPressure<Reader extends object = object> {
  private readonly behind = new Set<Reader>();
  private signalled = false;
  private closed = false;

  constructor(
    private readonly signal: (congested: boolean) => void,
    private readonly waitingOnChain: (behind: ReadonlySet<Reader>) => boolean = () => false,
  ) {}

  /** Whether the chain is paused for the readers now. */
  get congested(): boolean {
    return this.signalled;
  }

  /** `reader` has fallen behind (true) or caught up (false). */
  set(reader: Reader, behind: boolean): void {
    if (behind === this.behind.has(reader)) return;
    if (behind) this.behind.add(reader);
    else this.behind.delete(reader);
    this.recheck();
  }

  /** Re-evaluates whether the chain should be paused (what the application waits for changed). */
  recheck(): void {
    if (this.closed) return;
    const congested = this.behind.size > 0 && !this.waitingOnChain(this.behind);
    if (congested === this.signalled) return;
    this.signalled = congested;
    this.signal(congested);
  }

  /** The connection is closing: the chain is let go for good, so that turns can end. */
  close(): void {
    if (this.signalled) this.signal(false);
    this.signalled = false;
    this.closed = true;
  }
}
