/**
 * The client's `initialize` handshake, once per connection: the conductor expects `initialize`
 * (agent mode) or `proxy/initialize` (proxy mode, from its parent) before anything else, and only
 * once; the conductor-only spellings are refused from the client. The handshake goes downstream as
 * plain `initialize` (a proxy gets it as `proxy/initialize`, see the router's `toward`), and its
 * params are kept to initialize a proxy's restarted instance the same way (its successor is not
 * initialized again: successor-init.ts replays the answer it got).
 */
import { sanitizeForLog } from "../../log.js";
import { ErrorCodes } from "../../protocol/json-rpc.js";
import { isProxyInitialize, isProxySuccessor, Methods } from "../../protocol/methods.js";
import { withMember } from "../../protocol/raw-json.js";
import { refusal } from "../gates/gate.js";
import { PASS, type Rule, type Verdict } from "./rule.js";

export interface Handshake extends Rule {
  /** The client's initialize has been let through. */
  readonly done: boolean;
}

const plain = (message: string): Verdict => ({
  kind: "refuse",
  refusal: refusal("initialize", message, ErrorCodes.invalidRequest),
  plain: true,
});

export function handshake(mode: "agent" | "proxy"): Handshake {
  const proxyMode = mode === "proxy";
  const expected = proxyMode ? Methods.proxyInitialize : Methods.initialize;
  let params: unknown;
  let done = false;
  return {
    name: "initialize",
    get done() {
      return done;
    },
    call(cx, call) {
      const { method } = call;
      const isInit = proxyMode ? isProxyInitialize(method) : method === Methods.initialize;
      if (!isInit && (isProxyInitialize(method) || isProxySuccessor(method) || method === Methods.initialize)) {
        return plain(
          proxyMode
            ? `${method} cannot be sent to a conductor in proxy mode; it expects "proxy/initialize" from its parent`
            : `${method} is only sent by a conductor to its proxies`,
        );
      }
      if (!isInit) return done ? PASS : plain(`expected "${expected}" before "${method}"`);
      if (done) return plain(`${method} was already sent on this connection`);
      done = true;
      params = call.params;
      if (method === Methods.legacyProxyInitialize) cx.client.speaksRust();
      return { kind: "pass", call: withMember(call, "method", Methods.initialize) };
    },
    restarted(cx, hop) {
      if (!done) return;
      const method = hop.dialect === "rust" ? Methods.legacyProxyInitialize : Methods.proxyInitialize;
      cx.request(hop, method, params, (response) => {
        if (response.error) cx.log.error(`${hop.label} restarted but refused initialization: ${sanitizeForLog(response.error.message)}`);
        else cx.log.info(`${hop.label} restarted`);
      });
    },
  };
}
