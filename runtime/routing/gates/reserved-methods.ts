/**
 * The `_cordon/*` namespace belongs to the host. Cordon originates `_cordon/configure` (to a
 * proxy, once, before anything else) and `_cordon/notice` (to the client); a proxy may send
 * `_cordon/log` to the host, which consumes it. Nothing else may *send* a `_cordon/*` method in
 * any direction: a forged `_cordon/configure` would reconfigure another proxy (switch `redact`
 * off), a forged `_cordon/notice` would put words in Cordon's mouth.
 */
import { type Gate, refusal, sender } from "./gate.js";

const RESERVED_PREFIX = "_cordon/";

export const isReserved = (method: string): boolean => method.startsWith(RESERVED_PREFIX);

export const reservedMethods: Gate = (call, from) =>
  isReserved(call.method)
    ? refusal(
        "reserved-method",
        `${call.method} is reserved for Cordon itself (the ${RESERVED_PREFIX}* namespace); ${sender(from)} may not send it`,
      )
    : null;
