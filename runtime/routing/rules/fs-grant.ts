/**
 * A proxy's calls toward the client that reach outside the conversation (the user's files, a
 * terminal) need a grant from the chain config — requests and notifications alike — unless the
 * proxy is passing on exactly what its successor asked for and it has not answered (`Forwardable`,
 * see grants.ts). The rule credits each such call delivered to a proxy from its successor, and
 * releases the credit when the proxy answers it itself. Run last toward the predecessor: a pass
 * consumes the credit.
 *
 * Cost: one credit per gated request in flight inside a proxy (params and all), released when it is
 * answered; a proxy's credits go when it fails (a restarted instance starts with none).
 */

import { refusal, sender } from "../gates/gate.js";
import { grantFor } from "../grants.js";
import { Handed } from "./handed.js";
import { PASS, type Rule } from "./rule.js";

export function fsGrant(): Rule {
  const credits = new Handed();
  return {
    name: "grant",
    judges: (method) => grantFor(method) !== null,
    call(_cx, call, from) {
      const needed = grantFor(call.method);
      if (!needed || credits.take(from, call.method, call.params) || from.grants.has(needed)) return PASS;
      return {
        kind: "refuse",
        refusal: refusal("grant", `${call.method} needs the "${needed}" grant, which ${sender(from)} does not have`),
      };
    },
    ...credits.hooks((cx, { from, to, call }) => cx.indexOf(from) > cx.indexOf(to) && grantFor(call.method) !== null),
  };
}
