/**
 * The capability contract at the chain's entrance (see capabilities.ts): the client learns from
 * the chain's `initialize` answer what prompts may carry, and a client prompt with content outside
 * that is refused whole, before any of it reaches a proxy or the agent. Until the client has sent
 * its `initialize` the rule has no say (the router refuses calls before it).
 */
import { ErrorCodes } from "../../protocol/json-rpc.js";
import { isProxyInitialize, Methods } from "../../protocol/methods.js";
import { type PromptCapabilities, promptCapabilitiesOf, unsupportedContent } from "../capabilities.js";
import { refusal } from "../gates/gate.js";
import { PASS, type Rule } from "./rule.js";

export function promptCapabilities(): Rule {
  let caps: PromptCapabilities | null = null;
  return {
    name: "prompt-capabilities",
    judges: (method) => method === Methods.sessionPrompt || method === Methods.initialize || isProxyInitialize(method),
    call(_cx, call) {
      if (call.method === Methods.initialize || isProxyInitialize(call.method)) caps ??= {};
      if (call.method !== Methods.sessionPrompt || caps === null) return PASS;
      const unsupported = unsupportedContent(call.params, caps);
      return unsupported
        ? { kind: "refuse", refusal: refusal("prompt-capabilities", unsupported, ErrorCodes.invalidParams), plain: true }
        : PASS;
    },
    answer(cx, answer, { asker, method }) {
      if (asker === cx.client && method === Methods.initialize) caps = promptCapabilitiesOf(answer.result);
      return undefined;
    },
  };
}
