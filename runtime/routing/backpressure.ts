/**
 * Backpressure: while any peer cannot keep up — a proxy with more deliveries queued than it can
 * take, or a client or agent not reading what Cordon writes — Cordon stops reading from the client
 * and the agent (the sources of new work) and stops running the proxies that would feed it, so
 * every queue stays bounded and nothing accepted is dropped. All resume once every peer has caught
 * up. A congested peer itself is still read: it may be blocked writing to us, and reading it is
 * what unblocks it.
 *
 * Cost: a set of the congested peers and one of the paused ones; a change walks every hop once.
 */
import type { Logger } from "../log.js";
import type { Hop } from "./hop.js";

export class Backpressure {
  private readonly congested = new Set<Hop>();
  private readonly paused = new Set<Hop>();

  /** `hops`: every hop whose input may be paused, asked at each change. */
  constructor(
    private readonly hops: () => readonly Hop[],
    private readonly log: Logger,
  ) {}

  /** Whether the router paused `hop`'s input. */
  pauses(hop: Hop): boolean {
    return this.paused.has(hop);
  }

  /** `hop` cannot keep up (true) or caught up (false). */
  congestion(hop: Hop, congested: boolean): void {
    if (congested === this.congested.has(hop)) return;
    if (congested) this.congested.add(hop);
    else this.congested.delete(hop);
    if (congested) this.log.debug(`${hop.label} is congested: pausing input`);
    else if (this.congested.size === 0) this.log.debug("congestion cleared: resuming input");
    for (const source of this.hops()) {
      const pause = this.congested.size > 0 && !this.congested.has(source);
      if (pause === this.paused.has(source)) continue;
      if (pause) {
        this.paused.add(source);
        source.peer.pauseInput?.();
      } else {
        this.paused.delete(source);
        source.peer.resumeInput?.();
      }
    }
  }
}
