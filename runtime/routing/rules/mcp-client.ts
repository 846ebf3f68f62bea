/**
 * Requests from a proxy's MCP server to the agent's MCP client act with the user's authority. A
 * proxy that serves an MCP server sends them as `mcp/message {connectionId | serverId, method,
 * params}` toward the agent, whose MCP client (or Cordon's bridge for it) acts on them:
 * `sampling/createMessage` has the agent's model write for the proxy (`mcp:sampling`),
 * `elicitation/create` asks the user a question the agent shows as its own (`mcp:elicitation`),
 * `roots/list` discloses the user's workspace folders (`mcp:roots`). Without the grant the call is
 * refused to the proxy, naming the grant (a notification is dropped); the agent never sees it.
 * `ping`, logging, progress and `list_changed` need none.
 *
 * What a proxy passes on unchanged is not its own: an MCP server further toward the client (another
 * proxy's, or the client's) sends its requests through it, so each such `mcp/message` delivered to a
 * proxy from its predecessor lets that exact message (method and params, compared canonically)
 * through once (`Forwardable`); that sender's own grants were judged where it entered the chain.
 * The SDK checks nothing of this for the host: a proxy that skips the SDK meets the same rule.
 *
 * Cost: per proxy, one digest per handed gated request still open inside it (released when it
 * passes it on, answers it, or fails), plus at most 256 handed notifications.
 */
import { paramsObject } from "../../protocol/json-rpc.js";
import type { Call } from "../envelope.js";
import { refusal, sender } from "../gates/gate.js";
import { GRANT_MEANINGS, type Grant, mcpClientGrantFor } from "../grants.js";
import { Handed } from "./handed.js";
import { PASS, type Rule } from "./rule.js";

/** `mcp/message`, and the older dialect's `_mcp/message`, which an agent of that generation acts on. */
const MESSAGES = new Set(["mcp/message", "_mcp/message"]);

/**
 * The inner MCP method of an `mcp/message` that needs a grant, and that grant; null otherwise.
 * Every member a reader might take for `method` is judged (`Method`, `METHOD`, or a name cut at a
 * NUL): a case-insensitive agent (Go's `encoding/json`) would act on one the rule never read.
 * The I-JSON scan leaves these below the envelope's params alone, so the rule looks itself.
 */
function gated(call: Call): { inner: string; grant: Grant } | null {
  if (!MESSAGES.has(call.method)) return null;
  const params = paramsObject(call.params);
  if (!params) return null;
  for (const [name, inner] of Object.entries(params)) {
    if (typeof inner !== "string" || name.split("\0")[0].toLowerCase() !== "method") continue;
    const grant = mcpClientGrantFor(inner);
    if (grant) return { inner, grant };
  }
  return null;
}

export function mcpClient(): Rule {
  /** Per proxy: the gated MCP requests its predecessor handed it, not yet passed on or answered. */
  const handed = new Handed();
  return {
    name: "mcp-client",
    judges: (method) => MESSAGES.has(method),
    call(_cx, call, from) {
      const need = gated(call);
      if (!need || from.position.role !== "proxy" || from.grants.has(need.grant)) return PASS;
      if (handed.take(from, call.method, call.params)) return PASS;
      return {
        kind: "refuse",
        refusal: refusal(
          "mcp-client",
          `${need.inner} from ${sender(from)}'s MCP server to the agent's MCP client needs the "${need.grant}" grant, which ${sender(from)} does not have (it would let it ${GRANT_MEANINGS[need.grant]})`,
          undefined,
          need.grant,
        ),
      };
    },
    ...handed.hooks((cx, { from, to, call }) => cx.indexOf(from) < cx.indexOf(to) && gated(call) !== null),
  };
}
