/**
 * What a proxy was handed and may pass on unchanged without a grant: the bookkeeping the grant
 * rules share (`fs-grant`, `mcp-origin`, `mcp-client`). A rule that gates a kind of call credits
 * each such call delivered to a proxy from the side it may pass it on toward (`earns`), lets a
 * pass of exactly that content consume the credit (`take`), and drops the credit when the proxy
 * answers the request itself, when the router answers it on the proxy's behalf, or when the proxy
 * fails (a restarted instance starts with none).
 *
 * Cost: per proxy, one `Forwardable` (see grants.ts): a digest per credited request in flight
 * inside it, plus at most 256 credited notifications.
 */
import { Forwardable } from "../grants.js";
import type { Hop } from "../hop.js";
import type { Forwarded, NotifiedCall, RouteContext, Rule } from "./rule.js";

export type HandedHooks = Required<Pick<Rule, "forwarded" | "answer" | "settled" | "closed">>;

export class Handed {
  private readonly byProxy = new Map<Hop, Forwardable>();

  /** Consumes `from`'s credit for exactly this call; false when it was never handed it. */
  take(from: Hop, method: string, params: unknown): boolean {
    return this.byProxy.get(from)?.take(method, params) ?? false;
  }

  /** The rule hooks that keep the credits: a call delivered to a proxy earns one when `earns` says so. */
  hooks(earns: (cx: RouteContext, record: Forwarded | NotifiedCall) => boolean): HandedHooks {
    return {
      forwarded: (cx, record) => {
        if (record.to.position.role !== "proxy" || !earns(cx, record)) return;
        let credits = this.byProxy.get(record.to);
        if (!credits) this.byProxy.set(record.to, (credits = new Forwardable()));
        credits.add(record.key, record.call.method, record.call.params);
      },
      answer: (_cx, _answer, { answerer, key }) => {
        this.byProxy.get(answerer)?.release(key);
        return undefined;
      },
      settled: (_cx, hop, key) => void this.byProxy.get(hop)?.release(key),
      closed: (_cx, hop) => void this.byProxy.delete(hop),
    };
  }
}
