/**
 * A chain that could not start (a component failed to open) has nothing to route to. The error was
 * logged when it happened; the client learns it as the answer to its first request, and the
 * conductor then ends with a non-zero status. Until the router says so (`failed`), every call passes.
 */
import { ErrorCodes, errorResponse } from "../../protocol/json-rpc.js";
import { isRequest } from "../envelope.js";
import { failureData } from "../failure.js";
import { HANDLED, PASS, type Rule } from "./rule.js";

export interface StartFailure extends Rule {
  /** The chain could not start, because of `reason`. */
  failed(reason: string): void;
}

export function startFailure(): StartFailure {
  let reason: string | null = null;
  return {
    name: "start-failure",
    failed(why) {
      reason = why;
    },
    call(cx, call, from) {
      if (reason === null) return PASS;
      if (isRequest(call)) {
        const text = `Cordon could not start the chain: ${reason}`;
        cx.send(from, errorResponse(call.id, ErrorCodes.internalError, text, failureData("cordon", "start")));
      }
      cx.exit(1);
      return HANDLED;
    },
  };
}
