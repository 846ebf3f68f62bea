/**
 * Tells the operator about requests that sit inside a proxy: delivered to it, and neither answered
 * nor passed on after `afterMs` — usually a proxy hook that returned without forwarding, answering
 * or holding on purpose. Each such request is reported once, naming the proxy and the method.
 *
 * "Passed on" is matched by method, first in first out: when a proxy sends a request of method M
 * (toward either side), its oldest unreported request of method M counts as forwarded. A proxy
 * that turns one method into another is not tracked through that; the watch only ever warns.
 *
 * Cost: a map entry per request in a proxy, and one timer (unref'd) while any exist.
 */
export interface Stalled {
  proxy: string;
  method: string;
  id: string;
  ms: number;
}

interface Entry {
  method: string;
  at: number;
  id: string;
}

export class StallWatch {
  /** Per proxy: its requests, by the conductor's key for them. */
  private readonly inside = new Map<string, Map<string, Entry>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly afterMs: number,
    private readonly report: (stalled: Stalled) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** A request (`key`, shown as `id`) was delivered to `proxy`. */
  delivered(proxy: string, key: string, id: string, method: string): void {
    if (this.afterMs <= 0) return;
    let entries = this.inside.get(proxy);
    if (!entries) this.inside.set(proxy, (entries = new Map()));
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
    this.tidy(proxy, entries);
  }

  /** The request `key` inside `proxy` was answered (or the proxy is gone: omit `key`). */
  settled(proxy: string, key?: string): void {
    const entries = this.inside.get(proxy);
    if (!entries) return;
    if (key === undefined) entries.clear();
    else entries.delete(key);
    this.tidy(proxy, entries);
  }

  /** Reports every request older than the limit, once. Called by the timer; public for tests. */
  sweep(): void {
    const now = this.now();
    for (const [proxy, entries] of this.inside) {
      for (const [key, entry] of entries) {
        if (now - entry.at < this.afterMs) break; // entries are in delivery order
        entries.delete(key);
        this.report({ proxy, method: entry.method, id: entry.id, ms: now - entry.at });
      }
      this.tidy(proxy, entries);
    }
  }

  private tidy(proxy: string, entries: Map<string, Entry>): void {
    if (entries.size === 0) this.inside.delete(proxy);
    if (this.inside.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
