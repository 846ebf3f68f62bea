/**
 * The conductor: routes every message between the client, the proxies and the agent.
 *
 *   client ⇄ [conductor] ⇄ proxy 0, proxy 1, … proxy n-1, agent
 *
 * - From the client: to proxy 0 unwrapped (`initialize` becomes `proxy/initialize`), or straight
 *   to the agent when there are no proxies.
 * - From proxy i, `proxy/successor {method, params}`: unwrapped to proxy i+1 (initialize →
 *   `proxy/initialize`) or to the agent (as plain `initialize`).
 * - From proxy i, anything unwrapped: to its predecessor — the client as plain ACP, or proxy i-1
 *   wrapped in `proxy/successor` ("this comes from your successor").
 * - From the agent: to the last proxy wrapped, or to the client.
 * - Responses: by the hop's own pending map (see `Hop`), back to whoever asked.
 *
 * One ordered loop: every message is routed synchronously, in the order its peer delivered it,
 * and every send is an ordered write into the next peer, so a turn's `session/update`s can never
 * overtake the `session/prompt` response that follows them. Messages are forwarded as the JSON
 * they arrived as; only the envelope fields (id, method, wrapping) are rewritten.
 */

import { type Logger, sanitizeForLog } from "../log.js";
import { iJsonViolationOf } from "../protocol/i-json.js";
import {
  classify,
  ErrorCodes,
  errorResponse,
  idFromKey,
  idKey,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  paramsObject,
} from "../protocol/json-rpc.js";
import { isProxyInitialize, isProxySuccessor, Methods } from "../protocol/methods.js";
import { MAX_NESTING_DEPTH, nestsDeeperThan } from "../protocol/nesting.js";
import { withMember } from "../protocol/raw-json.js";
import { afterAgentDeath, answerHeld } from "./aftermath.js";
import { type Call, cancelRequest, isRequest, stripId, unwrap, withId, wrap } from "./envelope.js";
import { debugObserver, dropWarnings, type RouteEvent, type RouteObserver, stallObserver, traceName, traceObserver } from "./events.js";
import { type FailureData, failureData } from "./failure.js";
import type { Refusal } from "./gates/gate.js";
import type { Grant } from "./grants.js";
import { type Dialect, type FailurePolicy, Hop, type Incoming, type ProxySettings } from "./hop.js";
import { ParentSuccessorPeer } from "./parent-successor.js";
import type { FailureDetail, Peer } from "./peer.js";
import { decide, type RouteContext, type Rule, type RuleTable, ruleTable } from "./rules/index.js";
import { StallWatch } from "./stall-watch.js";
import { Supervisor } from "./supervisor.js";
import type { Tracer } from "./trace.js";

export interface ConductorOptions {
  /** The client (agent mode) or the parent conductor (proxy mode). */
  client: Peer;
  proxies: Peer[];
  /** The agent; absent in proxy mode, where the successor is reached through the parent. */
  agent?: Peer;
  /**
   * `agent`: the conductor stands in for an agent (expects `initialize`). `proxy`: it is itself a
   * proxy in a parent's chain (expects `proxy/initialize`; its last proxy's successor traffic goes
   * back to the parent wrapped in `proxy/successor`), so conductors nest.
   */
  mode?: "agent" | "proxy";
  log: Logger;
  /** Called once when the conductor must end (client gone: 0; agent gone: non-zero). */
  onExit(code: number): void;
  /** Receives every message at every hop (`--trace`). */
  trace?: Tracer;
  /** Each proxy's settings from its config entry (failure policy, grants, dialect), in chain order. */
  proxySettings?: ProxySettings[];
  /** Older form of `proxySettings`, one array per setting: failure policy of each proxy by position. */
  failurePolicies?: FailurePolicy[];
  /** Older form of `proxySettings`: what each proxy may originate, by position (default nothing). */
  grants?: Grant[][];
  /**
   * Report a request that sits inside a proxy — neither passed on nor answered — for longer than
   * this (ms; 0 turns it off; default 5 s).
   */
  slowRequestMs?: number;
  /** Older form of `proxySettings`: the proxy-chain spelling each proxy speaks, by position. */
  dialects?: (Dialect | undefined)[];
}

/**
 * Requests one peer may have waiting inside the chain at once. A proxy can mint requests ten
 * thousand per delivery; each costs a pending entry on two hops until answered, so the count is
 * bounded, generously for the client and the agent, tighter for a proxy.
 */
export const MAX_IN_FLIGHT = { proxy: 4_096, peer: 65_536 } as const;
/** Client messages kept while the chain starts, after which the client is not read until it is up. */
const MAX_BACKLOG = 1_000;
/** Deliveries held for a restarting proxy (policy `restart`) before further ones are refused. */
const MAX_HELD = 10_000;

export class Conductor {
  private readonly client: Hop;
  private readonly proxies: Hop[];
  private readonly agent: Hop;
  private readonly log: Logger;
  private ready = false;
  private startFailure: string | null = null;
  private backlog: unknown[] = [];
  private exiting = false;

  private readonly proxyMode: boolean;
  private readonly supervisor: Supervisor;
  /** Who hears what the router did (events.ts): drop warnings, the trace, the debug log, the stall watch. */
  private readonly observers: RouteObserver[];
  /** The routing rules of each direction (rules/index.ts), and what they see of the chain. */
  private readonly rules: RuleTable;
  private readonly cx: RouteContext;

  constructor(private readonly options: ConductorOptions) {
    this.log = options.log;
    this.proxyMode = options.mode === "proxy";
    this.rules = ruleTable(this.proxyMode ? "proxy" : "agent");
    this.client = new Hop(options.client, { role: "client" });
    this.proxies = options.proxies.map((p, index) => new Hop(p, { role: "proxy", index }, undefined, settingsOf(options, index)));
    if (this.proxyMode) {
      // The parent is both our client and our successor: one connection, two hops, disjoint ids.
      this.agent = new Hop(new ParentSuccessorPeer(options.client, () => this.client.dialect), { role: "agent" }, "s");
    } else {
      if (!options.agent) throw new Error("an agent is required outside proxy mode");
      this.agent = new Hop(options.agent, { role: "agent" });
    }
    const stalls = new StallWatch(options.slowRequestMs ?? 5_000, ({ proxy, method, id, ms }) =>
      this.log.warn(
        `${method} (id ${id}) has been inside ${proxy} for ${(ms / 1000).toFixed(1)} s: it has neither passed it on nor answered it`,
      ),
    );
    this.observers = [dropWarnings(this.log), stallObserver(stalls)];
    if (options.trace) this.observers.push(traceObserver(options.trace, this.proxies));
    if (this.log.enabled("debug")) this.observers.push(debugObserver(this.log));
    this.cx = {
      client: this.client,
      agent: this.agent,
      proxies: this.proxies,
      indexOf: (hop) => this.indexOf(hop),
      traceName,
      log: this.log,
      trace: (event) => this.options.trace?.(event),
      send: (hop, message: JsonRpcMessage) => hop.peer.send(message),
      notice: (level, hop, message) => this.notice(level, hop, message),
      answerInstead: (hop, key, result) => this.answerInstead(hop, key, result),
      request: (hop, method, params, answer) => {
        // Its answer, like every answer, comes back through `response` (an `own` entry).
        const id = hop.issueId();
        hop.sent(idKey(id), { kind: "own", method, answer });
        hop.peer.send({ jsonrpc: "2.0", id, method, params } as JsonRpcRequest);
      },
      dropped: (hop, why, message) => this.dropped(hop, why, message),
    };
    this.supervisor = new Supervisor({
      open: (hop) => this.open(hop),
      restarted: (hop) => this.restarted(hop),
      notice: (level, hop, message) => this.notice(level, hop, message),
      stopping: () => this.exiting,
    });
  }

  /**
   * Opens the client at once (its messages wait in order until the chain is up), then the agent
   * and the proxies. If a component cannot start, the error is logged now and given to the
   * client as the answer to its first request.
   */
  async start(): Promise<void> {
    await this.open(this.client);
    try {
      if (!this.proxyMode) await this.open(this.agent);
      await Promise.all(this.proxies.map((hop) => this.open(hop)));
    } catch (error) {
      this.startFailure = (error as Error).message;
      this.log.error(`cannot start the chain: ${this.startFailure}`);
    }
    this.ready = true;
    const backlog = this.backlog;
    this.backlog = [];
    for (const value of backlog) this.receive(this.client, value);
    if (backlog.length >= MAX_BACKLOG && !this.client.paused) this.client.peer.resumeInput?.();
  }

  private open(hop: Hop): Promise<void> {
    return hop.peer.open({
      message: (value) => this.receive(hop, value),
      malformed: (detail) => this.malformed(hop, detail),
      closed: (reason, detail) => {
        this.congestion(hop, false);
        this.closed(hop, reason, detail);
      },
      congested: (congested) => this.congestion(hop, congested),
    });
  }

  /**
   * Backpressure: while any peer cannot keep up — a proxy with more deliveries queued than it can
   * take, or a client or agent not reading what Cordon writes — Cordon stops reading from the
   * client and the agent (the sources of new work) and stops running the proxies that would feed
   * it, so every queue stays bounded and nothing accepted is dropped. All resume once every peer
   * has caught up.
   */
  private readonly congested = new Set<Hop>();
  private congestion(hop: Hop, congested: boolean): void {
    if (congested === this.congested.has(hop)) return;
    if (congested) this.congested.add(hop);
    else this.congested.delete(hop);
    if (congested) this.log.debug(`${hop.label} is congested: pausing input`);
    else if (this.congested.size === 0) this.log.debug("congestion cleared: resuming input");
    // A congested peer itself is still read: it may be blocked writing to us, and reading it is what unblocks it.
    for (const source of [this.client, this.agent, ...this.proxies]) {
      const pause = this.congested.size > 0 && !this.congested.has(source);
      if (!source.pause(pause)) continue;
      if (pause) source.peer.pauseInput?.();
      else source.peer.resumeInput?.();
    }
  }

  // ---- input -----------------------------------------------------------------------------

  /**
   * Every message from every peer enters here. This is the exception boundary: a bug anywhere in
   * routing fails the one message that hit it (a request is answered with an error), never the
   * process and never the other sessions.
   */
  private receive(hop: Hop, value: unknown): void {
    try {
      if (nestsDeeperThan(value)) return this.tooDeep(hop, value);
      if (hop === this.client) return this.fromClient(value);
      if (!hop.alive) return;
      // A proxy's text must read alike to every reader: the gates read JSON.parse's reading of it (i-json.ts).
      const ambiguous = hop.position.role === "proxy" ? iJsonViolationOf(value) : null;
      if (ambiguous) return this.refuseWhole(hop, value, `breaks I-JSON (RFC 7493): ${ambiguous.detail}`, "i-json");
      this.fromComponent(hop, value);
    } catch (error) {
      this.internalFault(hop, value, error);
    }
  }

  /** A message nesting deeper than the limit is refused whole; an answer becomes an error answer. */
  private tooDeep(hop: Hop, value: unknown): void {
    this.refuseWhole(hop, value, `nests deeper than ${MAX_NESTING_DEPTH} levels (Cordon's limit for any message)`);
  }

  /**
   * Refuses a message whole, before it is classified: a request gets an error, a notification is
   * dropped (both logged, rate-bounded); an answer still answers its request, with an error saying why.
   * `gate` names the rule in the error's data (a refusal, as the gates' are).
   */
  private refuseWhole(hop: Hop, value: unknown, why: string, gate?: string): void {
    const msg = value as Record<string, unknown>;
    const id = typeof msg.id === "string" || typeof msg.id === "number" ? msg.id : null;
    if (typeof msg.method === "string" || id === null) {
      const method = typeof msg.method === "string" ? sanitizeForLog(msg.method, 80) : "message";
      this.dropped(hop, `${hop.label} sent a ${method} that ${sanitizeForLog(why)}; refused`, { id, method });
      const data = gate === undefined ? undefined : failureData("cordon", "refused", { gate });
      if (id !== null) hop.peer.send(errorResponse(id, ErrorCodes.invalidRequest, `Invalid request: the message ${why}`, data));
      return;
    }
    this.dropped(hop, `${hop.label} answered with a message that ${sanitizeForLog(why)}; its requester gets an error`, { id });
    this.receive(hop, errorResponse(id, ErrorCodes.internalError, `${hop.label} answered with a result that ${why}`));
  }

  /** A bug in Cordon met this message: answer it with an error and carry on. */
  private internalFault(hop: Hop, value: unknown, error: unknown): void {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    this.log.error(`internal error while routing a message from ${hop.label}: ${sanitizeForLog(detail, 2000)}`);
    try {
      const c = classify(value);
      if (c.kind === "request" && hop.alive) {
        const text = `Cordon failed to route ${sanitizeForLog(c.message.method, 80)}: ${(error as Error)?.message ?? error}`;
        hop.peer.send(errorResponse(c.message.id, ErrorCodes.internalError, text, failureData("cordon", "internal")));
      }
    } catch {
      // Nothing more can be said about this message.
    }
  }

  private fromComponent(hop: Hop, value: unknown): void {
    const c = classify(value);
    switch (c.kind) {
      case "response":
        return this.response(hop, c.message);
      case "request":
      case "notification":
        return this.call(hop, c.message);
      case "invalid":
        this.dropped(hop, `${hop.label} sent an invalid message (${c.reason}); dropped`, value);
        if (hop.position.role === "proxy") this.closed(hop, `sent an invalid message: ${c.reason}`);
    }
  }

  private fromClient(value: unknown): void {
    if (!this.ready) {
      // Until the chain is up the client's messages wait in order; a client that floods meanwhile is paused.
      if (this.backlog.push(value) === MAX_BACKLOG) this.client.peer.pauseInput?.();
      return;
    }
    const c = classify(value);
    switch (c.kind) {
      case "response":
        // In proxy mode the parent answers both what we asked as its proxy and as its successor's caller.
        return this.response(this.agent.owns(c.message.id ?? "") && this.proxyMode ? this.agent : this.client, c.message);
      case "invalid":
        return this.client.peer.send(errorResponse(c.id, ErrorCodes.invalidRequest, `Invalid request: ${c.reason}`));
      default:
        if (this.proxyMode && isProxySuccessor(c.message.method)) return this.fromParentSuccessor(c.message);
        return this.fromClientCall(c.message);
    }
  }

  /** Proxy mode: the parent delivers what our successor sent (agent side). */
  private fromParentSuccessor(envelope: Call): void {
    if (envelope.method === Methods.legacyProxySuccessor) this.client.speaksRust();
    const inner = unwrap(envelope);
    if (typeof inner === "string") return this.refuse(envelope, ErrorCodes.invalidRequest, inner);
    if (!this.rules.handshake.done)
      return this.refuse(envelope, ErrorCodes.invalidRequest, `expected "proxy/initialize" before "${inner.method}"`);
    const ruled = this.ruled(this.rules.fromAgent, inner, this.agent, envelope, this.client);
    if (ruled) this.call(this.agent, ruled.call);
  }

  private fromClientCall(original: Call): void {
    const ruled = this.ruled(this.rules.fromClient, original, this.client);
    if (!ruled) return;
    const message = ruled.call;
    const { method } = message;
    if (this.startFailure !== null) {
      if (isRequest(message)) {
        this.client.peer.send(
          errorResponse(
            message.id,
            ErrorCodes.internalError,
            `Cordon could not start the chain: ${this.startFailure}`,
            failureData("cordon", "start"),
          ),
        );
      }
      this.exit(1);
      return;
    }
    if (method === Methods.cancelRequest) return this.cancel(this.client, message.params);
    const initialized = this.ruled([this.rules.handshake], message, this.client);
    if (initialized) this.toward(this.client, initialized.call, 0);
  }

  private malformed(hop: Hop, detail: string): void {
    if (hop === this.client) {
      this.client.peer.send(errorResponse(null, ErrorCodes.parseError, `Parse error: ${detail}`));
    } else {
      this.dropped(hop, `${hop.label} wrote a line that is not JSON-RPC (${detail}); dropped`);
    }
  }

  /** A request or notification from a proxy or the agent. */
  private call(hop: Hop, message: Call): void {
    const pos = hop.position;
    const { method } = message;
    if (method === Methods.cancelRequest) return this.cancel(hop, message.params);
    if (pos.role === "agent") {
      const ruled = this.ruled(this.rules.fromAgent, message, hop);
      if (!ruled) return;
      return this.backward(hop, ruled.call, ruled.to ?? this.proxies.length - 1, ruled.exact);
    }
    if (pos.role !== "proxy") return;
    if (isRequest(message))
      this.emit({ kind: "passedOn", hop, method: isProxySuccessor(method) ? String(paramsObject(message.params)?.method) : method });
    if (!isProxySuccessor(method)) {
      const ruled = this.ruled(this.rules.proxyToPredecessor, message, hop);
      if (!ruled) return;
      return this.backward(hop, ruled.call, ruled.to ?? pos.index - 1, ruled.exact);
    }
    if (method === Methods.legacyProxySuccessor) hop.speaksRust();
    const inner = unwrap(message);
    if (typeof inner === "string") return this.refuse(message, ErrorCodes.invalidRequest, inner, hop);
    if (inner.method === Methods.cancelRequest) return this.cancel(hop, inner.params);
    if (isProxyInitialize(inner.method) && this.retryInRustDialect(hop)) {
      if (isRequest(inner))
        hop.peer.send(errorResponse(inner.id, ErrorCodes.invalidRequest, `${inner.method} is only sent by the conductor`));
      return;
    }
    const ruled = this.ruled(this.rules.proxyToSuccessor, inner, hop, message);
    if (!ruled) return;
    this.toward(hop, ruled.call, ruled.to ?? pos.index + 1);
  }

  /**
   * Runs a rule table on a call from `from`: the call to route on (maybe rewritten) and its target,
   * or null when a rule refused it (the sender, or `replyTo`, is told about `envelope`) or handled it.
   */
  private ruled(
    rules: readonly Rule[],
    call: Call,
    from: Hop,
    envelope: Call = call,
    replyTo: Hop = from,
  ): { call: Call; to?: number; exact?: boolean } | null {
    const verdict = decide(rules, this.cx, call, from);
    if (verdict.kind === "pass") return { call: verdict.call ?? call, to: verdict.to, exact: verdict.exact };
    if (verdict.kind === "refuse") {
      if (verdict.plain) this.refuse(envelope, verdict.refusal.code, verdict.refusal.message, replyTo);
      else this.refuseGated(envelope, verdict.refusal, replyTo);
    }
    return null;
  }

  /** See `RouteContext.answerInstead`. */
  private answerInstead(hop: Hop, key: string, result: unknown): void {
    const pending = hop.outgoing.get(key);
    if (pending?.kind !== "forward" || !this.settleFor(hop, key)) return;
    pending.from.forget(idKey(pending.fromId));
    if (pending.from.alive) pending.from.peer.send({ jsonrpc: "2.0", id: pending.fromId, result } as JsonRpcResponse);
    this.sendCancel(pending.from, hop, cancelRequest(idFromKey(key)), hop !== this.client);
  }

  /** The router answered `hop`'s request `key` on its behalf: its late answer is dropped, and the rules forget it. */
  private settleFor(hop: Hop, key: string): boolean {
    if (!hop.settle(key)) return false;
    for (const rule of this.rules.all) rule.settled?.(this.cx, hop, key);
    return true;
  }

  /**
   * A Rust SDK (`sacp`) proxy forwards every method it does not know to its successor, so the
   * RFD's `proxy/initialize` comes straight back inside its `_proxy/successor` envelope instead
   * of an answer. Seen while our `proxy/initialize` to it is unanswered, that means it speaks only
   * `_proxy/*`: switch the hop's dialect and ask again; the first request is settled (a late
   * answer to it is dropped).
   */
  private retryInRustDialect(hop: Hop): boolean {
    for (const [key, pending] of hop.outgoing) {
      if (pending.kind !== "forward" || pending.method !== Methods.initialize || !pending.retry) continue;
      this.settleFor(hop, key);
      pending.from.forget(idKey(pending.fromId));
      this.log.info(`${hop.label} forwarded proxy/initialize instead of answering it: it speaks the Rust SDK's _proxy/* dialect; retrying`);
      pending.retry();
      return true;
    }
    return false;
  }

  // ---- forwarding ------------------------------------------------------------------------

  /** Left to right: to proxy `index` unwrapped, or to the agent when `index` is past the last proxy. */
  private toward(from: Hop, message: Call, index: number): void {
    const pass = mayPass(message);
    while (index < this.proxies.length && (pass ? this.proxies[index].skips(message, false) : this.proxies[index].bypassed)) index++;
    const target = index < this.proxies.length ? this.proxies[index] : this.agent;
    if (message.method !== Methods.initialize || target === this.agent) return this.deliver(from, message, target, message, false);
    const send = () => {
      const method = target.dialect === "rust" ? Methods.legacyProxyInitialize : Methods.proxyInitialize;
      // A proxy that answers proxy/initialize with method-not-found may speak only the Rust SDK's spelling.
      const retry = target.dialect === "rfd" ? () => (target.speaksRust(), send()) : undefined;
      this.deliver(from, message, target, withMember(message, "method", method), false, retry);
    };
    send();
  }

  /**
   * Right to left: to proxy `index` wrapped in `proxy/successor`, or to the client when `index` is
   * -1. `exact`: a rule chose that proxy, which gets the call even if it would only pass it on.
   */
  private backward(from: Hop, message: Call, index: number, exact = false): void {
    const pass = mayPass(message) && !exact;
    while (index >= 0 && (pass ? this.proxies[index].skips(message, true) : this.proxies[index].bypassed && !exact)) index--;
    if (index < 0) return this.deliver(from, message, this.client, message, false);
    const target = this.proxies[index];
    this.deliver(from, message, target, wrap(message, target.dialect), true);
  }

  private deliver(from: Hop, original: Call, to: Hop, outgoing: Call, enveloped: boolean, retry?: () => void): void {
    if (to.restarting && to.policy === "restart") {
      if (to.hold(() => this.deliver(from, original, to, outgoing, enveloped, retry), MAX_HELD)) return;
      return this.refuse(
        original,
        ErrorCodes.internalError,
        `${to.label} is restarting and already holds ${MAX_HELD} messages; try again shortly`,
        from,
      );
    }
    if (!isRequest(original)) {
      this.emit({ kind: "notified", from, to, call: original });
      if (!to.alive) return;
      for (const rule of this.rules.all) rule.forwarded?.(this.cx, { from, to, key: null, call: original });
      return to.peer.send(stripId(outgoing));
    }
    if (!to.alive) {
      return this.refuse(
        original,
        ErrorCodes.internalError,
        `${to.label} is not running: it ${to.failure}`,
        from,
        failureData(traceName(to), "down"),
      );
    }
    const fromKey = idKey(original.id);
    if (from.incoming.has(fromKey)) {
      return this.refuse(
        original,
        ErrorCodes.invalidRequest,
        `request id ${sanitizeForLog(JSON.stringify(original.id), 80)} is already in use by a request still in flight`,
        from,
      );
    }
    const limit = from.position.role === "proxy" ? MAX_IN_FLIGHT.proxy : MAX_IN_FLIGHT.peer;
    if (from.incoming.size >= limit) {
      return this.refuse(
        original,
        ErrorCodes.internalError,
        `${from === this.client ? "the client has" : `${from.label} has`} ${limit} requests in flight already (Cordon's limit); wait for answers`,
        from,
      );
    }
    const id = to.issueId();
    this.emit({ kind: "delivered", from, to, call: original, id });
    to.sent(idKey(id), {
      kind: "forward",
      from,
      fromId: original.id,
      fromGeneration: from.generation,
      method: original.method,
      retry,
    });
    from.asked(fromKey, { id: original.id, to, toId: id, enveloped });
    const record = { from, fromId: original.id, to, toId: id, key: idKey(id), call: original };
    for (const rule of this.rules.all) rule.forwarded?.(this.cx, record);
    to.peer.send(withId(outgoing, id) as JsonRpcRequest);
  }

  private response(hop: Hop, received: JsonRpcResponse): void {
    let message = received;
    const key = message.id === null ? null : idKey(message.id);
    const pending = key === null ? undefined : hop.outgoing.get(key);
    if (key !== null && hop.wasSettled(key)) return; // already answered on its behalf
    if (!pending || key === null) {
      this.dropped(
        hop,
        `${hop.label} answered a request it was never sent (id ${sanitizeForLog(JSON.stringify(message.id), 80)}); dropped`,
        message,
      );
      return;
    }
    hop.answered(key);
    if (pending.kind === "own") return pending.answer(message);
    // Method-not-found means "I speak only _proxy/*" only if the proxy never passed the initialize
    // on: one that did understood it, and is relaying an error from further down the chain.
    if (pending.retry && message.error?.code === ErrorCodes.methodNotFound && !hop.passedInitializeOn) {
      pending.from.forget(idKey(pending.fromId)); // the retry forwards the same request again
      for (const rule of this.rules.all) rule.settled?.(this.cx, hop, key);
      return pending.retry();
    }
    const answered = { answerer: hop, key, asker: pending.from, askerGeneration: pending.fromGeneration, method: pending.method };
    for (const rule of this.rules.all) message = rule.answer?.(this.cx, message, answered) ?? message;
    const stale = pending.fromGeneration !== pending.from.generation;
    this.emit({
      kind: "answered",
      answerer: hop,
      asker: pending.from,
      id: message.id!,
      askerId: pending.fromId,
      method: pending.method,
      answer: message,
      stale,
    });
    // The instance that asked is gone: its successor instance may reuse the id for another request.
    if (stale) return;
    pending.from.forget(idKey(pending.fromId));
    const { from, fromGeneration } = pending;
    const answer = withMember(message, "id", pending.fromId);
    this.crossing(hop, from, () => {
      if (from.alive && from.generation === fromGeneration) from.peer.send(answer);
    });
  }

  /**
   * Runs `deliver` (an answer travelling from `from` to `to`) once every proxy between them owes
   * no output. Those are the proxies its request was routed past (`Hop.skips`); had the request
   * gone through them, the answer would have come back through them, behind what they had yet to
   * send — so it waits for that here, and a turn's updates still precede its answer.
   */
  private crossing(from: Hop, to: Hop, deliver: () => void): void {
    const end = this.indexOf(to);
    const step = end > this.indexOf(from) ? 1 : -1;
    for (let i = this.indexOf(from) + step; i !== end; i += step) {
      const hop = this.proxies[i];
      if (hop.bypassed || !hop.alive || !hop.peer.whenIdle) continue;
      let synchronous = true;
      let ranAtOnce = false;
      hop.peer.whenIdle(() => {
        if (synchronous) return void (ranAtOnce = true);
        try {
          this.crossing(hop, to, deliver);
        } catch (error) {
          this.log.error(`internal error while routing an answer past ${hop.label}: ${sanitizeForLog(String(error), 2000)}`);
        }
      });
      synchronous = false;
      if (!ranAtOnce) return; // resumed from the callback, past this proxy
    }
    deliver();
  }

  /** Position in the chain: the client -1, proxies 0…n-1, the agent n. */
  private indexOf(hop: Hop): number {
    const position = hop.position;
    return position.role === "proxy" ? position.index : position.role === "client" ? -1 : this.proxies.length;
  }

  /** `$/cancel_request` is hop-scoped: re-issue it toward wherever the request went, with that hop's id. */
  private cancel(from: Hop, params: unknown): void {
    const requestId = paramsObject(params)?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return;
    const record: Incoming | undefined = from.incoming.get(idKey(requestId));
    if (!record?.to.alive) return; // unknown or finished: ignored, as the spec says
    this.sendCancel(from, record.to, cancelRequest(record.toId, paramsObject(params)), record.enveloped);
  }

  /** Sends `$/cancel_request` on `to`'s hop (in an envelope when the request went in one), and traces it. */
  private sendCancel(from: Hop, to: Hop, cancel: JsonRpcNotification, enveloped: boolean): void {
    this.emit({ kind: "cancelled", from, to, cancel });
    to.peer.send(enveloped ? wrap(cancel, to.dialect) : cancel);
  }

  /** Answers a request with an error on behalf of the chain (notifications are only logged). */
  private refuse(message: Call, code: number, text: string, to: Hop = this.client, data?: FailureData): void {
    if (isRequest(message)) to.peer.send(errorResponse(message.id, code, text, data));
    else this.dropped(to, `${to.label}: ${sanitizeForLog(text)} (notification ${sanitizeForLog(message.method, 80)} dropped)`, message);
  }

  /** A gate refused `message` from `from`: the sender is told (requests), the operator always. */
  private refuseGated(message: Call, refusal: Refusal, from: Hop): void {
    const what = isRequest(message) ? "request refused" : "notification dropped";
    this.dropped(from, `${refusal.gate}: ${sanitizeForLog(refusal.message)}; ${what}`, message);
    if (isRequest(message) && from.alive) {
      const data = failureData("cordon", "refused", refusal.grant ? { gate: refusal.gate, grant: refusal.grant } : { gate: refusal.gate });
      from.peer.send(errorResponse(message.id, refusal.code, refusal.message, data));
    }
  }

  /** A message Cordon did not forward: a warning for the operator, and a `trace` event with the message itself. */
  private dropped(hop: Hop, why: string, message?: unknown): void {
    this.emit({ kind: "dropped", hop, why, message });
  }

  private emit(event: RouteEvent): void {
    for (const observe of this.observers) observe(event);
  }

  // ---- failure ---------------------------------------------------------------------------

  /**
   * A peer is gone. Every request that was inside it is answered with an error naming it; requests
   * it had sent are cancelled downstream. The client leaving ends the conductor quietly; the agent
   * leaving ends it with a non-zero status after the errors are written.
   */
  private closed(hop: Hop, reason: string, detail?: FailureDetail): void {
    if (!hop.fail(reason)) return;
    this.emit({ kind: "gone", hop });
    for (const rule of this.rules.all) rule.closed?.(this.cx, hop);
    if (hop === this.client) {
      this.log.debug(`${this.proxyMode ? "parent conductor" : "client"} closed the connection`);
      this.exit(0);
      return;
    }
    if (hop === this.agent && !this.exiting) this.log.error(`${hop.label} ${reason}`);
    const data = failureData(traceName(hop), hop.position.role === "proxy" ? "crash" : "exit", detail);
    const { outgoing, incoming } = hop.drain();
    answerHeld(hop, outgoing, errorResponse(null, ErrorCodes.internalError, `${hop.label} ${reason}`, data), (e) => this.emit(e));
    // What it had asked of others is settled now: cancelled downstream, and a late answer is
    // dropped there instead of reaching a restarted instance that reuses the id.
    for (const [, record] of incoming) this.settle(hop, record);
    if (hop === this.agent) afterAgentDeath(this.client, `${hop.label} ${reason}`, data, () => this.exit(1));
    else if (hop.position.role === "proxy") this.supervisor.failed(hop, reason);
  }

  /** A restarted proxy is up: replay its initialization (its successor is not re-initialized), release held deliveries. */
  private restarted(hop: Hop): void {
    for (const rule of this.rules.all) rule.restarted?.(this.cx, hop);
    hop.release();
  }

  /** Tells the operator (stderr) and the client (`_cordon/notice`, which clients may ignore). */
  private notice(level: "warn" | "error", hop: Hop, message: string): void {
    this.log[level](message);
    if (this.client.alive) {
      this.client.peer.send({ jsonrpc: "2.0", method: Methods.cordonNotice, params: { level, component: hop.label, message } });
    }
  }

  /** A request whose asker died: nobody waits for its answer any more, so cancel it where it is. */
  private settle(asker: Hop, record: Incoming): void {
    this.settleFor(record.to, idKey(record.toId));
    if (record.to.alive) this.sendCancel(asker, record.to, cancelRequest(record.toId), record.enveloped);
  }

  private exit(code: number): void {
    if (this.exiting) return;
    this.exiting = true;
    this.options.onExit(code);
  }

  /** Closes every component (agent and proxies); the client link is left to the owner. */
  async shutdown(): Promise<void> {
    this.exiting = true;
    const components = this.proxyMode ? this.proxies : [this.agent, ...this.proxies];
    await Promise.allSettled(components.map((hop) => hop.peer.close()));
  }
}

/**
 * Whether a message may be routed past a proxy that would pass it (`Hop.skips`). Not `initialize`
 * (every proxy takes part), nor `elicitation/create`: a request-scoped one names its request by
 * the id one hop knows it by, so it retraces that request's path (`Conductor.elicitation`).
 */
function mayPass(message: Call): boolean {
  return message.method !== Methods.initialize && message.method !== Methods.elicitationCreate;
}

/** A proxy's settings: its own object, or (older callers, tests) the arrays by position. */
function settingsOf(options: ConductorOptions, index: number): ProxySettings {
  const own = options.proxySettings?.[index];
  if (own) return own;
  return { policy: options.failurePolicies?.[index], grants: options.grants?.[index], dialect: options.dialects?.[index] };
}
