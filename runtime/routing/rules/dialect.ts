/**
 * The Rust-dialect fallback. A proxy is first spoken to in the RFD's spelling (`proxy/initialize`,
 * `proxy/successor`); one built on the Rust SDK (`sacp`) knows only `_proxy/*`, and shows it in one
 * of two ways while our `proxy/initialize` to it is unanswered:
 *
 * - it answers method-not-found — unless it has sent `initialize` on to its successor already: one
 *   that did understood it, and is relaying an error from further down the chain;
 * - it forwards every method it does not know to its successor, so `proxy/initialize` comes straight
 *   back inside its `_proxy/successor` envelope instead of an answer (answered to it with an error:
 *   only the conductor sends that).
 *
 * Either way its hop switches to the `rust` dialect and the same initialize is delivered again
 * (`RouteContext.forwardAgain`); the first delivery is settled, so a late answer to it is dropped.
 * A proxy that writes `_proxy/successor` is switched by the router as it unwraps it.
 *
 * Cost: one entry per proxy with an RFD-spelled initialize in flight; nothing after the handshake.
 */
import { ErrorCodes, errorResponse } from "../../protocol/json-rpc.js";
import { isProxyInitialize, Methods } from "../../protocol/methods.js";
import { isRequest } from "../envelope.js";
import type { Hop } from "../hop.js";
import { type Forwarded, HANDLED, PASS, type Rule } from "./rule.js";

export function rustDialect(): Rule {
  /** The RFD-spelled initialize each proxy was sent and has not answered. */
  const asked = new Map<Hop, Forwarded>();
  /** Proxies that sent `initialize` on to their successor: they understood `proxy/initialize`. */
  const passedOn = new Set<Hop>();
  const forget = (hop: Hop, key: string) => {
    if (asked.get(hop)?.key === key) asked.delete(hop);
  };
  return {
    name: "rust-dialect",
    judges: (method) => method === Methods.initialize || isProxyInitialize(method),
    call(cx, call, from) {
      if (call.method === Methods.initialize) passedOn.add(from);
      const record = isProxyInitialize(call.method) ? asked.get(from) : undefined;
      if (!record) return PASS;
      asked.delete(from);
      from.speaksRust();
      cx.log.info(`${from.label} forwarded proxy/initialize instead of answering it: it speaks the Rust SDK's _proxy/* dialect; retrying`);
      cx.forwardAgain(record);
      if (isRequest(call)) cx.send(from, errorResponse(call.id, ErrorCodes.invalidRequest, `${call.method} is only sent by the conductor`));
      return HANDLED;
    },
    forwarded(_cx, record) {
      if (record.key === null || record.call.method !== Methods.initialize) return;
      if (record.to.position.role === "proxy" && record.to.dialect === "rfd") asked.set(record.to, record);
    },
    answer(cx, answer, { answerer, key }) {
      const record = asked.get(answerer);
      if (record?.key !== key) return undefined;
      asked.delete(answerer);
      if (answer.error?.code !== ErrorCodes.methodNotFound || passedOn.has(answerer)) return undefined;
      answerer.speaksRust();
      cx.forwardAgain(record);
      return HANDLED;
    },
    settled: (_cx, hop, key) => forget(hop, key),
    closed: (_cx, hop) => void asked.delete(hop),
  };
}
