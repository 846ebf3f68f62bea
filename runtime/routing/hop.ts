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
import type { Call } from "./envelope.js";
import { Forwardable, type Grant } from "./grants.js";
import type { Peer } from "./peer.js";

export type Position = { role: "client" } | { role: "proxy"; index: number } | { role: "agent" };

export type Outgoing =
  /**
   * Forwarded on behalf of `from`, whose own id for it was `fromId`. `retry`, when set, is tried
   * instead of relaying a method-not-found answer (a proxy that only knows `_proxy/initialize`).
   */
  | {
      kind: "forward";
      from: Hop;
      fromId: JsonRpcId;
      /** The instance of `from` that asked: an answer outliving it must not reach its successor instance. */
      fromGeneration: number;
      method: string;
      retry?: () => void;
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

/** Where this proxy is with initializing its successor (see gates/successor-init.ts). */
export type SuccessorInitState =
  | { kind: "none" }
  | { kind: "pending" }
  /** `generation`: the instance that last got this answer (the first, or a restarted one by replay). */
  | { kind: "answered"; answer: JsonRpcResponse; generation: number };

/** Drop warnings logged per peer in any 10 s; beyond, one line says further ones are suppressed (events.ts). */
export const MAX_DROP_WARNINGS = 100;

export class Hop {
  readonly outgoing = new Map<string, Outgoing>();
  readonly incoming = new Map<string, Incoming>();
  /** Requests the conductor answered on the peer's behalf (e.g. cancelled): their late answers are dropped quietly. */
  readonly settled = new Set<string>();
  private nextId = 1;
  /** Why the peer is gone (set once); a dead hop receives nothing more. */
  failure: string | null = null;
  /** What this peer is sent; switched to "rust" when it shows it only speaks `_proxy/*`. */
  dialect: Dialect = "rfd";
  policy: FailurePolicy = "fail-closed";
  /** Routing skips this proxy (policy `bypass`, after a failure). */
  bypassed = false;
  /** The conductor stopped reading this peer (backpressure elsewhere). */
  paused = false;
  /** A restart is scheduled or under way. */
  restarting = false;
  restarts = 0;
  /** Deliveries waiting for a restart to finish (policy `restart`). */
  readonly held: (() => void)[] = [];
  /** What this proxy may originate toward the client (fs, terminal). */
  grants = new Set<Grant>();
  /** Gated requests it was handed by its successor, which it may forward without a grant. */
  readonly forwardable = new Forwardable();
  /** It has sent `initialize` on to its successor: it understood `proxy/initialize` (so keeps its dialect). */
  passedInitializeOn = false;
  /** Its `initialize` toward its successor: once per instance, replayed after a restart. */
  successorInit: SuccessorInitState = { kind: "none" };
  /**
   * Which instance of the peer this is: bumped by `revive()`. Requests an instance sent are
   * recorded with its generation, so an answer that outlives it is dropped instead of reaching
   * the new instance's request that happens to reuse the same id.
   */
  generation = 0;

  /**
   * @param idPrefix when two hops share one connection (a nested conductor's parent is both its
   * client and its successor), one of them issues string ids with this prefix so they never collide.
   */
  constructor(
    readonly peer: Peer,
    readonly position: Position,
    private readonly idPrefix?: string,
  ) {}

  /**
   * Answers the request this hop was sent as `key` on its behalf: it leaves `outgoing`, and its
   * late answer, should one come, is dropped quietly. False when it was not pending.
   */
  settle(key: string): boolean {
    if (!this.outgoing.delete(key)) return false;
    this.settled.add(key);
    return true;
  }

  /** Whether `id` is one this hop issued. */
  owns(id: JsonRpcId): boolean {
    return this.outgoing.has(idKey(id));
  }

  get label(): string {
    return this.peer.label;
  }

  get alive(): boolean {
    return this.failure === null;
  }

  /** The peer is gone (first reason wins); returns false when it was gone already. */
  fail(reason: string): boolean {
    if (this.failure !== null) return false;
    this.failure = reason;
    return true;
  }

  /**
   * Routing goes past this proxy for `message`: bypassed after a failure, or a live instance whose
   * peer says the message would only pass through it (`Peer.passes`: an interest filter, an idle
   * bridge). A restarting or dead proxy is never passed: the message meets its policy instead.
   */
  skips(message: Call, fromSuccessor: boolean): boolean {
    if (this.bypassed) return true;
    return this.failure === null && !this.restarting && this.peer.passes?.(message, fromSuccessor) === true;
  }

  /** Policy `bypass`: routing skips it from now on. */
  bypass(): void {
    this.bypassed = true;
  }

  /** A restart is scheduled; `failure` says so to whoever tries to reach it meanwhile. */
  scheduleRestart(failure: string): void {
    this.restarts++;
    this.restarting = true;
    this.failure = failure;
  }

  /** No more restarts: it stays down, and deliveries held for it are released (to fail). */
  giveUp(failure: string): void {
    this.restarting = false;
    this.failure = failure;
    for (const held of this.held.splice(0)) held();
  }

  /** A new instance of the peer is up: it starts with nothing forwardable and a new generation. */
  revive(): void {
    this.failure = null;
    this.restarting = false;
    this.generation++;
    this.forwardable.clear();
  }

  issueId(): JsonRpcId {
    return this.idPrefix ? `${this.idPrefix}${this.nextId++}` : this.nextId++;
  }
}
