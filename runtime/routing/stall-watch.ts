/**
 * Tells the operator about requests that sit inside a proxy: delivered to it, and neither answered
 * nor passed on after `afterMs` — usually a proxy hook that returned without forwarding, answering
 * or holding on purpose. Each such request is reported once, naming the proxy and the method.
 *
 * "Passed on" is matched by method, first in first out: when a proxy sends a request of method M
 * (toward either side), its oldest unreported request of method M counts as forwarded. A proxy
 * that turns one method into another is not tracked through that; the watch only ever warns.
 *
 * Cost: a map entry per request in a proxy, and one timer (unref'd) from the first request until a
 * sweep finds none inside any proxy. The timer is not stopped the moment the last request leaves:
 * in a conversation every prompt empties the proxies, and a timer started and cleared per crossing
 * cost more than the rest of the watch (three of each per prompt through three proxies).
 */
import type { JsonRpcId } from "../protocol/json-rpc.js";
import { ChurnMap } from "./churn-map.js";

export interface Stalled {
  proxy: string;
  method: string;
  id: string;
  ms: number;
}

interface Entry {
  method: string;
  at: number;
  /** The request's id on the proxy's side, written out only if it is reported. */
  id: JsonRpcId;
}

export class StallWatch {
  /** Per proxy: its requests, by the conductor's key for them. */
  private readonly inside = new Map<string, ChurnMap<string, Entry>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly afterMs: number,
    private readonly report: (stalled: Stalled) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** A request (`key`, shown as `id`) was delivered to `proxy`. */
  delivered(proxy: string, key: string, id: JsonRpcId, method: string): void {
    if (this.afterMs <= 0) return;
    let entries = this.inside.get(proxy);
    if (!entries) this.inside.set(proxy, (entries = new ChurnMap()));
    entries.set(key, { method, at: this.now(), id });
    this.timer ??= setInterval(() => this.sweep(), Math.max(50, Math.min(1000, this.afterMs / 2))).unref();
  }

  /** `proxy` sent a request of `method`: its oldest one of that method was passed on. */
  passedOn(proxy: string, method: string): void {
    const entries = this.inside.get(proxy);
    if (!entries) return;
    for (const [key, entry] of entries) {
      if (entry.method === method) {
        entries.delete(key);
        break;
      }
    }
  }

  /** The request `key` inside `proxy` was answered (or the proxy is gone: omit `key`). */
  settled(proxy: string, key?: string): void {
    const entries = this.inside.get(proxy);
    if (!entries) return;
    if (key === undefined) this.inside.delete(proxy);
    else entries.delete(key);
  }

  /** Whether the sweep timer runs (tests). */
  get sweeping(): boolean {
    return this.timer !== null;
  }

  /**
   * Reports every request older than the limit, once, and stops the timer when no proxy holds any.
   * Called by the timer; public for tests.
   */
  sweep(): void {
    const now = this.now();
    let held = 0;
    for (const [proxy, entries] of this.inside) {
      for (const [key, entry] of entries) {
        if (now - entry.at < this.afterMs) break; // entries are in delivery order
        entries.delete(key);
        this.report({ proxy, method: entry.method, id: JSON.stringify(entry.id), ms: now - entry.at });
      }
      held += entries.size;
    }
    if (held === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
