/**
 * The supervisor applies a failed proxy's failure policy (see `FailurePolicy` in hop.ts): bypass
 * it, or restart it with exponential backoff up to a cap, after which the chain refuses work
 * through it for good. It owns the timing; the conductor owns the routing and is told, through
 * `SupervisorHooks`, when to open the peer again and when the new instance is up.
 */
import type { Hop } from "./hop.js";

export interface SupervisorHooks {
  /** Starts the proxy's peer again; rejects if it cannot start. */
  open(hop: Hop): Promise<void>;
  /** The new instance is up (it has been revived): replay its initialization, release held deliveries. */
  restarted(hop: Hop): void;
  /** Tells the operator and the client what happened to a component. */
  notice(level: "warn" | "error", hop: Hop, message: string): void;
  /** The conductor is shutting down: nothing is restarted any more. */
  stopping(): boolean;
}

/** Restarts of one proxy before Cordon gives up on it, and the first backoff (doubling each time). */
const MAX_RESTARTS = 5;
const FIRST_BACKOFF_MS = 100;

export class Supervisor {
  /** Restarts scheduled per proxy so far. */
  private readonly restarts = new Map<Hop, number>();

  constructor(private readonly hooks: SupervisorHooks) {}

  /** `hop` has failed (its `failure` is set): apply its policy. */
  failed(hop: Hop, reason: string): void {
    if (this.hooks.stopping()) return;
    const restarts = this.restarts.get(hop) ?? 0;
    if (hop.policy === "bypass") {
      hop.bypass();
      return this.hooks.notice("warn", hop, `${hop.label} ${reason}; it is bypassed from now on (policy bypass): messages skip it`);
    }
    if (restarts >= MAX_RESTARTS) {
      hop.giveUp(`${reason}, and it has failed ${restarts + 1} times, so Cordon stopped restarting it; restart the session to try again`);
      return this.hooks.notice("error", hop, `${hop.label} ${hop.failure}`);
    }
    const delay = FIRST_BACKOFF_MS * 2 ** restarts;
    this.restarts.set(hop, restarts + 1);
    hop.scheduleRestart(`${reason}; it is restarting (attempt ${restarts + 1} of ${MAX_RESTARTS})`);
    this.hooks.notice(
      "warn",
      hop,
      `${hop.label} ${reason}; restarting it in ${delay} ms (attempt ${restarts + 1} of ${MAX_RESTARTS}); state it kept per session is lost`,
    );
    setTimeout(() => void this.restart(hop), delay);
  }

  private async restart(hop: Hop): Promise<void> {
    if (this.hooks.stopping()) return;
    try {
      await this.hooks.open(hop);
    } catch (error) {
      return this.failed(hop, `could not be restarted: ${(error as Error).message}`);
    }
    hop.revive();
    this.hooks.restarted(hop);
  }
}
