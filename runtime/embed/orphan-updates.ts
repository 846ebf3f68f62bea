/**
 * `session/update`s for session ids this connection has no {@link Session} for ("orphans"). Only
 * one kind is worth keeping: updates an agent sends for the session it is creating before it
 * answers `session/new` (or `fork`) with that session's id. So orphans are held only while such a
 * setup is pending, in arrival order, at most {@link MAX_HELD_ORPHAN_UPDATES} of them and
 * {@link MAX_HELD_ORPHAN_BYTES} together; the answer claims the ones of its session (they become
 * the start of its history), and once no setup is pending the rest are released.
 *
 * Released, over the bound, or arriving while no setup is pending, an orphan is handed to the
 * application's `onUpdate` if it gave one — as it comes, with no state kept between updates (a
 * `tool_call_update` event's `call` shows only what that update says) — or else dropped, with a
 * warning at most every few seconds saying how many. Nothing is kept for the connection's life:
 * a proxy (or an agent) sending updates for made-up session ids costs no memory.
 *
 * Cost: one array entry per held update, and a size walk of each (stopped at the bound).
 */
import { approxJsonBytes } from "./json-size.js";

/** Orphan updates held for pending setups, at most. */
const MAX_HELD_ORPHAN_UPDATES = 1024;
/** What the held orphan updates may weigh together (as JSON). */
const MAX_HELD_ORPHAN_BYTES = 8 * 1024 * 1024;

export interface OrphanLimits {
  maxUpdates?: number;
  maxBytes?: number;
}

interface Held {
  sessionId: string;
  update: unknown;
  bytes: number;
}

export class OrphanUpdates {
  private pending = 0;
  private readonly held: Held[] = [];
  private heldBytes = 0;
  private readonly maxUpdates: number;
  private readonly maxBytes: number;

  /**
   * `deliver`: the application's handler for updates of sessions it has none for (absent: they are
   * dropped). `warn`: told of every dropped update; it should be throttled (it may be provoked from outside).
   */
  constructor(
    private readonly deliver: ((sessionId: string, update: unknown) => void) | undefined,
    private readonly warn: (message: string) => void,
    limits: OrphanLimits = {},
  ) {
    this.maxUpdates = limits.maxUpdates ?? MAX_HELD_ORPHAN_UPDATES;
    this.maxBytes = limits.maxBytes ?? MAX_HELD_ORPHAN_BYTES;
  }

  /** Setups pending, and the updates held for them (for tests and diagnostics). */
  get stats(): { pendingSetups: number; updates: number; bytes: number } {
    return { pendingSetups: this.pending, updates: this.held.length, bytes: this.heldBytes };
  }

  /**
   * A setup whose session id is not known until its answer was sent (`session/new`, `fork`).
   * Returns the function to call when it is answered or fails (calling it again does nothing).
   */
  setupStarted(): () => void {
    this.pending++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.pending--;
      if (this.pending === 0) this.release();
    };
  }

  /** An update for `sessionId`, which has no session on this connection. */
  receive(sessionId: string, update: unknown): void {
    if (this.pending > 0) {
      const bytes = approxJsonBytes(update, this.maxBytes + 1);
      if (this.held.length < this.maxUpdates && this.heldBytes + bytes <= this.maxBytes) {
        this.held.push({ sessionId, update, bytes });
        this.heldBytes += bytes;
        return;
      }
    }
    this.pass(sessionId, update, this.pending > 0 ? "more than a pending setup may hold" : "no session setup is pending");
  }

  /** The updates held for `sessionId`, in order, which a setup's answer has just named: they are its session's now. */
  claim(sessionId: string): unknown[] {
    const mine: unknown[] = [];
    let kept = 0;
    for (const h of this.held) {
      if (h.sessionId === sessionId) {
        mine.push(h.update);
        this.heldBytes -= h.bytes;
      } else this.held[kept++] = h;
    }
    this.held.length = kept;
    return mine;
  }

  /** No setup is pending: what is held belongs to no session of this connection. */
  private release(): void {
    const rest = this.held.splice(0);
    this.heldBytes = 0;
    for (const h of rest) this.pass(h.sessionId, h.update, "no session setup named it");
  }

  private pass(sessionId: string, update: unknown, why: string): void {
    if (this.deliver) return this.deliver(sessionId, update);
    this.warn(
      `dropped a session/update for session ${JSON.stringify(sessionId.slice(0, 100))}, which this connection did not set up (${why}; give onUpdate to receive such updates)`,
    );
  }
}
