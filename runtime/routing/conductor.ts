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
 *
 * The router holds no policy: what a message must be to enter is admission.ts, every policy on a
 * call or an answer is a rule in the ordered tables of rules/index.ts, where the chain ends (an
 * agent, or a parent conductor) is the host strategy (host.ts), and who watches is a route
 * observer (events.ts).
 */

import { type Logger, sanitizeForLog } from "../log.js";
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
import { isProxySuccessor, Methods } from "../protocol/methods.js";
import { withMember } from "../protocol/raw-json.js";
import { breachOf } from "./admission.js";
import { afterAgentDeath, answerHeld } from "./aftermath.js";
import { Backpressure } from "./backpressure.js";
import { crossing } from "./crossing.js";
import { type Call, cancelRequest, isRequest, stripId, unwrap, withId, wrap } from "./envelope.js";
import { type RouteEvent, type RouteObserver, type RouteObservers, routeObservers, traceName } from "./events.js";
import { failureData } from "./failure.js";
import { Hop, type Incoming, type ProxySettings } from "./hop.js";
import { agentHost, type Host, parentHost } from "./host.js";
import { undeliverable } from "./in-flight.js";
import type { FailureDetail, Peer } from "./peer.js";
import { Refusals } from "./refusals.js";
import { decide, type Forwarded, isHandled, type RouteContext, type Rule, type RuleTable, ruleTable } from "./rules/index.js";
import { MethodRules } from "./rules/method-rules.js";
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
  proxySettings?: readonly (ProxySettings | undefined)[];
  /**
   * Report a request that sits inside a proxy — neither passed on nor answered — for longer than
   * this (ms; 0 turns it off; default 5 s).
   */
  slowRequestMs?: number;
}

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
  private backlog: unknown[] = [];
  private exiting = false;

  /** Where the chain ends: an agent Cordon starts, or a parent conductor (host.ts). */
  private readonly host: Host;
  private readonly supervisor: Supervisor;
  private readonly backpressure: Backpressure;
  private readonly refusals: Refusals;
  /** Who hears what the router did (events.ts): drop warnings, the trace, the debug log, the stall watch. */
  private readonly observers: RouteObservers;
  /** The routing rules of each direction (rules/index.ts), and what they see of the chain. */
  private readonly rules: RuleTable;
  /** Each call table's rules by method (`method-rules.ts`): only the rules that judge a method are called for it. */
  private readonly callRules: Record<"fromClient" | "fromAgent" | "proxyToPredecessor" | "proxyToSuccessor", MethodRules>;
  /** The rules told of a forwarded notification, by its method (those that judge it, or every method). */
  private readonly notifiedRules: MethodRules;
  private readonly cx: RouteContext;

  constructor(private readonly options: ConductorOptions) {
    this.log = options.log;
    this.client = new Hop(options.client, { role: "client" });
    this.host = options.mode === "proxy" ? parentHost(this.client) : agentHost(this.client, options.agent);
    this.agent = this.host.agent;
    this.rules = ruleTable(this.host.mode);
    this.callRules = {
      fromClient: new MethodRules(this.rules.fromClient),
      fromAgent: new MethodRules(this.rules.fromAgent),
      proxyToPredecessor: new MethodRules(this.rules.proxyToPredecessor),
      proxyToSuccessor: new MethodRules(this.rules.proxyToSuccessor),
    };
    this.notifiedRules = new MethodRules(this.rules.hearing.forwarded, () => true);
    this.proxies = options.proxies.map((p, index) => new Hop(p, { role: "proxy", index }, undefined, options.proxySettings?.[index]));
    this.backpressure = new Backpressure(() => [this.client, this.agent, ...this.proxies], this.log);
    this.observers = routeObservers(this.log, options, this.proxies);
    this.refusals = new Refusals((hop, why, message) => this.dropped(hop, why, message), this.log);
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
      forwardAgain: (record) => this.forwardAgain(record),
      exit: (code) => this.exit(code),
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
      if (this.host.startsAgent) await this.open(this.agent);
      await Promise.all(this.proxies.map((hop) => this.open(hop)));
    } catch (error) {
      const reason = (error as Error).message;
      this.rules.startFailure.failed(reason);
      this.log.error(`cannot start the chain: ${reason}`);
    }
    this.ready = true;
    const backlog = this.backlog;
    this.backlog = [];
    for (const value of backlog) this.receive(this.client, value);
    if (backlog.length >= MAX_BACKLOG && !this.backpressure.pauses(this.client)) this.client.peer.resumeInput?.();
  }

  private open(hop: Hop): Promise<void> {
    return hop.peer.open({
      message: (value, admitted) => this.receive(hop, value, admitted === true),
      malformed: (detail) => this.malformed(hop, detail),
      closed: (reason, detail) => {
        this.backpressure.congestion(hop, false);
        this.closed(hop, reason, detail);
      },
      congested: (congested) => this.backpressure.congestion(hop, congested),
    });
  }

  // ---- input -----------------------------------------------------------------------------

  /**
   * Every message from every peer enters here. This is the exception boundary: a bug anywhere in
   * routing fails the one message that hit it (a request is answered with an error), never the
   * process and never the other sessions.
   */
  private receive(hop: Hop, value: unknown, admitted = false): void {
    try {
      if (hop !== this.client && !hop.alive) return;
      // Too deep, or (a proxy's) not I-JSON: refused whole, in one scan (admission.ts).
      const breach = admitted ? null : breachOf(value, hop.position.role === "proxy");
      if (breach) return this.refusals.whole(hop, value, breach, (answer) => this.receive(hop, answer));
      if (hop === this.client) this.fromClient(value);
      else this.fromComponent(hop, value);
    } catch (error) {
      this.refusals.fault(hop, value, error);
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
        return this.response(this.host.answerer(c.message.id), c.message);
      case "invalid":
        return this.client.peer.send(errorResponse(c.id, ErrorCodes.invalidRequest, `Invalid request: ${c.reason}`));
      default: {
        // Proxy mode: the parent also delivers what our successor sent, for the agent's side.
        const inner = this.host.successorCall(c.message, this.rules.handshake.done);
        if (inner === null) return this.fromClientCall(c.message);
        if (typeof inner === "string") return this.refusals.call(c.message, ErrorCodes.invalidRequest, inner, this.client);
        return this.call(this.agent, inner);
      }
    }
  }

  private fromClientCall(original: Call): void {
    const ruled = this.ruled(this.callRules.fromClient.for(original.method), original, this.client);
    if (!ruled) return;
    if (ruled.call.method === Methods.cancelRequest) return this.cancel(this.client, ruled.call.params);
    const initialized = this.ruled([this.rules.handshake], ruled.call, this.client);
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
      const ruled = this.ruled(this.callRules.fromAgent.for(method), message, hop);
      if (!ruled) return;
      return this.backward(hop, ruled.call, ruled.to ?? this.proxies.length - 1, ruled.exact);
    }
    if (pos.role !== "proxy") return;
    if (isRequest(message))
      this.emit({ kind: "passedOn", hop, method: isProxySuccessor(method) ? String(paramsObject(message.params)?.method) : method });
    if (!isProxySuccessor(method)) {
      const ruled = this.ruled(this.callRules.proxyToPredecessor.for(method), message, hop);
      if (!ruled) return;
      return this.backward(hop, ruled.call, ruled.to ?? pos.index - 1, ruled.exact);
    }
    if (method === Methods.legacyProxySuccessor) hop.speaksRust();
    const inner = unwrap(message);
    if (typeof inner === "string") return this.refusals.call(message, ErrorCodes.invalidRequest, inner, hop);
    if (inner.method === Methods.cancelRequest) return this.cancel(hop, inner.params);
    const ruled = this.ruled(this.callRules.proxyToSuccessor.for(inner.method), inner, hop, message);
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
      if (verdict.plain) this.refusals.call(envelope, verdict.refusal.code, verdict.refusal.message, replyTo);
      else this.refusals.gated(envelope, verdict.refusal, replyTo);
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
    for (const rule of this.rules.hearing.settled) rule.settled!(this.cx, hop, key);
    return true;
  }

  /** See `RouteContext.forwardAgain`. */
  private forwardAgain({ from, fromId, to, key, call }: Forwarded): void {
    to.settle(key);
    for (const rule of this.rules.hearing.settled) rule.settled!(this.cx, to, key);
    from.forget(idKey(fromId));
    this.deliver(from, call, to, this.spelled(call, to), false);
  }

  // ---- forwarding ------------------------------------------------------------------------

  /** Left to right: to proxy `index` unwrapped, or to the agent when `index` is past the last proxy. */
  private toward(from: Hop, message: Call, index: number): void {
    const pass = mayPass(message);
    while (index < this.proxies.length && (pass ? this.proxies[index].skips(message, false) : this.proxies[index].bypassed)) index++;
    const target = index < this.proxies.length ? this.proxies[index] : this.agent;
    this.deliver(from, message, target, this.spelled(message, target), false);
  }

  /** What `to` is sent for `call` going left to right: a proxy gets `initialize` as `proxy/initialize`, in its dialect. */
  private spelled(call: Call, to: Hop): Call {
    if (call.method !== Methods.initialize || to === this.agent) return call;
    return withMember(call, "method", to.dialect === "rust" ? Methods.legacyProxyInitialize : Methods.proxyInitialize);
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
    this.deliver(from, message, target, wrap(message, target.dialect), true, exact);
  }

  /** `chosen`: a rule picked `to` itself (`exact`), so its interest filter may not pass the call on. */
  private deliver(from: Hop, original: Call, to: Hop, outgoing: Call, enveloped: boolean, chosen = false): void {
    if (to.restarting && to.policy === "restart") {
      if (to.hold(() => this.deliver(from, original, to, outgoing, enveloped, chosen), MAX_HELD)) return;
      return this.refusals.call(
        original,
        ErrorCodes.internalError,
        `${to.label} is restarting and already holds ${MAX_HELD} messages; try again shortly`,
        from,
      );
    }
    if (!isRequest(original)) {
      if (this.observers.notified.length > 0) this.emitTo(this.observers.notified, { kind: "notified", from, to, call: original });
      if (!to.alive) return;
      const told = this.notifiedRules.for(original.method);
      if (told.length > 0) {
        const record = { from, to, key: null, call: original };
        for (const rule of told) rule.forwarded!(this.cx, record);
      }
      return to.peer.send(stripId(outgoing), chosen);
    }
    const refused = undeliverable(from, original, to);
    if (refused) return this.refusals.call(original, refused.code, refused.text, from, refused.data);
    const id = to.issueId();
    this.emit({ kind: "delivered", from, to, call: original, id });
    to.sent(idKey(id), {
      kind: "forward",
      from,
      fromId: original.id,
      fromGeneration: from.generation,
      method: original.method,
    });
    from.asked(idKey(original.id), { id: original.id, to, toId: id, enveloped });
    const record = { from, fromId: original.id, to, toId: id, key: idKey(id), call: original };
    for (const rule of this.rules.hearing.forwarded) rule.forwarded!(this.cx, record);
    to.peer.send(withId(outgoing, id) as JsonRpcRequest, chosen);
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
    const answered = { answerer: hop, key, asker: pending.from, askerGeneration: pending.fromGeneration, method: pending.method };
    for (const rule of this.rules.hearing.answer) {
      const judged = rule.answer!(this.cx, message, answered);
      if (isHandled(judged)) return; // the rule took the answer over (rules/rule.ts)
      if (judged) message = judged;
    }
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
    crossing(
      this.proxies,
      this.indexOf(hop),
      this.indexOf(from),
      () => {
        if (from.alive && from.generation === fromGeneration) from.peer.send(answer);
      },
      this.log,
    );
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

  /** A message Cordon did not forward: a warning for the operator, and a `trace` event with the message itself. */
  private dropped(hop: Hop, why: string, message?: unknown): void {
    this.emit({ kind: "dropped", hop, why, message });
  }

  private emit(event: RouteEvent): void {
    this.emitTo(this.observers.all, event);
  }

  private emitTo(observers: readonly RouteObserver[], event: RouteEvent): void {
    for (const observe of observers) observe(event);
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
      this.log.debug(`${this.host.clientName} closed the connection`);
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
    const components = this.host.startsAgent ? [this.agent, ...this.proxies] : this.proxies;
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
