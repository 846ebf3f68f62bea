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
import { Forwardable, grantFor } from "../grants.js";
import type { Hop } from "../hop.js";
import { PASS, type Rule } from "./rule.js";

export function fsGrant(): Rule {
  const credits = new Map<Hop, Forwardable>();
  return {
    name: "grant",
    call(_cx, call, from) {
      const needed = grantFor(call.method);
      if (!needed || credits.get(from)?.take(call.method, call.params) || from.grants.has(needed)) return PASS;
      return {
        kind: "refuse",
        refusal: refusal("grant", `${call.method} needs the "${needed}" grant, which ${sender(from)} does not have`),
      };
    },
    forwarded(cx, { from, to, key, call }) {
      if (to.position.role !== "proxy" || cx.indexOf(from) < cx.indexOf(to) || !grantFor(call.method)) return;
      let forwardable = credits.get(to);
      if (!forwardable) credits.set(to, (forwardable = new Forwardable()));
      forwardable.add(key, call.method, call.params);
    },
    answer(_cx, _answer, { answerer, key }) {
      credits.get(answerer)?.release(key);
      return undefined;
    },
    closed: (_cx, hop) => void credits.delete(hop),
  };
}
