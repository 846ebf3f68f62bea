/**
 * Approving the agent's tool calls is the user's. A proxy that answers `session/request_permission`
 * itself with an option whose `kind` is `allow_once` or `allow_always` (the option looked up by its
 * `optionId` in the request the proxy was given) needs `permission:allow`, unless it is relaying an
 * allow its predecessor gave it for the same tool call and option (the user's own, passed back).
 * Rejecting, or answering `cancelled`, stays free: that only takes authority away (`tool-guard`).
 *
 * An allow without the grant never reaches the agent: the agent gets the request's reject option
 * (the tool is not run, the turn goes on), or `cancelled` when it offered none; the refusal is
 * logged and the client is told in a `_cordon/notice`.
 *
 * Cost: per permission request in flight, its options; per proxy, at most `MAX_RELAYS` allows it
 * was given and has not relayed yet.
 */
import { sanitizeForLog } from "../../log.js";
import { type JsonRpcResponse, paramsObject } from "../../protocol/json-rpc.js";
import { Methods } from "../../protocol/methods.js";
import type { Hop } from "../hop.js";
import { membersLike } from "./lax-members.js";
import { type Rule, sender } from "./rule.js";

const ALLOW = new Set(["allow_once", "allow_always"]);
const REJECT = new Set(["reject_once", "reject_always"]);
const MAX_RELAYS = 64;

interface Asked {
  session: string;
  toolCallId: string;
  title: string;
  /** optionId → kind */
  options: Map<string, string>;
}

function asked(params: unknown): Asked {
  const p = paramsObject(params);
  const toolCall = paramsObject(p?.toolCall);
  const options = new Map<string, string>();
  if (Array.isArray(p?.options)) {
    for (const o of p.options) {
      const option = paramsObject(o);
      if (typeof option?.optionId === "string" && typeof option.kind === "string" && !options.has(option.optionId)) {
        options.set(option.optionId, option.kind);
      }
    }
  }
  return {
    session: typeof p?.sessionId === "string" ? p.sessionId : "",
    toolCallId: typeof toolCall?.toolCallId === "string" ? toolCall.toolCallId : "",
    title: typeof toolCall?.title === "string" ? toolCall.title : "",
    options,
  };
}

/** The values of the members a case-insensitive reader takes for `lowerName`. */
const valuesLike = (value: unknown, lowerName: string): unknown[] => membersLike(value, lowerName).map(([, v]) => v);

/**
 * The options an answer may be read to select: every `optionId` under every `outcome`, in any
 * spelling a lax reader accepts (Go's `encoding/json` matches names case-insensitively, so
 * `{"optionId":"reject","OptionID":"allow"}` reads as allow there). The strictest reading counts.
 */
function selected(answer: JsonRpcResponse): string[] {
  return valuesLike(answer.result, "outcome")
    .flatMap((outcome) => valuesLike(outcome, "optionid"))
    .filter((id): id is string => typeof id === "string");
}

export function permissionAllow(): Rule {
  /** Per hop: the permission requests it was sent and has not answered, by its key. */
  const open = new Map<Hop, Map<string, Asked>>();
  /** Per proxy: allows its predecessor gave it (tool call + option), not yet relayed. */
  const given = new Map<Hop, string[]>();
  const tag = (a: Asked, optionId: string, kind: string) => JSON.stringify([a.session, a.toolCallId, optionId, kind]);
  const give = (hop: Hop, t: string) => {
    let list = given.get(hop);
    if (!list) given.set(hop, (list = []));
    if (list.push(t) > MAX_RELAYS) list.shift();
  };

  return {
    name: "permission-allow",
    // No call to judge: it hears the permission requests forwarded (a notification never is one).
    judges: (method) => method === Methods.requestPermission,
    forwarded(_cx, { to, key, call }) {
      if (key === null || call.method !== Methods.requestPermission) return;
      let m = open.get(to);
      if (!m) open.set(to, (m = new Map()));
      m.set(key, asked(call.params));
    },
    answer(cx, answer, { answerer, asker, key }) {
      const a = open.get(answerer)?.get(key);
      if (!a) return undefined;
      open.get(answerer)!.delete(key);
      const optionId = selected(answer).find((id) => ALLOW.has(a.options.get(id) ?? ""));
      const kind = optionId === undefined ? undefined : a.options.get(optionId);
      if (optionId === undefined || kind === undefined) return undefined;
      const t = tag(a, optionId, kind);
      if (answerer.position.role === "proxy" && !answerer.grants.has("permission:allow")) {
        const relays = given.get(answerer);
        const at = relays?.indexOf(t) ?? -1;
        if (at < 0) return refused(cx, answer, answerer, a, optionId, kind);
        relays!.splice(at, 1);
      }
      if (asker.position.role === "proxy") give(asker, t);
      return undefined;
    },
    settled: (_cx, hop, key) => void open.get(hop)?.delete(key),
    closed(_cx, hop) {
      open.delete(hop);
      given.delete(hop);
    },
  };
}

function refused(
  cx: Parameters<NonNullable<Rule["answer"]>>[0],
  answer: JsonRpcResponse,
  answerer: Hop,
  a: Asked,
  optionId: string,
  kind: string,
): JsonRpcResponse {
  const reject = [...a.options].find(([, k]) => REJECT.has(k));
  const given = reject ? `the request's reject option "${sanitizeForLog(reject[0], 80)}"` : "cancelled";
  cx.notice(
    "warn",
    answerer,
    `permission-allow: ${sender(answerer)} approved the agent's tool call "${sanitizeForLog(a.title, 200)}" itself (option "${sanitizeForLog(optionId, 80)}", ${kind}) without the "permission:allow" grant; refused, the agent got ${given}`,
  );
  const outcome = reject ? { outcome: "selected", optionId: reject[0] } : { outcome: "cancelled" };
  return { jsonrpc: "2.0", id: answer.id, result: { outcome } } as JsonRpcResponse;
}
