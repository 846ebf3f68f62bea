/**
 * Route events: the router says once what it did with each message, and observers subscribe —
 * the trace (`--trace`), the debug log (`CORDON_LOG=debug`), the stall watch and the drop-warning
 * limiter — instead of being called from every path. This is the Rust conductor's "wrap, don't
 * call" (its snooper), done at the one place where all routes meet.
 *
 * Observers run inside the routing loop: they must be cheap and must not throw.
 */
import type { Logger } from "../log.js";
import { idKey, type JsonRpcId, type JsonRpcNotification, type JsonRpcResponse } from "../protocol/json-rpc.js";
import { WindowBudget } from "../sandbox/budget.js";
import type { Call } from "./envelope.js";
import { type Hop, MAX_DROP_WARNINGS } from "./hop.js";
import { StallWatch } from "./stall-watch.js";
import { sessionOf, type Tracer } from "./trace.js";

export type RouteEvent =
  /** A request went from `from` to `to`, which knows it as `id`. */
  | { kind: "delivered"; from: Hop; to: Hop; call: Call; id: JsonRpcId }
  | { kind: "notified"; from: Hop; to: Hop; call: Call }
  /**
   * `answerer` answered its request `id` (for `asker`, who knows it as `askerId`). `stale`: the
   * asker's instance is gone, so the answer goes nowhere.
   */
  | {
      kind: "answered";
      answerer: Hop;
      asker: Hop;
      id: JsonRpcId;
      askerId: JsonRpcId;
      method: string;
      answer: JsonRpcResponse;
      stale: boolean;
    }
  | { kind: "cancelled"; from: Hop; to: Hop; cancel: JsonRpcNotification }
  /** A proxy sent a request of `method` on (to either side). */
  | { kind: "passedOn"; hop: Hop; method: string }
  /** A peer is gone: nothing is inside it any more. */
  | { kind: "gone"; hop: Hop }
  /** A message Cordon did not forward, and why (for the operator). */
  | { kind: "dropped"; hop: Hop; why: string; message?: unknown };

export type RouteObserver = (event: RouteEvent) => void;

/** Participant names as the reference conductor's trace viewer expects them. */
export function traceName(hop: Hop): string {
  const p = hop.position;
  if (hop.peer.traceName) return hop.peer.traceName;
  return p.role === "proxy" ? `proxy:${p.index}` : p.role;
}

/**
 * The proxies a message travelled past between two hops — those strictly between them in the
 * chain, which never saw it (they do not watch it, were bypassed, or a rule routed around them) —
 * as `{past: [names]}`, or nothing when it went to a neighbour. So a trace answers "did redact
 * see this?" without the reader knowing the chain's watch lists.
 */
function pastOf(proxies: readonly Hop[], from: Hop, to: Hop): { past?: string[] } {
  const at = (hop: Hop) => (hop.position.role === "proxy" ? hop.position.index : hop.position.role === "client" ? -1 : proxies.length);
  const [lo, hi] = [at(from), at(to)].sort((a, b) => a - b);
  if (hi - lo < 2) return {};
  return { past: proxies.slice(lo + 1, hi).map(traceName) };
}

/**
 * `--trace`: every routed message in the reference conductor's event shape (see trace.ts), plus
 * `past` where it was routed past proxies of `proxies` (the chain, in order).
 */
export function traceObserver(trace: Tracer, proxies: readonly Hop[] = []): RouteObserver {
  return (e) => {
    switch (e.kind) {
      case "delivered":
      case "notified": {
        const common = { protocol: "acp", from: traceName(e.from), to: traceName(e.to), method: e.call.method } as const;
        const rest = { session: sessionOf(e.call.params), params: e.call.params ?? null, ...pastOf(proxies, e.from, e.to) };
        return trace(
          e.kind === "delivered" ? { type: "request", ...common, id: e.id, ...rest } : { type: "notification", ...common, ...rest },
        );
      }
      case "answered":
        return trace({
          type: "response",
          from: traceName(e.answerer),
          to: traceName(e.asker),
          id: e.id,
          is_error: e.answer.error !== undefined,
          payload: e.answer.error ?? e.answer.result ?? null,
          ...pastOf(proxies, e.answerer, e.asker),
        });
      case "cancelled":
        return trace({
          type: "notification",
          protocol: "acp",
          from: traceName(e.from),
          to: traceName(e.to),
          method: e.cancel.method,
          session: null,
          params: e.cancel.params,
          ...pastOf(proxies, e.from, e.to),
        });
      case "dropped":
        return trace({
          type: "trace",
          component: traceName(e.hop),
          level: "warn",
          message: e.why,
          ...(e.message === undefined ? {} : { dropped: e.message }),
        });
    }
  };
}

/** `CORDON_LOG=debug`: one line per routed message. */
function debugObserver(log: Logger): RouteObserver {
  return (e) => {
    if (e.kind === "notified") {
      if (e.to.alive) log.debug(`${traceName(e.from)} → ${traceName(e.to)}: ${e.call.method}`);
      else log.debug(`${traceName(e.from)} → ${traceName(e.to)}: ${e.call.method}; dropped, ${e.to.label} ${e.to.failure}`);
    } else if (e.kind === "delivered") {
      log.debug(`${traceName(e.from)} → ${traceName(e.to)}: ${e.call.method} (id ${JSON.stringify(e.call.id)} → ${JSON.stringify(e.id)})`);
    } else if (e.kind === "answered" && !e.stale) {
      log.debug(
        `${traceName(e.answerer)} → ${traceName(e.asker)}: ${e.answer.error ? "error" : "result"} for ${e.method} (id ${JSON.stringify(e.id)} → ${JSON.stringify(e.askerId)})`,
      );
    }
  };
}

/** Requests that sit inside a proxy (see stall-watch.ts). */
function stallObserver(watch: StallWatch): RouteObserver {
  return (e) => {
    if (e.kind === "delivered" && e.to.position.role === "proxy") watch.delivered(e.to.label, idKey(e.id), e.id, e.call.method);
    else if (e.kind === "answered" && e.answerer.position.role === "proxy") watch.settled(e.answerer.label, idKey(e.id));
    else if (e.kind === "passedOn") watch.passedOn(e.hop.label, e.method);
    else if (e.kind === "gone") watch.settled(e.hop.label);
  };
}

/**
 * Warnings about messages Cordon dropped or refused, at most `MAX_DROP_WARNINGS` per peer in any
 * 10 s: a peer that floods refused messages must not flood the operator's stderr too. Beyond, one
 * line says further ones are suppressed (the trace records all).
 */
export function dropWarnings(log: Logger): RouteObserver {
  const limits = new Map<Hop, { budget: WindowBudget; muted: boolean }>();
  return (e) => {
    if (e.kind === "gone" && e.hop.position.role !== "proxy") limits.delete(e.hop);
    if (e.kind !== "dropped") return;
    let limit = limits.get(e.hop);
    if (!limit) limits.set(e.hop, (limit = { budget: new WindowBudget(MAX_DROP_WARNINGS, 10_000), muted: false }));
    if (limit.budget.charge(1)) {
      limit.muted = false;
      log.warn(e.why);
    } else if (!limit.muted) {
      limit.muted = true;
      log.warn(
        `${e.hop.label}: more than ${MAX_DROP_WARNINGS} dropped or refused messages in 10 s; not logging further ones for now (--trace records all)`,
      );
    }
  };
}

/** A conductor's observers: all of them, and those that read `notified` events. */
export interface RouteObservers {
  all: RouteObserver[];
  /**
   * The trace and the debug log. The others never read a `notified` event, so without these the
   * router makes none: that is one event per notification per hop, most of a stream's events.
   */
  notified: RouteObserver[];
}

/**
 * The observers a conductor starts with: drop warnings and the stall watch (reporting a request
 * inside a proxy for longer than `slowRequestMs`, default 5 s, 0: never), the trace when one is
 * kept (naming the `proxies` a message was routed past), the debug log when it is on.
 */
export function routeObservers(
  log: Logger,
  options: { trace?: Tracer; slowRequestMs?: number },
  proxies: readonly Hop[] = [],
): RouteObservers {
  const stalls = new StallWatch(options.slowRequestMs ?? 5_000, ({ proxy, method, id, ms }) =>
    log.warn(`${method} (id ${id}) has been inside ${proxy} for ${(ms / 1000).toFixed(1)} s: it has neither passed it on nor answered it`),
  );
  const notified: RouteObserver[] = [];
  if (options.trace) notified.push(traceObserver(options.trace, proxies));
  if (log.enabled("debug")) notified.push(debugObserver(log));
  return { all: [dropWarnings(log), stallObserver(stalls), ...notified], notified };
}
