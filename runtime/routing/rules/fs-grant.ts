/**
 * A proxy's calls toward the client that reach outside the conversation (the user's files, a
 * terminal) need a grant from the chain config — requests and notifications alike — unless the
 * proxy is passing on exactly what its successor asked for and it has not answered (`Forwardable`,
 * see grants.ts). The rule credits each such call delivered to a proxy from its successor, and
 * releases the credit when the proxy answers it itself. Run last toward the predecessor: a pass
 * consumes the credit.
 */
import { grant } from "../gates/grant.js";
import { grantFor } from "../grants.js";
import { gateRule } from "./gate-rule.js";
import type { Rule } from "./rule.js";

export const fsGrant: Rule = {
  ...gateRule("grant", grant),
  forwarded(cx, { from, to, key, call }) {
    if (to.position.role !== "proxy" || cx.indexOf(from) < cx.indexOf(to) || !grantFor(call.method)) return;
    to.forwardable.add(key, call.method, call.params);
  },
  answer(_cx, _answer, { answerer, key }) {
    if (answerer.position.role === "proxy") answerer.forwardable.release(key);
    return undefined;
  },
};
