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
import {
  classify,
  ErrorCodes,
  errorResponse,
  idFromKey,
  idKey,
  paramsObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "../protocol/json-rpc.js";
import { isProxyInitialize, isProxySuccessor, Methods } from "../protocol/methods.js";
import { isLevel, type Logger } from "../log.js";
import { promptCapabilitiesOf, unsupportedContent, type PromptCapabilities } from "./capabilities.js";
import { isRequest, stripId, unwrap, wrap, type Call } from "./envelope.js";
import { grantFor, type Grant } from "./grants.js";
import { ParentAsSuccessor } from "./parent-successor.js";
import { Hop, type FailurePolicy, type Incoming } from "./hop.js";
import type { Peer } from "./peer.js";
import { sessionOf, type Tracer } from "./trace.js";

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
  /** Failure policy of each proxy, by position (default `fail-closed`). */
  failurePolicies?: FailurePolicy[];
  /** What each proxy may originate toward the client, by position (default nothing). */
  grants?: Grant[][];
}

/** How long proxies get to relay the agent's death to the client before the conductor answers for them. */
const AGENT_DEATH_GRACE_MS = 250;
/** Restarts of one proxy before Cordon gives up on it, and the first backoff (doubling each time). */
export const MAX_RESTARTS = 5;
const FIRST_BACKOFF_MS = 100;

export class Conductor {
  private readonly client: Hop;
  private readonly proxies: Hop[];
  private readonly agent: Hop;
  private readonly log: Logger;
  private ready = false;
  private startFailure: string | null = null;
  private backlog: unknown[] = [];
  private initialized = false;
  /** The client's `initialize` params, replayed to a proxy that restarts. */
  private initParams: unknown = undefined;
  /** What the client was told the agent accepts in prompts (after every proxy had its say). */
  private promptCapabilities: PromptCapabilities = {};
  private exiting = false;

  private readonly proxyMode: boolean;
  private readonly trace: Tracer | null;

  constructor(private readonly options: ConductorOptions) {
    this.log = options.log;
    this.proxyMode = options.mode === "proxy";
    this.trace = options.trace ?? null;
    this.client = new Hop(options.client, { role: "client" });
    this.proxies = options.proxies.map((p, index) => new Hop(p, { role: "proxy", index }));
    options.failurePolicies?.forEach((policy, i) => {
      if (this.proxies[i]) this.proxies[i].policy = policy;
    });
    options.grants?.forEach((grants, i) => {
      if (this.proxies[i]) this.proxies[i].grants = new Set(grants);
    });
    if (this.proxyMode) {
      // The parent is both our client and our successor: one connection, two hops, disjoint ids.
      this.agent = new Hop(new ParentAsSuccessor(options.client, () => this.client.dialect), { role: "agent" }, "s");
    } else {
      if (!options.agent) throw new Error("an agent is required outside proxy mode");
      this.agent = new Hop(options.agent, { role: "agent" });
    }
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
    for (const value of backlog) this.fromClient(value);
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
   * Backpressure: while any proxy has more deliveries queued than it can take, Cordon stops
   * reading from the client and the agent — the only sources of new work — so queues stay
   * bounded and nothing is dropped. Reading resumes when every queue has drained.
   */
  private readonly congested = new Set<Hop>();
  private congestion(hop: Hop, congested: boolean): void {
    const before = this.congested.size > 0;
    if (congested) this.congested.add(hop);
    else this.congested.delete(hop);
    const after = this.congested.size > 0;
    if (before === after) return;
    for (const source of [this.client, this.agent]) {
      if (after) source.peer.pauseInput?.();
      else source.peer.resumeInput?.();
    }
    this.log.debug(after ? `${hop.label} is congested: pausing input` : "congestion cleared: resuming input");
  }

  // ---- input -----------------------------------------------------------------------------

  private receive(hop: Hop, value: unknown): void {
    if (hop === this.client) return this.fromClient(value);
    if (!hop.alive) return;
    const c = classify(value);
    switch (c.kind) {
      case "response":
        return this.response(hop, c.message);
      case "request":
      case "notification":
        return this.call(hop, c.message);
      case "invalid":
        this.log.warn(`${hop.label} sent an invalid message (${c.reason}); dropped`);
        if (hop.position.role === "proxy") this.closed(hop, `sent an invalid message: ${c.reason}`);
    }
  }

  private fromClient(value: unknown): void {
    if (!this.ready) {
      this.backlog.push(value);
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
    if (envelope.method === Methods.legacyProxySuccessor) this.client.dialect = "rust";
    const inner = unwrap(envelope);
    if (typeof inner === "string") return this.refuse(envelope, ErrorCodes.invalidRequest, inner);
    if (!this.initialized) return this.refuse(envelope, ErrorCodes.invalidRequest, `expected "proxy/initialize" before "${inner.method}"`);
    this.call(this.agent, inner);
  }

  private fromClientCall(message: Call): void {
    const { method } = message;
    if (this.startFailure !== null) {
      if (isRequest(message)) {
        this.client.peer.send(errorResponse(message.id, ErrorCodes.internalError, `Cordon could not start the chain: ${this.startFailure}`));
      }
      this.exit(1);
      return;
    }
    if (method === Methods.cancelRequest) return this.cancel(this.client, message.params);
    const expected = this.proxyMode ? Methods.proxyInitialize : Methods.initialize;
    const isInit = this.proxyMode ? isProxyInitialize(method) : method === Methods.initialize;
    if (!isInit && (isProxyInitialize(method) || isProxySuccessor(method) || method === Methods.initialize)) {
      const why = this.proxyMode
        ? `${method} cannot be sent to a conductor in proxy mode; it expects "proxy/initialize" from its parent`
        : `${method} is only sent by a conductor to its proxies`;
      return this.refuse(message, ErrorCodes.invalidRequest, why);
    }
    if (isInit) {
      if (this.initialized) return this.refuse(message, ErrorCodes.invalidRequest, `${method} was already sent on this connection`);
      this.initialized = true;
      this.initParams = message.params;
      if (method === Methods.legacyProxyInitialize) this.client.dialect = "rust";
      // Downstream, a proxy gets proxy/initialize and the agent (or our parent's successor) initialize.
      return this.toward(this.client, { ...message, method: Methods.initialize }, 0);
    }
    if (!this.initialized) return this.refuse(message, ErrorCodes.invalidRequest, `expected "${expected}" before "${method}"`);
    if (method === Methods.sessionPrompt) {
      const unsupported = unsupportedContent(message.params, this.promptCapabilities);
      if (unsupported) return this.refuse(message, ErrorCodes.invalidParams, unsupported);
    }
    if (method === Methods.sessionCancel) this.cancelHeldPermissions(sessionOf(message.params));
    this.toward(this.client, message, 0);
  }

  /**
   * `session/cancel`: every permission request of that session that the agent is still waiting on
   * is answered `cancelled` now, wherever in the chain it is held; the hop holding it gets a
   * `$/cancel_request` so the cancellation travels on toward the client, hop by hop.
   */
  private cancelHeldPermissions(sessionId: string | null): void {
    if (sessionId === null) return;
    for (const hop of [this.client, ...this.proxies]) {
      for (const [key, pending] of hop.outgoing) {
        if (pending.kind !== "forward" || pending.from !== this.agent || pending.sessionId !== sessionId) continue;
        hop.outgoing.delete(key);
        hop.settled.add(key);
        this.agent.incoming.delete(idKey(pending.fromId));
        this.agent.peer.send({ jsonrpc: "2.0", id: pending.fromId, result: { outcome: { outcome: "cancelled" } } });
        const cancel: JsonRpcNotification = { jsonrpc: "2.0", method: Methods.cancelRequest, params: { requestId: idFromKey(key) } };
        hop.peer.send(hop === this.client ? cancel : wrap(cancel, hop.dialect));
      }
    }
  }

  private malformed(hop: Hop, detail: string): void {
    if (hop === this.client) {
      this.client.peer.send(errorResponse(null, ErrorCodes.parseError, `Parse error: ${detail}`));
    } else {
      this.log.warn(`${hop.label} wrote a line that is not JSON-RPC (${detail}); dropped`);
    }
  }

  private call(hop: Hop, message: Call): void {
    const pos = hop.position;
    const { method } = message;
    if (method === Methods.cancelRequest) return this.cancel(hop, message.params);
    if (method === Methods.elicitationCreate) message = this.scopeToHop(hop, message);
    if (pos.role === "agent") return this.backward(hop, message, this.proxies.length - 1);
    if (pos.role !== "proxy") return;
    if (method === Methods.cordonLog) return this.proxyLog(hop, message.params);
    if (!isProxySuccessor(method)) {
      if (method === Methods.initialize || isProxyInitialize(method)) {
        return this.refuse(message, ErrorCodes.invalidRequest, `a proxy cannot send ${method}; only the conductor initializes components`, hop);
      }
      const grant = grantFor(method);
      if (grant && isRequest(message) && !hop.forwardable.take(method, message.params) && !hop.grants.has(grant)) {
        this.log.warn(`${hop.label} tried to send ${method} to the client without the "${grant}" grant; refused`);
        return this.refuse(message, ErrorCodes.invalidRequest, `${method} needs the "${grant}" grant, which this proxy does not have`, hop);
      }
      return this.backward(hop, message, pos.index - 1);
    }
    if (method === Methods.legacyProxySuccessor) hop.dialect = "rust";
    const inner = unwrap(message);
    if (typeof inner === "string") return this.refuse(message, ErrorCodes.invalidRequest, inner, hop);
    if (inner.method === Methods.cancelRequest) return this.cancel(hop, inner.params);
    if (isProxyInitialize(inner.method)) {
      return this.refuse(message, ErrorCodes.invalidRequest, "proxy/initialize is only sent by the conductor", hop);
    }
    if (inner.method === Methods.initialize && hop.successorInit) {
      // Its successor is initialized already: a restarted proxy gets the answer it got the first time.
      if (isRequest(inner)) hop.peer.send({ ...hop.successorInit, id: inner.id });
      return;
    }
    this.toward(hop, inner, pos.index + 1);
  }

  // ---- forwarding ------------------------------------------------------------------------

  /** Left to right: to proxy `index` unwrapped, or to the agent when `index` is past the last proxy. */
  private toward(from: Hop, message: Call, index: number): void {
    while (index < this.proxies.length && this.proxies[index].bypassed) index++;
    const target = index < this.proxies.length ? this.proxies[index] : this.agent;
    if (message.method !== Methods.initialize || target === this.agent) return this.deliver(from, message, target, message, false);
    const send = () => {
      const method = target.dialect === "rust" ? Methods.legacyProxyInitialize : Methods.proxyInitialize;
      // A proxy that answers proxy/initialize with method-not-found may speak only the Rust SDK's spelling.
      const retry = target.dialect === "rfd" ? () => ((target.dialect = "rust"), send()) : undefined;
      this.deliver(from, message, target, { ...message, method }, false, retry);
    };
    send();
  }

  /** Right to left: to proxy `index` wrapped in `proxy/successor`, or to the client when `index` is -1. */
  private backward(from: Hop, message: Call, index: number): void {
    while (index >= 0 && this.proxies[index].bypassed) index--;
    if (index < 0) return this.deliver(from, message, this.client, message, false);
    const target = this.proxies[index];
    if (isRequest(message) && grantFor(message.method)) target.forwardable.add(message.method, message.params);
    this.deliver(from, message, target, wrap(message, target.dialect), true);
  }

  private deliver(from: Hop, original: Call, to: Hop, outgoing: Call, enveloped: boolean, retry?: () => void): void {
    if (to.restarting && to.policy === "restart") {
      to.held.push(() => this.deliver(from, original, to, outgoing, enveloped, retry));
      return;
    }
    if (!isRequest(original)) {
      this.trace?.({
        type: "notification",
        protocol: "acp",
        from: participant(from),
        to: participant(to),
        method: original.method,
        session: sessionOf(original.params),
        params: original.params ?? null,
      });
      if (to.alive) to.peer.send(stripId(outgoing));
      else this.log.debug(`dropped ${original.method} notification for ${to.label}: ${to.failure}`);
      return;
    }
    if (!to.alive) {
      return this.refuse(original, ErrorCodes.internalError, `${to.label} is not running: it ${to.failure}`, from);
    }
    const id = to.issueId();
    this.trace?.({
      type: "request",
      protocol: "acp",
      from: participant(from),
      to: participant(to),
      id,
      method: original.method,
      session: sessionOf(original.params),
      params: original.params ?? null,
    });
    const sessionId = original.method === Methods.requestPermission ? (sessionOf(original.params) ?? undefined) : undefined;
    to.outgoing.set(idKey(id), { kind: "forward", from, fromId: original.id, method: original.method, sessionId, retry });
    from.incoming.set(idKey(original.id), { id: original.id, to, toId: id, enveloped });
    to.peer.send({ ...outgoing, id } as JsonRpcRequest);
  }

  private response(hop: Hop, message: JsonRpcResponse): void {
    const key = message.id === null ? null : idKey(message.id);
    const pending = key === null ? undefined : hop.outgoing.get(key);
    if (key !== null && hop.settled.delete(key)) return; // already answered on its behalf
    if (!pending || key === null) {
      this.log.warn(`${hop.label} answered a request it was never sent (id ${JSON.stringify(message.id)}); dropped`);
      return;
    }
    hop.outgoing.delete(key);
    if (pending.kind === "own") return pending.answer(message);
    if (pending.retry && message.error?.code === ErrorCodes.methodNotFound) return pending.retry();
    this.trace?.({
      type: "response",
      from: participant(hop),
      to: participant(pending.from),
      id: message.id!,
      is_error: message.error !== undefined,
      payload: message.error ?? message.result ?? null,
    });
    pending.from.incoming.delete(idKey(pending.fromId));
    if (pending.method === Methods.initialize) {
      if (pending.from === this.client) this.promptCapabilities = promptCapabilitiesOf(message.result);
      else if (pending.from.position.role === "proxy") pending.from.successorInit = { jsonrpc: "2.0", id: null, ...pick(message) };
    }
    if (pending.from.alive) pending.from.peer.send({ ...message, id: pending.fromId });
  }

  /**
   * A request-scoped `elicitation/create` names, in `params.requestId`, a request its sender is
   * handling — by the id the sender knows it by, which is this hop's id. Going back, it must name
   * the same request by the previous hop's id, like `$/cancel_request` going forward.
   */
  private scopeToHop(hop: Hop, message: Call): Call {
    const params = paramsObject(message.params);
    const requestId = params?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return message;
    const pending = hop.outgoing.get(idKey(requestId));
    if (!pending || pending.kind !== "forward") return message;
    return { ...message, params: { ...params, requestId: pending.fromId } };
  }

  /** `$/cancel_request` is hop-scoped: re-issue it toward wherever the request went, with that hop's id. */
  private cancel(from: Hop, params: unknown): void {
    const requestId = paramsObject(params)?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return;
    const record: Incoming | undefined = from.incoming.get(idKey(requestId));
    if (!record || !record.to.alive) return; // unknown or finished: ignored, as the spec says
    const cancel: JsonRpcNotification = {
      jsonrpc: "2.0",
      method: Methods.cancelRequest,
      params: { ...paramsObject(params), requestId: record.toId },
    };
    record.to.peer.send(record.enveloped ? wrap(cancel, record.to.dialect) : cancel);
  }

  /** Answers a request with an error on behalf of the chain (notifications are only logged). */
  private refuse(message: Call, code: number, text: string, to: Hop = this.client): void {
    if (isRequest(message)) to.peer.send(errorResponse(message.id, code, text));
    else this.log.warn(`${to.label}: ${text} (notification ${message.method} dropped)`);
  }

  private proxyLog(hop: Hop, params: unknown): void {
    const p = paramsObject(params);
    const level = isLevel(p?.level) ? p.level : "info";
    const text = typeof p?.message === "string" ? p.message : JSON.stringify(p ?? null);
    this.log[level](`${hop.label}: ${text}`);
    this.trace?.({ type: "trace", component: participant(hop), level, message: text });
  }

  // ---- failure ---------------------------------------------------------------------------

  /**
   * A peer is gone. Every request that was inside it is answered with an error naming it; requests
   * it had sent are cancelled downstream. The client leaving ends the conductor quietly; the agent
   * leaving ends it with a non-zero status after the errors are written.
   */
  private closed(hop: Hop, reason: string, detail?: unknown): void {
    if (!hop.alive) return;
    hop.failure = reason;
    if (hop === this.client) {
      this.log.debug(`${this.proxyMode ? "parent conductor" : "client"} closed the connection`);
      this.exit(0);
      return;
    }
    if (hop === this.agent && !this.exiting) this.log.error(`${hop.label} ${reason}`);
    for (const [key, pending] of hop.outgoing) {
      hop.outgoing.delete(key);
      const error = errorResponse(null, ErrorCodes.internalError, `${hop.label} ${reason}`, detail);
      if (pending.kind === "own") pending.answer(error);
      else {
        this.trace?.({ type: "response", from: participant(hop), to: participant(pending.from), id: idFromKey(key), is_error: true, payload: error.error });
        pending.from.incoming.delete(idKey(pending.fromId));
        if (pending.from.alive) pending.from.peer.send({ ...error, id: pending.fromId });
      }
    }
    for (const [key, record] of hop.incoming) {
      hop.incoming.delete(key);
      this.cancelAbandoned(record);
    }
    if (hop === this.agent) this.afterAgentDeath(`${hop.label} ${reason}`, detail);
    else if (hop.position.role === "proxy" && !this.exiting) this.recover(hop, reason);
  }

  /** Applies the proxy's failure policy: bypass it, or restart it with backoff until the cap. */
  private recover(hop: Hop, reason: string): void {
    if (hop.policy === "bypass") {
      hop.bypassed = true;
      return this.notice("warn", hop, `${hop.label} ${reason}; it is bypassed from now on (policy bypass): messages skip it`);
    }
    if (hop.restarts >= MAX_RESTARTS) {
      hop.failure = `${reason}, and it has failed ${hop.restarts + 1} times, so Cordon stopped restarting it; restart the session to try again`;
      for (const held of hop.held.splice(0)) held();
      return this.notice("error", hop, `${hop.label} ${hop.failure}`);
    }
    const delay = FIRST_BACKOFF_MS * 2 ** hop.restarts;
    hop.restarts++;
    hop.restarting = true;
    hop.failure = `${reason}; it is restarting (attempt ${hop.restarts} of ${MAX_RESTARTS})`;
    this.notice("warn", hop, `${hop.label} ${reason}; restarting it in ${delay} ms (attempt ${hop.restarts} of ${MAX_RESTARTS}); state it kept per session is lost`);
    setTimeout(() => void this.restart(hop), delay);
  }

  /** Starts a failed proxy again and replays its initialization; its successor is not re-initialized. */
  private async restart(hop: Hop): Promise<void> {
    if (this.exiting) return;
    try {
      await this.open(hop);
    } catch (error) {
      hop.restarting = false;
      return this.recover(hop, `could not be restarted: ${(error as Error).message}`);
    }
    hop.failure = null;
    hop.restarting = false;
    hop.forwardable.clear();
    if (this.initialized) {
      const id = hop.issueId();
      const method = hop.dialect === "rust" ? Methods.legacyProxyInitialize : Methods.proxyInitialize;
      hop.outgoing.set(idKey(id), {
        kind: "own",
        method: Methods.initialize,
        answer: (response) => {
          if (response.error) this.log.error(`${hop.label} restarted but refused initialization: ${response.error.message}`);
          else this.log.info(`${hop.label} restarted`);
        },
      });
      hop.peer.send({ jsonrpc: "2.0", id, method, params: this.initParams } as JsonRpcRequest);
    }
    for (const held of hop.held.splice(0)) held();
  }

  /** Tells the operator (stderr) and the client (`_cordon/notice`, which clients may ignore). */
  private notice(level: "warn" | "error", hop: Hop, message: string): void {
    this.log[level](message);
    if (this.client.alive) {
      this.client.peer.send({ jsonrpc: "2.0", method: Methods.cordonNotice, params: { level, component: hop.label, message } });
    }
  }

  /**
   * The agent's errors travel back through the proxies like any answer; give them a moment, then
   * answer whatever the client still waits for directly, and end.
   */
  private afterAgentDeath(reason: string, detail: unknown): void {
    const deadline = Date.now() + AGENT_DEATH_GRACE_MS;
    const finish = () => {
      if (this.client.incoming.size > 0 && Date.now() < deadline) {
        setTimeout(finish, 5);
        return;
      }
      for (const [key, record] of this.client.incoming) {
        this.client.incoming.delete(key);
        this.client.peer.send(errorResponse(record.id, ErrorCodes.internalError, reason, detail));
      }
      this.exit(1);
    };
    finish();
  }

  /** A request whose asker died: tell the hop now holding it that nobody is waiting. */
  private cancelAbandoned(record: Incoming): void {
    if (!record.to.alive) return;
    const cancel: JsonRpcNotification = { jsonrpc: "2.0", method: Methods.cancelRequest, params: { requestId: record.toId } };
    record.to.peer.send(record.enveloped ? wrap(cancel, record.to.dialect) : cancel);
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

/** The result-or-error part of a response. */
function pick(message: JsonRpcResponse): { result: unknown } | { error: JsonRpcResponse["error"] } {
  return message.error !== undefined ? { error: message.error } : { result: message.result };
}

/** Participant names as the reference conductor's trace viewer expects them. */
function participant(hop: Hop): string {
  const p = hop.position;
  if (hop.peer.traceName) return hop.peer.traceName;
  return p.role === "proxy" ? `proxy:${p.index}` : p.role;
}

