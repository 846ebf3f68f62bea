/**
 * Authority that flows through the agent. The agent acts with the user's authority, so a proxy
 * that opens sessions, prompts or reconfigures the agent on its own has it act for the proxy.
 *
 * - Toward the agent (`toAgent`): session setup and teardown, prompts, and the agent's mode,
 *   options and login need `agent:sessions` / `agent:prompt` / `agent:control` when the proxy
 *   originates them. The client's own call of that method — passed on as it is or altered — needs
 *   none: each call of such a method the proxy was handed by its predecessor and has not answered
 *   lets one call of the same method for the same session through (what an altered setup
 *   declares is judged by mcp-servers.ts). Without the grant the call is refused to the proxy, naming the grant; the
 *   proxy keeps running and the agent never sees it. With `agent:sessions`, a proxy's own load,
 *   resume, fork, close, delete, archive, unarchive or retitle may name only a session it opened
 *   itself in this run: any other (the client's, another proxy's, one stored by an earlier run) is
 *   refused, as loading or forking it would hand the proxy its history.
 * - Sessions a proxy opened itself belong to it: the agent's calls for such a session go only to
 *   that proxy (`fromAgent` re-targets them), and what it sends on toward the client for them is
 *   its own, so its grants apply (`toClient`: a forwarded file read needs `fs:read` there).
 *
 *   When the owner fails, what the agent still sends for its sessions goes to nobody (a restarted
 *   instance knows nothing of them and would pass them on to the client).
 *
 * Cost: one entry per handed request in flight inside a proxy (released when the proxy passes one
 * on of that method, answers it, or fails), and one per proxy-owned session (released when the
 * session is closed or deleted; a failed owner's stay, up to MAX_SESSIONS, until then).
 */
import { sanitizeForLog } from "../../log.js";
import { idKey, paramsObject } from "../../protocol/json-rpc.js";
import { ChurnMap } from "../churn-map.js";
import { type Call, isRequest } from "../envelope.js";
import { refusal, sender } from "../gates/gate.js";
import { agentGrantFor, grantFor } from "../grants.js";
import type { Hop } from "../hop.js";
import { PASS, type RouteContext, type Rule } from "./rule.js";

const OPENS = new Set(["session/new", "session/fork", "session/load", "session/resume"]);
const ENDS = new Set(["session/close", "session/delete"]);
/** Calls that name an existing session: with `agent:sessions`, a proxy's own may name only a session it opened itself. */
const TARGETS_SESSION = new Set([
  "session/load",
  "session/resume",
  "session/fork",
  "session/close",
  "session/delete",
  "session/archive",
  "session/unarchive",
  "session/set_title",
]);
/** Sessions remembered (each side); beyond, new ones are not tracked (an owned one then routes as the client's). */
const MAX_SESSIONS = 65_536;

export interface AgentAuthority {
  toAgent: Rule;
  fromAgent: Rule;
  toClient: Rule;
}

export function agentAuthority(): AgentAuthority {
  /** Per proxy: its handed requests still open, by its hop key → method and session (`handedAs`); emptied by nearly every prompt (`ChurnMap`). */
  const handed = new Map<Hop, ChurnMap<string, string>>();
  /** A proxy's own session setups, by the proxy's id for them, until forwarded. */
  const ownSetups = new Map<Hop, Set<string>>();
  /** Own setups forwarded: the answering hop's key → the proxy that will own the session. */
  const pendingOwner = new Map<Hop, ChurnMap<string, Hop>>();
  /** Sessions a proxy opened itself → that proxy. */
  const owners = new Map<string, Hop>();
  /** Sessions the client set up (a proxy loading or resuming one of them does not own it). */
  const clientSessions = new Set<string>();
  /**
   * Sessions whose owner failed (its state, and its knowledge of them, died with it): what the
   * agent still sends for them goes to nobody — a restarted instance would take them for the
   * client's and pass them on. Oldest forgotten first beyond MAX_SESSIONS.
   */
  const orphans = new Set<string>();

  const of = <K, V>(map: Map<Hop, ChurnMap<K, V>>, hop: Hop): ChurnMap<K, V> => {
    let m = map.get(hop);
    if (!m) map.set(hop, (m = new ChurnMap()));
    return m;
  };
  const sessionOf = (call: Call): string | undefined => {
    const id = paramsObject(call.params)?.sessionId;
    return typeof id === "string" ? id : undefined;
  };
  /**
   * What a handed call lets through: one call of its method for the same session. Altering the
   * client's call never changes its session; a proxy holding the client's prompt that prompts a
   * session of its own instead (a subagent) is prompting on its own.
   */
  const handedAs = (call: Call): string => `${call.method}\n${sessionOf(call) ?? ""}`;

  const toAgent: Rule = {
    name: "agent-authority",
    judges: (method) => agentGrantFor(method) !== null,
    call(_cx, call, from) {
      const needed = agentGrantFor(call.method);
      if (!needed) return PASS;
      const open = handed.get(from);
      if (open) {
        const same = handedAs(call);
        for (const [key, handedCall] of open) {
          if (handedCall !== same) continue;
          open.delete(key);
          return PASS; // the client's own, passed on (or altered)
        }
      }
      if (!from.grants.has(needed)) {
        return {
          kind: "refuse",
          refusal: refusal(
            "agent-authority",
            `${call.method} from ${sender(from)} is its own (not the client's passed on), and a proxy's own ${call.method} needs the "${needed}" grant, which ${sender(from)} does not have`,
            undefined,
            needed,
          ),
        };
      }
      const session = sessionOf(call);
      if (TARGETS_SESSION.has(call.method) && (session === undefined || owners.get(session) !== from)) {
        // The grant is for sessions of its own: loading, resuming or forking another's would hand it
        // that session's history (the user's, earlier runs' included: `session/list` is free), and
        // closing or deleting it would end the user's work.
        return {
          kind: "refuse",
          refusal: refusal(
            "agent-authority",
            `${call.method} from ${sender(from)} names session ${JSON.stringify(sanitizeForLog(session ?? "(none)", 80))}, which ${sender(from)} did not open itself; the "${needed}" grant covers only the sessions a proxy opened itself in this run`,
          ),
        };
      }
      if (OPENS.has(call.method) && isRequest(call)) {
        if (owners.size + pendingCount() >= MAX_SESSIONS) {
          return {
            kind: "refuse",
            refusal: refusal("agent-authority", `${sender(from)} has opened ${MAX_SESSIONS} sessions of its own; close some first`),
          };
        }
        let own = ownSetups.get(from);
        if (!own) ownSetups.set(from, (own = new Set()));
        own.add(idKey(call.id));
      }
      return PASS;
    },
    forwarded(cx, { from, to, key, call }) {
      if (key === null) return;
      if (from === cx.client && OPENS.has(call.method)) remember(sessionOf(call));
      if (to.position.role === "proxy" && cx.indexOf(from) < cx.indexOf(to) && agentGrantFor(call.method))
        of(handed, to).set(key, handedAs(call));
      if (isRequest(call) && ownSetups.get(from)?.delete(idKey(call.id))) {
        const session = call.method === "session/load" || call.method === "session/resume" ? sessionOf(call) : undefined;
        // Loading or resuming a session the client set up leaves it the client's.
        if (session === undefined || !clientSessions.has(session)) of(pendingOwner, to).set(key, from);
      }
    },
    answer(cx, answer, { answerer, asker, key, method }) {
      handed.get(answerer)?.delete(key);
      if (asker === cx.client && OPENS.has(method) && answer.error === undefined) remember(paramsObject(answer.result)?.sessionId);
      const owner = pendingOwner.get(answerer)?.get(key);
      if (owner) {
        pendingOwner.get(answerer)!.delete(key);
        const result = paramsObject(answer.result);
        const session = typeof result?.sessionId === "string" ? result.sessionId : undefined;
        if (session !== undefined && answer.error === undefined && true) owners.set(session, owner);
      }
      return undefined;
    },
    settled(_cx, hop, key) {
      handed.get(hop)?.delete(key);
      pendingOwner.get(hop)?.delete(key);
    },
    closed(_cx, hop) {
      handed.delete(hop);
      ownSetups.delete(hop);
      pendingOwner.delete(hop);
      for (const [session, owner] of owners) {
        if (owner !== hop) continue;
        owners.delete(session);
        if (orphans.size >= MAX_SESSIONS) orphans.delete(orphans.values().next().value!);
        orphans.add(session);
      }
    },
  };

  function pendingCount(): number {
    let n = 0;
    for (const m of pendingOwner.values()) n += m.size;
    return n;
  }
  function remember(session: unknown): void {
    if (typeof session === "string" && clientSessions.size < MAX_SESSIONS) clientSessions.add(session);
  }
  /** A session was ended: it is forgotten. */
  const ended = (call: Call): void => {
    const session = sessionOf(call);
    if (session === undefined || !ENDS.has(call.method)) return;
    owners.delete(session);
    orphans.delete(session);
    clientSessions.delete(session);
  };
  const owned = (call: Call): Hop | undefined => {
    if (owners.size === 0) return undefined; // most chains: no proxy opened a session of its own, and no params are read
    const session = sessionOf(call);
    return session === undefined ? undefined : owners.get(session);
  };

  const fromAgent: Rule = {
    name: "owned-sessions",
    call(cx: RouteContext, call) {
      const owner = owned(call);
      if (owner) return { kind: "pass", to: cx.indexOf(owner), exact: true };
      if (orphans.size === 0) return PASS;
      const session = sessionOf(call);
      if (session === undefined || !orphans.has(session)) return PASS;
      return {
        kind: "refuse",
        refusal: refusal(
          "owned-sessions",
          `${call.method} is for a session a proxy opened itself and lost when it failed; nobody else may see it`,
        ),
      };
    },
  };

  const toClient: Rule = {
    name: "owned-sessions",
    call(_cx, call, from) {
      const owner = owned(call);
      if (!owner) return PASS;
      const needed = grantFor(call.method);
      if (needed && !from.grants.has(needed)) {
        return {
          kind: "refuse",
          refusal: refusal(
            "owned-sessions",
            `${call.method} is for a session ${sender(owner)} opened itself, which the client never set up; passing it on to the client needs the "${needed}" grant, which ${sender(from)} does not have`,
            undefined,
            needed,
          ),
        };
      }
      return PASS;
    },
  };

  // Teardown of an owned session is seen on its way to the agent.
  const toAgentCall = toAgent.call!;
  toAgent.call = (cx, call, from) => {
    const verdict = toAgentCall(cx, call, from);
    if (verdict.kind === "pass") ended(call);
    return verdict;
  };

  return { toAgent, fromAgent, toClient };
}
