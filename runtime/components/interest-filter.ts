/**
 * Interest filters: a proxy whose manifest declares what it watches (`watches` in
 * `sandbox/manifest.ts`) is not made to look at anything else. A message it does not watch passes
 * it without entering its sandbox — and leaves exactly as the SDK's default hooks would have
 * forwarded it, so the chain cannot tell a filtered proxy from one that forwards what it does not
 * understand:
 *
 * - from the client side (plain): on to the successor in a `proxy/successor` envelope;
 *   from the agent side (`proxy/successor`): on to the predecessor unwrapped;
 * - a request gets an id of the filter's own (like the SDK's, never one the conductor sent), and
 *   its answer goes back under the id the conductor used;
 * - `$/cancel_request` for a request that passed is translated to the filter's id and passed on
 *   to where the request went (the SDK does the same, and still relays the answer when it comes);
 * - a request-scoped `elicitation/create` from the agent side names its request by the id this
 *   proxy gave it: one that passed is renamed to the conductor's id (as the SDK does for its own);
 *   one naming a request the guest forwarded goes to the guest, which knows its ids;
 * - the host's messages (`_cordon/*`), `initialize` in every spelling, answers to the guest's own
 *   requests and cancellations of requests the guest holds always go to the guest.
 *
 * - a request the guest forwards with `"pass":true` (`_cordon/forward`'s pass forms; offered in
 *   `_cordon/configure` as `answers`, from the manifest's `watches.answers`) is handed on under an
 *   id of the filter's own, like one that passed: its answer and its cancellations then take the
 *   filter's path, behind the guest's queued work, and the guest, which keeps nothing for it, never
 *   sees them. So a proxy that edits a prompt and has no use for its answer spends no crossing on it.
 *
 * Usually the filter is not even asked: while the guest owes no output, the conductor routes a
 * message it does not watch straight past the proxy (`ignores`, `Peer.passes`) — no hop, no ids,
 * and the answer waits for the proxy to be idle before it crosses back (`Peer.whenIdle`). Only
 * while the guest still owes output does a message come here: the peer then queues what passes in
 * the sandbox's ordered queue (`ProxySandbox.passThrough`), so it never overtakes that output,
 * and it is held like a delivery while the sandbox is paused.
 *
 * The filter's ids are strings with a prefix (`FILTER_ID_PREFIX`); an SDK guest numbers its own.
 * A guest that mints colliding ids only confuses its own traffic: the conductor keeps every hop's
 * ids apart.
 */
import { idKey, type JsonRpcId, type JsonRpcMessage, type JsonRpcNotification, paramsObject } from "../protocol/json-rpc.js";
import { isProxyInitialize, isProxySuccessor, Methods } from "../protocol/methods.js";
import { withMember } from "../protocol/raw-json.js";
import { ChurnMap } from "../routing/churn-map.js";
import { type Call, isRequest, unwrap, withId, wrap } from "../routing/envelope.js";
import { isReserved } from "../routing/gates/reserved-methods.js";
import type { Manifest } from "../sandbox/manifest.js";

/** Environment switch: `off` makes every proxy see every message, whatever its manifest says. */
export const INTEREST_FILTERS_ENV = "CORDON_INTEREST_FILTERS";
export const FILTER_ID_PREFIX = "cordon-pass:";

const SESSION_UPDATE = "session/update";

export interface Interest {
  methods: ReadonlySet<string>;
  /** `session/update` kinds watched; null: all of them. */
  updates: ReadonlySet<string> | null;
  /** Methods whose answers the guest sees when it forwards such a request; null: all of them (nothing passes it). */
  answers: ReadonlySet<string> | null;
}

/** The interest a manifest declares; null when it watches everything (no `watches`, or filters turned off). */
export function interestOf(manifest: Manifest | null, env: NodeJS.ProcessEnv = process.env): Interest | null {
  const watches = manifest?.watches;
  if (!watches || env[INTEREST_FILTERS_ENV] === "off") return null;
  const methods = new Set(watches.methods ?? []);
  return {
    methods,
    updates: methods.has(SESSION_UPDATE) ? null : new Set(watches.updates ?? []),
    answers: watches.answers ? new Set(watches.answers) : null,
  };
}

/**
 * Whether `delivered` is a `$/cancel_request`, or carries one in a successor's envelope: a method
 * compared, an envelope's inner method read (no unwrap), as cheap as this must be for the
 * notification every watching proxy hands on by the marker.
 */
export function isCancellation(delivered: object): boolean {
  const method = (delivered as { method?: unknown }).method;
  if (method === Methods.cancelRequest) return true;
  return (
    typeof method === "string" && isProxySuccessor(method) && paramsObject((delivered as Call).params)?.method === Methods.cancelRequest
  );
}

/** A request that passed: the conductor's id for it, and which way it went. */
interface Passed {
  id: JsonRpcId;
  toSuccessor: boolean;
}

export class InterestFilter {
  private nextId = 1;
  // Requests in flight, emptied by nearly every answer: `ChurnMap`s (as a hop's, routing/hop.ts).
  /** Requests that passed, by the filter's id. */
  private readonly passed = new ChurnMap<string, Passed>();
  /** The filter's id of each request that passed, by the conductor's id and side (for `$/cancel_request`). */
  private readonly fromClient = new ChurnMap<string, JsonRpcId>();
  private readonly fromAgent = new ChurnMap<string, JsonRpcId>();

  constructor(private readonly interest: Interest) {}

  /** Requests passed and not yet answered. */
  get inFlight(): number {
    return this.passed.size;
  }

  /** Whether the guest may hand a request on with its answer passing it (`answers` for `_cordon/configure`). */
  get answersPass(): boolean {
    return this.interest.answers !== null;
  }

  /**
   * `handed`, the guest's forward of the request it was `delivered` (routed as its marker says,
   * under the guest's id), under an id of the filter's instead: the answer and any cancellation
   * then pass the guest as for a request that passed. `handed` itself when it is not a request.
   */
  handOnPassing(delivered: object, handed: object): object {
    const id = (delivered as { id?: JsonRpcId }).id;
    if (!("id" in handed) || id === undefined) return handed;
    const toSuccessor = !isProxySuccessor((delivered as { method?: string }).method ?? "");
    return withId(handed, this.issue(id, toSuccessor, toSuccessor ? this.fromClient : this.fromAgent));
  }

  /**
   * What `message` (from the conductor to the proxy) leaves the proxy as when it is not watched;
   * null when the guest must see it.
   */
  pass(message: JsonRpcMessage): JsonRpcMessage | null {
    const method = (message as { method?: unknown }).method;
    if (typeof method !== "string") return this.answer(message);
    const call = message as Call;
    if (isProxySuccessor(method)) return this.fromSuccessor(call);
    if (method === Methods.cancelRequest) return this.cancel(call, this.fromClient, true);
    if (this.watches(call) || (isRequest(call) && this.fromClient.has(idKey(call.id)))) return null;
    if (!isRequest(call)) return wrap(call, "rfd");
    const id = this.issue(call.id, true, this.fromClient);
    return wrap(withMember(call, "id", id), "rfd");
  }

  /** Agent side: the conductor's `proxy/successor` envelope around what the successor sent. */
  private fromSuccessor(envelope: Call): JsonRpcMessage | null {
    let inner = unwrap(envelope);
    if (typeof inner === "string") return null; // malformed: the guest answers it as it would
    if (inner.method === Methods.cancelRequest) return this.cancel(inner, this.fromAgent, false);
    if (this.watches(inner) || (isRequest(inner) && this.fromAgent.has(idKey(inner.id)))) return null;
    if (inner.method === Methods.elicitationCreate) {
      const scoped = this.scope(inner);
      if (scoped === null) return null;
      inner = scoped;
    }
    if (!isRequest(inner)) return inner;
    const id = this.issue(inner.id, false, this.fromAgent);
    return withMember(inner, "id", id);
  }

  /** `elicitation/create` scoped to a request that passed, renamed to the conductor's id; null when it names a request of the guest's. */
  private scope(message: Call): Call | null {
    const params = paramsObject(message.params);
    const requestId = params?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return message;
    const passed = typeof requestId === "string" ? this.passed.get(requestId) : undefined;
    if (!passed?.toSuccessor) return null;
    return { ...message, params: { ...params, requestId: passed.id } };
  }

  /** A response: the answer to a request that passed goes back under the conductor's id. */
  private answer(message: JsonRpcMessage): JsonRpcMessage | null {
    const id = (message as { id?: unknown }).id;
    if (typeof id !== "string" || !id.startsWith(FILTER_ID_PREFIX)) return null;
    const passed = this.passed.get(id);
    if (!passed) return null;
    this.passed.delete(id);
    (passed.toSuccessor ? this.fromClient : this.fromAgent).delete(idKey(passed.id));
    return withMember(message, "id", passed.id);
  }

  /** `$/cancel_request` for a request that passed: on to where it went, naming it by the filter's id. */
  private cancel(message: Call, ids: ChurnMap<string, JsonRpcId>, toSuccessor: boolean): JsonRpcMessage | null {
    const params = paramsObject(message.params);
    const requestId = params?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return null;
    const ours = ids.get(idKey(requestId));
    if (ours === undefined) return null; // the guest's (or unknown): the guest decides
    if (isRequest(message)) return null; // a cancel sent as a request is odd: the guest answers it
    const cancel: JsonRpcNotification = { jsonrpc: "2.0", method: Methods.cancelRequest, params: { ...params, requestId: ours } };
    return toSuccessor ? wrap(cancel, "rfd") : cancel;
  }

  /**
   * Whether the conductor may route `call` (unwrapped, either direction) past the proxy without
   * asking the filter: the guest does not watch it and it is not a cancellation, which the filter
   * or the guest must translate. What the conductor routes past never enters the filter's maps.
   */
  ignores(call: Call): boolean {
    if (call.method === Methods.cancelRequest || this.watches(call)) return false;
    // A request-scoped elicitation retraces its request's path, past the proxies the request was
    // routed past: a proxy that watches elicitations must see every request, or it would miss those.
    return !(isRequest(call) && this.interest.methods.has(Methods.elicitationCreate));
  }

  private watches(call: Call): boolean {
    const method = call.method;
    if (isReserved(method) || method === Methods.initialize || isProxyInitialize(method)) return true;
    if (method === SESSION_UPDATE) {
      const updates = this.interest.updates;
      if (updates === null) return true;
      // Watching no kind, it needs none read: most updates' params are never parsed (parse-line.ts).
      if (updates.size === 0) return false;
      const kind = (paramsObject(paramsObject(call.params)?.update) as { sessionUpdate?: unknown } | undefined)?.sessionUpdate;
      // An update without a readable kind goes to a guest that watches any kind.
      return typeof kind === "string" ? updates.has(kind) : updates.size > 0;
    }
    return this.interest.methods.has(method);
  }

  private issue(conductorId: JsonRpcId, toSuccessor: boolean, ids: ChurnMap<string, JsonRpcId>): string {
    const id = `${FILTER_ID_PREFIX}${this.nextId++}`;
    this.passed.set(id, { id: conductorId, toSuccessor });
    ids.set(idKey(conductorId), id);
    return id;
  }
}
