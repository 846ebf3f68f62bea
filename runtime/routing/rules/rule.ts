/**
 * The rule contract. A rule is one routing policy in one module, owning both its call side and its
 * answer side; each direction has an ordered table of rules (`index.ts`) that a newcomer reads top
 * to bottom. For a call, the first rule that does not pass decides:
 *
 * - `pass`: on its way, maybe rewritten (`call`) or re-targeted (`to`: a position in the chain);
 * - `refuse`: the sender gets a JSON-RPC error naming the rule (a notification is dropped and logged);
 * - `handled`: the rule answered or consumed it.
 *
 * A rule may also remember what an answer will need (`forwarded`, once the request's ids are
 * issued), judge, rewrite or take over the answer (`answer`), and hear that a hop failed or restarted.
 *
 * Rules see the chain only through `RouteContext`, a narrow interface the router implements; they
 * never import the conductor. They run inside the router's one synchronous loop, so they must be
 * cheap and must not throw on any value a peer can send: methods and params are the peer's, and
 * are hostile until checked. State a rule keeps is keyed by `Hop` and released when the request it
 * is about is answered or its hop fails, so it is bounded by the requests in flight.
 */
import type { Logger } from "../../log.js";
import type { JsonRpcId, JsonRpcMessage, JsonRpcResponse } from "../../protocol/json-rpc.js";
import type { Call } from "../envelope.js";
import type { Refusal } from "../gates/gate.js";
import type { Hop } from "../hop.js";
import type { TraceEvent } from "../trace.js";

export type Verdict =
  /**
   * On its way; `call` replaces the message, `to` the target (a chain position: -1 client, 0…n-1
   * proxies, n agent). `exact`: that very proxy gets it, even one that would only pass it on.
   */
  | { kind: "pass"; call?: Call; to?: number; exact?: boolean }
  /** `plain`: the sender's own mistake, not policy: a bare error, no routing data, no warning. */
  | { kind: "refuse"; refusal: Refusal; plain?: boolean }
  | { kind: "handled" };

export const PASS: Verdict = { kind: "pass" };
/** A call or an answer the rule answered or consumed itself. */
export const HANDLED = { kind: "handled" } as const satisfies Verdict;
/** Whether a rule's answer is `HANDLED` (it took the answer over). */
export const isHandled = (judged: unknown): judged is typeof HANDLED => judged === HANDLED;

/** A request the router forwarded: who asked and by which id, where it went and by which id. */
export interface Forwarded {
  from: Hop;
  fromId: JsonRpcId;
  to: Hop;
  toId: JsonRpcId;
  /** `to`'s key for the request (the key its answer comes back under). */
  key: string;
  /** The call as it was routed (the original, before the envelope). */
  call: Call;
}

/** An answer on its way back: `answerer` answered its request `key`, asked by `asker`. */
export interface Answered {
  answerer: Hop;
  key: string;
  asker: Hop;
  /** The instance of the asker that asked (see `Hop.generation`). */
  askerGeneration: number;
  method: string;
}

export interface RouteContext {
  readonly client: Hop;
  readonly agent: Hop;
  readonly proxies: readonly Hop[];
  /** Position in the chain: the client -1, proxies 0…n-1, the agent n. */
  indexOf(hop: Hop): number;
  /** A hop's swimlane in the trace (`proxy:0`, `agent`, or the peer's own name). */
  traceName(hop: Hop): string;
  readonly log: Logger;
  /** Writes to the trace (`--trace`), when one is kept. */
  trace(event: TraceEvent): void;
  /** Sends a message to a hop's peer as it is (answers, errors). */
  send(hop: Hop, message: JsonRpcMessage): void;
  /**
   * Answers `hop`'s pending request `key` on its behalf with `result`, to whoever asked, and sends
   * `hop` a `$/cancel_request` for it (its late answer is dropped).
   */
  answerInstead(hop: Hop, key: string, result: unknown): void;
  /**
   * Delivers a forwarded request to the same hop again, as if it arrived now (a new id there, spelled
   * for the hop's dialect as it is now); the first delivery is settled (a late answer is dropped).
   */
  forwardAgain(record: Forwarded): void;
  /** Ends the conductor with `code` (its owner's `onExit`, once). */
  exit(code: number): void;
  /** Sends the conductor's own request to `hop` (its id issued there); `answer` gets the answer. */
  request(hop: Hop, method: string, params: unknown, answer: (response: JsonRpcResponse) => void): void;
  /** Tells the operator (stderr) and the client (`_cordon/notice`). */
  notice(level: "warn" | "error", hop: Hop, message: string): void;
  /** A warning about a message Cordon did not forward, rate-limited per peer, and traced. */
  dropped(hop: Hop, why: string, message?: unknown): void;
}

export interface Rule {
  readonly name: string;
  /** A call on its way in, from `from`. */
  call?(cx: RouteContext, call: Call, from: Hop): Verdict;
  /**
   * Whether `call` may do anything with a call of `method` but pass it on untouched, keeping
   * nothing; absent, it may with every method. The router asks once per table and method
   * (`method-rules.ts`), so the answer must depend on the method alone (and no rule of a call table
   * changes a call's method): a rule whose `call` begins with "not my method: pass" says so here,
   * and is not called for the methods it does not judge. Its `forwarded` must likewise do nothing
   * with a notification of a method it does not judge: it is not told of those either.
   */
  judges?(method: string): boolean;
  /** A call is being delivered (ids issued; `toId`/`key` null for a notification). Runs before the target sees it. */
  forwarded?(cx: RouteContext, record: Forwarded | NotifiedCall): void;
  /**
   * An answer on its way back; returns a replacement, nothing to let it go as it is, or `HANDLED`
   * when the rule took it over (it goes no further, and later rules do not see it).
   */
  answer?(cx: RouteContext, answer: JsonRpcResponse, answered: Answered): JsonRpcResponse | typeof HANDLED | undefined;
  /** The router answered `hop`'s request `key` on its behalf (cancelled, retried): no answer will be judged. */
  settled?(cx: RouteContext, hop: Hop, key: string): void;
  /** `hop` failed: what was kept about it goes. */
  closed?(cx: RouteContext, hop: Hop): void;
  /** A new instance of `hop` is up. */
  restarted?(cx: RouteContext, hop: Hop): void;
}

/** A notification being delivered (see `Rule.forwarded`). */
export interface NotifiedCall {
  from: Hop;
  to: Hop;
  key: null;
  call: Call;
}

/** The first verdict of `rules` that is not a plain pass; a rewrite or re-target carries on down the table. */
export function decide(rules: readonly Rule[], cx: RouteContext, call: Call, from: Hop): Verdict {
  let current = call;
  let to: number | undefined;
  let exact: boolean | undefined;
  for (const rule of rules) {
    if (!rule.call) continue;
    const verdict = rule.call(cx, current, from);
    if (verdict.kind !== "pass") return verdict;
    if (verdict.call) current = verdict.call;
    if (verdict.to !== undefined) ({ to, exact } = verdict);
  }
  return current === call && to === undefined ? PASS : { kind: "pass", call: current, to, exact };
}

/** How a rule names a sender in its message: `proxy "redact"`, `the client`, `agent "x"`. */
export { sender } from "../gates/gate.js";
