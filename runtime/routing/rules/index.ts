/**
 * The ordered rules of each direction, read top to bottom: for a call, the first rule that does
 * not pass decides (rule.ts). Cordon's own bookkeeping (`$/cancel_request` translation) runs before
 * these; everything that passes is forwarded. Every rule of every table hears of forwarded
 * requests, answers and failures, in the order of the tables (rust-dialect first: it may take an
 * answer over before any rule judges it).
 *
 *   from the client (or a parent)  reserved-method, prompt-capabilities, permission-cancel,
 *                                  start-failure (last: it answers whatever passed)
 *   proxy → its successor (inner)  rust-dialect (first: a proxy/initialize coming back is its cue),
 *                                  single-envelope, reserved-method, agent-authority, mcp-servers,
 *                                  mcp-client, successor-init (last: it records the initialize it
 *                                  lets through)
 *   proxy → its predecessor        proxy-log, reserved-method, conductor-method, elicitation-scope,
 *                                  owned-sessions, mcp-origin, grant (the last two consume)
 *   from the agent                 reserved-method, conductor-method, elicitation-scope, owned-sessions
 *   then, from the client          initialize (the handshake, once the chain is up)
 *   answers                        permission-allow (and the bookkeeping of the rules above)
 *
 * A table is built per conductor: rules keep state about its hops.
 */
import { conductorMethods, isConductorMethod } from "../gates/conductor-methods.js";
import { isReserved, reservedMethods } from "../gates/reserved-methods.js";
import { isEnvelopeMethod, singleEnvelope } from "../gates/single-envelope.js";
import { agentAuthority } from "./agent-authority.js";
import { rustDialect } from "./dialect.js";
import { elicitationScope } from "./elicitation-scope.js";
import { fsGrant } from "./fs-grant.js";
import { gateRule } from "./gate-rule.js";
import { type Handshake, handshake } from "./initialize.js";
import { mcpClient } from "./mcp-client.js";
import { mcpOrigin } from "./mcp-origin.js";
import { mcpServers } from "./mcp-servers.js";
import { permissionAllow } from "./permission-allow.js";
import { permissionCancel } from "./permission-cancel.js";
import { promptCapabilities } from "./prompt-capabilities.js";
import { proxyLog } from "./proxy-log.js";
import type { Rule } from "./rule.js";
import { type StartFailure, startFailure } from "./start-failure.js";
import { successorInit } from "./successor-init.js";

export interface RuleTable {
  fromClient: readonly Rule[];
  proxyToSuccessor: readonly Rule[];
  proxyToPredecessor: readonly Rule[];
  fromAgent: readonly Rule[];
  /** The client's handshake, run once the chain is up (after its start failure is answered). */
  handshake: Handshake;
  /** Told by the router when the chain could not start. */
  startFailure: StartFailure;
  /** Every rule once: they hear of forwarded requests, answers and failures. */
  all: readonly Rule[];
  /** The rules of `all` with each hook, in the same order: looked up once, not per message. */
  hearing: { readonly [H in "forwarded" | "answer" | "settled"]: readonly Rule[] };
}

export function ruleTable(mode: "agent" | "proxy" = "agent"): RuleTable {
  const init = handshake(mode);
  const reserved = gateRule("reserved-method", reservedMethods, isReserved);
  const conductorOnly = gateRule("conductor-method", conductorMethods, isConductorMethod);
  const authority = agentAuthority();
  const dialect = rustDialect();
  const failed = startFailure();
  const table = {
    fromClient: [reserved, promptCapabilities(), permissionCancel(), failed],
    proxyToSuccessor: [
      dialect,
      gateRule("single-envelope", singleEnvelope, isEnvelopeMethod),
      reserved,
      authority.toAgent,
      mcpServers(),
      mcpClient(),
      successorInit(),
    ],
    proxyToPredecessor: [proxyLog(), reserved, conductorOnly, elicitationScope, authority.toClient, mcpOrigin(), fsGrant()],
    fromAgent: [reserved, conductorOnly, elicitationScope, authority.fromAgent],
  };
  const all = [
    ...new Set([
      dialect,
      ...table.fromClient,
      ...table.proxyToSuccessor,
      ...table.proxyToPredecessor,
      ...table.fromAgent,
      permissionAllow(),
      init,
    ]),
  ];
  const hearing = {
    forwarded: all.filter((rule) => rule.forwarded),
    answer: all.filter((rule) => rule.answer),
    settled: all.filter((rule) => rule.settled),
  };
  return { ...table, handshake: init, startFailure: failed, all, hearing };
}

export { decide, type Forwarded, isHandled, type RouteContext, type Rule, type Verdict } from "./rule.js";
