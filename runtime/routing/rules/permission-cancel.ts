/**
 * `session/cancel` from the client: every permission request of that session that the agent is
 * still waiting on is answered `cancelled` now, wherever in the chain it is held (ACP: the client
 * must answer them so; a proxy or a slow client may not), and the hop holding it gets a
 * `$/cancel_request`, so the cancellation travels on toward the client, hop by hop.
 *
 * Cost: an entry per permission request of the agent in flight (its first hop's key, its session
 * id, bounded like an id), released when it is answered.
 */
import { MAX_ID_LENGTH } from "../../protocol/json-rpc.js";
import { Methods } from "../../protocol/methods.js";
import type { Hop } from "../hop.js";
import { sessionOf } from "../trace.js";
import { PASS, type Rule } from "./rule.js";

const CANCELLED = { outcome: { outcome: "cancelled" } };

export function permissionCancel(): Rule {
  /** Per hop: the agent's permission requests it holds, by its key → their session. */
  const held = new Map<Hop, Map<string, string>>();
  const forget = (hop: Hop, key: string) => void held.get(hop)?.delete(key);
  return {
    name: "permission-cancel",
    judges: (method) => method === Methods.sessionCancel,
    call(cx, call) {
      if (call.method !== Methods.sessionCancel) return PASS;
      const session = sessionOf(call.params);
      if (session === null) return PASS;
      for (const hop of [cx.client, ...cx.proxies]) {
        for (const [key, s] of held.get(hop) ?? []) if (s === session) cx.answerInstead(hop, key, CANCELLED);
      }
      return PASS;
    },
    forwarded(cx, { from, to, key, call }) {
      if (key === null || from !== cx.agent || call.method !== Methods.requestPermission) return;
      const session = sessionOf(call.params);
      if (session === null || session.length > MAX_ID_LENGTH) return;
      let m = held.get(to);
      if (!m) held.set(to, (m = new Map()));
      m.set(key, session);
    },
    answer: (_cx, _answer, { answerer, key }) => void forget(answerer, key),
    settled: (_cx, hop, key) => forget(hop, key),
    closed: (_cx, hop) => void held.delete(hop),
  };
}
