/**
 * Where the chain ends, as the router sees it: the host strategy of a conductor.
 *
 * - `agentHost`: Cordon stands in for an agent. The client connects to it; the agent is a peer
 *   Cordon starts and stops.
 * - `parentHost` (proxy mode): Cordon is itself a proxy in a parent conductor's chain, so
 *   conductors nest. The parent is both its client and its successor — one connection, two hops:
 *   what its last proxy sends on goes back to the parent wrapped in `proxy/successor`
 *   (parent-successor.ts), what the successor sends arrives from the parent in such an envelope, and
 *   answers on that one connection belong to either hop, told apart by their disjoint ids.
 *
 * The router asks the strategy only these questions; everything else routes alike in both modes.
 */
import type { JsonRpcId } from "../protocol/json-rpc.js";
import { isProxySuccessor, Methods } from "../protocol/methods.js";
import { type Call, unwrap } from "./envelope.js";
import { Hop } from "./hop.js";
import { ParentSuccessorPeer } from "./parent-successor.js";
import type { Peer } from "./peer.js";

export interface Host {
  readonly mode: "agent" | "proxy";
  /** The hop after the last proxy: the agent, or the parent's successor. */
  readonly agent: Hop;
  /** Whether the conductor opens and closes the agent's peer (not the parent's: its owner does). */
  readonly startsAgent: boolean;
  /** How the client's side is named in the log. */
  readonly clientName: string;
  /** Which hop an answer arriving on the client's connection answers. */
  answerer(id: JsonRpcId | null): Hop;
  /**
   * A call on the client's connection that the successor sent (proxy mode: a `proxy/successor`
   * from the parent), unwrapped; an error text when it cannot be taken; null when it is the client's own.
   */
  successorCall(call: Call, initialized: boolean): Call | string | null;
}

export function agentHost(client: Hop, agent: Peer | undefined): Host {
  if (!agent) throw new Error("an agent is required outside proxy mode");
  return {
    mode: "agent",
    agent: new Hop(agent, { role: "agent" }),
    startsAgent: true,
    clientName: "client",
    answerer: () => client,
    successorCall: () => null,
  };
}

export function parentHost(client: Hop): Host {
  // The successor's hop issues prefixed string ids, so they never collide with the client hop's.
  const agent = new Hop(new ParentSuccessorPeer(client.peer, () => client.dialect), { role: "agent" }, "s");
  return {
    mode: "proxy",
    agent,
    startsAgent: false,
    clientName: "parent conductor",
    answerer: (id) => (id !== null && agent.owns(id) ? agent : client),
    successorCall(call, initialized) {
      if (!isProxySuccessor(call.method)) return null;
      if (call.method === Methods.legacyProxySuccessor) client.speaksRust();
      const inner = unwrap(call);
      if (typeof inner === "string" || initialized) return inner;
      return `expected "proxy/initialize" before "${inner.method}"`;
    },
  };
}
