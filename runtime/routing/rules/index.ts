/**
 * The ordered rules of each direction, read top to bottom: for a call, the first rule that does
 * not pass decides (rule.ts). Cordon's own bookkeeping (`$/cancel_request` translation, the
 * `initialize` handshake, a proxy's successor `initialize`) runs before these; everything that
 * passes is forwarded. Every rule of every table hears of forwarded requests, answers and failures.
 *
 *   from the client (or a parent)  reserved-method, prompt-capabilities
 *   proxy → its successor (inner)  single-envelope, reserved-method, agent-authority, mcp-servers
 *   proxy → its predecessor        proxy-log, reserved-method, conductor-method, owned-sessions,
 *                                  grant (last: it consumes)
 *   from the agent                 reserved-method, conductor-method, owned-sessions
 *   answers                        permission-allow (and the bookkeeping of the rules above)
 *
 * A table is built per conductor: rules keep state about its hops.
 */
import { conductorMethods } from "../gates/conductor-methods.js";
import { reservedMethods } from "../gates/reserved-methods.js";
import { singleEnvelope } from "../gates/single-envelope.js";
import { agentAuthority } from "./agent-authority.js";
import { fsGrant } from "./fs-grant.js";
import { gateRule } from "./gate-rule.js";
import { mcpServers } from "./mcp-servers.js";
import { permissionAllow } from "./permission-allow.js";
import { promptCapabilities } from "./prompt-capabilities.js";
import { proxyLog } from "./proxy-log.js";
import type { Rule } from "./rule.js";

export interface RuleTable {
  fromClient: readonly Rule[];
  proxyToSuccessor: readonly Rule[];
  proxyToPredecessor: readonly Rule[];
  fromAgent: readonly Rule[];
  /** Every rule once: they hear of forwarded requests, answers and failures. */
  all: readonly Rule[];
}

export function ruleTable(): RuleTable {
  const reserved = gateRule("reserved-method", reservedMethods);
  const conductorOnly = gateRule("conductor-method", conductorMethods);
  const authority = agentAuthority();
  const table = {
    fromClient: [reserved, promptCapabilities()],
    proxyToSuccessor: [gateRule("single-envelope", singleEnvelope), reserved, authority.toAgent, mcpServers()],
    proxyToPredecessor: [proxyLog(), reserved, conductorOnly, authority.toClient, fsGrant],
    fromAgent: [reserved, conductorOnly, authority.fromAgent],
  };
  const all = [
    ...new Set([...table.fromClient, ...table.proxyToSuccessor, ...table.proxyToPredecessor, ...table.fromAgent, permissionAllow()]),
  ];
  return { ...table, all };
}

export { decide, type RouteContext, type Rule, type Verdict } from "./rule.js";
