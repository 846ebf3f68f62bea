/**
 * One connection of the conductor, with the request bookkeeping that is scoped to it.
 *
 * Ids are per hop: every request the conductor forwards is re-issued with an id from this
 * hop's own counter, so no id is ever tunnelled and there is no global id table. Two maps:
 * - `outgoing`: requests the conductor sent on this hop, by the id it chose → who gets the answer;
 * - `incoming`: requests the peer sent, by the peer's id → where the conductor forwarded them
 *   (what `$/cancel_request` from this peer must be translated into).
 * Both shrink as answers arrive; when a hop dies, `outgoing` is exactly the set of requests that
 * must be answered with an error.
 */
import { idKey, type JsonRpcId, type JsonRpcResponse } from "../protocol/json-rpc.js";
import { ChurnMap } from "./churn-map.js";
import type { Call } from "./envelope.js";
import type { Grant } from "./grants.js";
import type { Peer } from "./peer.js";

export type Position = { role: "client" } | { role: "proxy"; index: number } | { role: "agent" };

export type Outgoing =
  /** Forwarded on behalf of `from`, whose own id for it was `fromId`. */
  | {
      kind: "forward";
      from: Hop;
      fromId: JsonRpcId;
      /** The instance of `from` that asked: an answer outliving it must not reach its successor instance. */
      fromGeneration: number;
      method: string;
    }
  /** Sent by the conductor itself. */
  | { kind: "own"; method: string; answer: (response: JsonRpcResponse) => void };

export interface Incoming {
  /** The peer's own id for the request. */
  id: JsonRpcId;
  to: Hop;
  toId: JsonRpcId;
  /** The forwarded copy travelled inside a `proxy/successor` envelope, so its cancel must too. */
  enveloped: boolean;
}

/** Spellings of the proxy-chain methods a peer understands: the RFD's, or the Rust SDK's `_proxy/*`. */
export type Dialect = "rfd" | "rust";

/**
 * What happens when a proxy fails (traps, runs away, floods, misbehaves, exits):
 * - `fail-closed` (default): requests inside it are answered with an error naming it; it is
 *   restarted with exponential backoff, and while it is down requests through it get errors;
 *   after too many failures the chain refuses work through it for good.
 * - `restart`: like fail-closed, but messages that arrive while it restarts wait for it.
 * - `bypass`: from then on messages skip it. Only for optional proxies: a bypassed redactor leaks.
 */
export type FailurePolicy = "fail-closed" | "restart" | "bypass";

/** Drop warnings logged per peer in any 10 s; beyond, one line says further ones are suppressed (events.ts). */
export const MAX_DROP_WARNINGS = 100;

/** What a proxy's chain-config entry says about it; travels with the proxy into its hop. */
export interface ProxySettings {
  /** Default `fail-closed`. */
  policy?: FailurePolicy;
  /** What it may originate (default nothing; see grants.ts). */
  grants?: readonly Grant[];
  /** The proxy-chain spelling it speaks (default `rfd`, switching to `rust` when it shows it only knows `_proxy/*`). */
  dialect?: Dialect;
}

/**
 * A hop owns its state: the router and the rules read it, and change it only through its methods.
 * What never changes is a public readonly field (the maps are read-only views of its own); what
 * changes is private, read through a getter. State a policy keeps about a hop lives in that
 * policy's rule, keyed by the hop (rules/).
 */
export class Hop {
  // Emptied by nearly every answer: `ChurnMap` (a plain Map rebuilds its table each time).
  private readonly sentTo = new ChurnMap<string, Outgoing>();
  private readonly askedBy = new ChurnMap<string, Incoming>();
  /** Requests the conductor sent on this hop, by the id it chose → who gets the answer. */
  readonly outgoing: ReadonlyMap<string, Outgoing> = this.sentTo;
  /** Requests the peer sent, by the peer's id → where the conductor forwarded them. */
  readonly incoming: ReadonlyMap<string, Incoming> = this.askedBy;
  /** Names the peer in logs and errors (its `label`). */
  readonly label: string;
  /** Default `fail-closed`. */
  readonly policy: FailurePolicy;
  /** What this proxy may originate (see grants.ts). */
  readonly grants: ReadonlySet<Grant>;
  /** Requests the conductor answered on the peer's behalf (e.g. cancelled): their late answers are dropped quietly. */
  private readonly settledKeys = new Set<string>();
  /** Deliveries waiting for a restart to finish (policy `restart`). */
  private readonly held: (() => void)[] = [];
  private nextId = 1;
  private failure_: string | null = null;
  private dialect_: Dialect;
  private bypassed_ = false;
  private restarting_ = false;
  private generation_ = 0;

  /**
   * @param idPrefix when two hops share one connection (a nested conductor's parent is both its
   * client and its successor), one of them issues string ids with this prefix so they never collide.
   */
  constructor(
    readonly peer: Peer,
    readonly position: Position,
    private readonly idPrefix?: string,
    settings: ProxySettings = {},
  ) {
    this.label = peer.label;
    this.policy = settings.policy ?? "fail-closed";
    this.grants = new Set([...(settings.grants ?? []), ...(peer.ownGrants ?? [])]);
    this.dialect_ = settings.dialect ?? "rfd";
  }

  /** Why the peer is gone (set once); a dead hop receives nothing more. */
  get failure(): string | null {
    return this.failure_;
  }
  /** What this peer is sent; switched to "rust" when it shows it only speaks `_proxy/*`. */
  get dialect(): Dialect {
    return this.dialect_;
  }
  /** Routing skips this proxy (policy `bypass`, after a failure). */
  get bypassed(): boolean {
    return this.bypassed_;
  }
  /** A restart is scheduled or under way. */
  get restarting(): boolean {
    return this.restarting_;
  }
  /**
   * Which instance of the peer this is: bumped by `revive()`. Requests an instance sent are
   * recorded with its generation, so an answer that outlives it is dropped instead of reaching
   * the new instance's request that happens to reuse the same id.
   */
  get generation(): number {
    return this.generation_;
  }

  /** The conductor sent this hop a request as `key`. */
  sent(key: string, entry: Outgoing): void {
    this.sentTo.set(key, entry);
  }
  /** The answer to `key` arrived (or is given up on): the entry leaves. */
  answered(key: string): Outgoing | undefined {
    const entry = this.sentTo.get(key);
    this.sentTo.delete(key);
    return entry;
  }
  /** A late answer to a request settled on its behalf: true once (it is then forgotten). */
  wasSettled(key: string): boolean {
    return this.settledKeys.delete(key);
  }
  /** The peer asked for something (its id's key), forwarded as `record`. */
  asked(key: string, record: Incoming): void {
    this.askedBy.set(key, record);
  }
  /** A request the peer asked is over (answered, or answered on its behalf). */
  forget(key: string): void {
    this.askedBy.delete(key);
  }
  /** Takes every entry of both maps (the hop died). */
  drain(): { outgoing: [string, Outgoing][]; incoming: [string, Incoming][] } {
    const drained = { outgoing: [...this.sentTo], incoming: [...this.askedBy] };
    this.sentTo.clear();
    this.askedBy.clear();
    return drained;
  }
  /** The peer showed it speaks only the Rust SDK's `_proxy/*` spelling. */
  speaksRust(): void {
    this.dialect_ = "rust";
  }
  /** A delivery waits for the restart to finish; false when too many wait already. */
  hold(delivery: () => void, max: number): boolean {
    if (this.held.length >= max) return false;
    this.held.push(delivery);
    return true;
  }
  /** Runs the deliveries that waited for the restart. */
  release(): void {
    for (const held of this.held.splice(0)) held();
  }

  /**
   * Answers the request this hop was sent as `key` on its behalf: it leaves `outgoing`, and its
   * late answer, should one come, is dropped quietly. False when it was not pending.
   */
  settle(key: string): boolean {
    if (!this.sentTo.delete(key)) return false;
    this.settledKeys.add(key);
    return true;
  }

  /** Whether `id` is one this hop issued. */
  owns(id: JsonRpcId): boolean {
    return this.sentTo.has(idKey(id));
  }

  get alive(): boolean {
    return this.failure_ === null;
  }

  /** The peer is gone (first reason wins); returns false when it was gone already. */
  fail(reason: string): boolean {
    if (this.failure_ !== null) return false;
    this.failure_ = reason;
    return true;
  }

  /**
   * Routing goes past this proxy for `message`: bypassed after a failure, or a live instance whose
   * peer says the message would only pass through it (`Peer.passes`: an interest filter, an idle
   * bridge). A restarting or dead proxy is never passed: the message meets its policy instead.
   */
  skips(message: Call, fromSuccessor: boolean): boolean {
    if (this.bypassed_) return true;
    return this.failure_ === null && !this.restarting_ && this.peer.passes?.(message, fromSuccessor) === true;
  }

  /** Policy `bypass`: routing skips it from now on. */
  bypass(): void {
    this.bypassed_ = true;
  }

  /** A restart is scheduled; `failure` says so to whoever tries to reach it meanwhile. */
  scheduleRestart(failure: string): void {
    this.restarting_ = true;
    this.failure_ = failure;
  }

  /** No more restarts: it stays down, and deliveries held for it are released (to fail). */
  giveUp(failure: string): void {
    this.restarting_ = false;
    this.failure_ = failure;
    this.release();
  }

  /** A new instance of the peer is up: it starts with a new generation. */
  revive(): void {
    this.failure_ = null;
    this.restarting_ = false;
    this.generation_++;
  }

  issueId(): JsonRpcId {
    return this.idPrefix ? `${this.idPrefix}${this.nextId++}` : this.nextId++;
  }
}
