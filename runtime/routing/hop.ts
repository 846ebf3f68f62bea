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
import type { JsonRpcId, JsonRpcResponse } from "../protocol/json-rpc.js";
import type { Peer } from "./peer.js";

export type Position = { role: "client" } | { role: "proxy"; index: number } | { role: "agent" };

export type Outgoing =
  /** Forwarded on behalf of `from`, whose own id for it was `fromId`. */
  | { kind: "forward"; from: Hop; fromId: JsonRpcId; method: string }
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

export class Hop {
  readonly outgoing = new Map<string, Outgoing>();
  readonly incoming = new Map<string, Incoming>();
  private nextId = 1;
  /** Why the peer is gone (set once); a dead hop receives nothing more. */
  failure: string | null = null;

  constructor(
    readonly peer: Peer,
    readonly position: Position,
  ) {}

  get label(): string {
    return this.peer.label;
  }

  get alive(): boolean {
    return this.failure === null;
  }

  issueId(): number {
    return this.nextId++;
  }
}
