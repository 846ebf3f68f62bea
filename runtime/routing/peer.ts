/**
 * A peer is one end the conductor talks to: the client, a proxy, the agent. The router sees only
 * this interface; how bytes move (stdio, a child process, a sandboxed guest) lives in
 * `components/`.
 */
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest } from "../protocol/json-rpc.js";
import type { Grant } from "./grants.js";

export interface FailureDetail {
  kind?: string;
  [more: string]: unknown;
}

export interface PeerSink {
  /**
   * One message, as parsed JSON (not yet classified). `admitted`: the peer hands on a message the
   * router gave it, unchanged but for its id or envelope (`components/unchanged-forward.ts`): it was
   * admitted when it entered Cordon, so admission's scan is not run again.
   */
  message(value: unknown, admitted?: boolean): void;
  /** Input that was not a JSON message; the router decides whether to answer it. */
  malformed(detail: string): void;
  /**
   * The peer is gone for good; `reason` completes "<label> …" (e.g. "exited with code 1").
   * `detail.kind` says how it failed (a sandbox's `trap`, `timeout`, `fault`, `crash`, `budget`;
   * absent: it exited or closed); the rest (e.g. a process's `stderr` tail) travels to the client
   * in the error's `data` (see failure.ts).
   */
  closed(reason: string, detail?: FailureDetail): void;
  /** The peer cannot keep up (true) or caught up again (false): the conductor pauses its inputs meanwhile. */
  congested?(congested: boolean): void;
}

export interface Peer {
  /** Names the peer in logs and errors: `agent "node agent.js"`, `proxy "redact"`. */
  readonly label: string;
  /** Its swimlane in `--trace` when not the positional `proxy:N` (Cordon's own components). */
  readonly traceName?: string;
  /**
   * Authority a component Cordon itself runs needs whatever the chain config says (the MCP bridge
   * declares its own endpoint to the agent for each acp server it bridges). Never set for a proxy.
   */
  readonly ownGrants?: readonly Grant[];
  /** Starts the peer; messages flow to `sink` from then on. Rejects if it cannot start. */
  open(sink: PeerSink): Promise<void>;
  /**
   * `chosen`: a rule routed the message to this very peer (a session the proxy opened itself,
   * rules/agent-authority.ts), so it must reach the component even when its interest filter would
   * only pass it on.
   */
  send(message: JsonRpcMessage, chosen?: boolean): void;
  /**
   * Whether the conductor may route this request or notification past the peer instead of
   * delivering it: the peer would hand it on unchanged (its answer too), and it owes no earlier
   * output the message could overtake. Asked at the moment of routing; `fromSuccessor`: the
   * message travels toward the client. Absent: everything is delivered.
   */
  passes?(message: JsonRpcRequest | JsonRpcNotification, fromSuccessor: boolean): boolean;
  /**
   * With `passes`: runs `then` once the peer owes no output for what it was given so far — at once
   * when it owes none. The answer to a request routed past the peer waits for this, so it never
   * overtakes what the peer still sends (a turn's updates before its answer). `then` always runs,
   * also when the peer fails meanwhile.
   */
  whenIdle?(then: () => void): void;
  /** Ends the peer politely (EOF, then signals); resolves when it is gone. */
  close(): Promise<void>;
  /** Stops / restarts reading the peer's input (backpressure). Peers without a stream ignore it. */
  pauseInput?(): void;
  resumeInput?(): void;
}
