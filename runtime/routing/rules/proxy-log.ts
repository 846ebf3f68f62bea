/**
 * `_cordon/log` from a proxy: one line on stderr (control characters escaped), and the trace.
 * Rate-limited per proxy like the drop warnings: a proxy logging in a loop must not flood the
 * operator's stderr (nor Cordon's memory, when stderr is read slowly). Beyond `MAX_LOG_LINES` in
 * 10 s one line says further ones are dropped; when it logs again after the window, a line says
 * how many were dropped. The trace still records every line.
 */
import { isLevel, sanitizeForLog } from "../../log.js";
import { ErrorCodes, errorResponse, paramsObject } from "../../protocol/json-rpc.js";
import { Methods } from "../../protocol/methods.js";
import { WindowBudget } from "../../sandbox/budget.js";
import { isRequest } from "../envelope.js";
import type { Hop } from "../hop.js";
import { PASS, type Rule } from "./rule.js";

export const MAX_LOG_LINES = 100;
const WINDOW_MS = 10_000;

interface Limiter {
  budget: WindowBudget;
  dropped: number;
}

export function proxyLog(now?: () => number): Rule {
  const limiters = new Map<Hop, Limiter>();
  return {
    name: "proxy-log",
    judges: (method) => method === Methods.cordonLog,
    call(cx, call, from) {
      if (call.method !== Methods.cordonLog) return PASS;
      const p = paramsObject(call.params);
      const level = isLevel(p?.level) ? p.level : "info";
      const text = sanitizeForLog(typeof p?.message === "string" ? p.message : JSON.stringify(p ?? null));
      let limiter = limiters.get(from);
      if (!limiter) limiters.set(from, (limiter = { budget: new WindowBudget(MAX_LOG_LINES, WINDOW_MS, now), dropped: 0 }));
      if (limiter.budget.charge(1)) {
        if (limiter.dropped > 0)
          cx.log.warn(`${from.label}: ${limiter.dropped} log lines were dropped (more than ${MAX_LOG_LINES} in 10 s)`);
        limiter.dropped = 0;
        cx.log[level](`${from.label}: ${text}`);
      } else if (limiter.dropped++ === 0) {
        cx.log.warn(`${from.label}: more than ${MAX_LOG_LINES} log lines in 10 s; dropping further ones for now (--trace records all)`);
      }
      cx.trace({ type: "trace", component: cx.traceName(from), level, message: text });
      if (isRequest(call)) cx.send(from, errorResponse(call.id, ErrorCodes.invalidRequest, `${Methods.cordonLog} is a notification`));
      return { kind: "handled" };
    },
    closed: (_cx, hop) => void limiters.delete(hop),
  };
}
