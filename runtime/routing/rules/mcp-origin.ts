/**
 * MCP-over-ACP calls are the agent's. The agent (or the MCP bridge before it) reaches an
 * `{"type":"acp"}` MCP server by `mcp/connect`, `mcp/message` and `mcp/disconnect` sent toward the
 * client; they travel through the proxies until the server's owner (a proxy, or the client)
 * answers. A proxy that sends such a call toward its predecessor on its own is calling someone
 * else's MCP server as if it were the agent: a server another proxy serves with *its* grants
 * (`workspace-tools`' `read_file` reads through its `fs:read`), or one the client serves with the
 * user's authority. So toward its predecessor a proxy may send only the MCP calls it was handed by
 * its successor exactly (method and params, compared canonically) and has not answered — passed on
 * unchanged. Anything else is refused to the proxy (a notification dropped), naming the rule. Only
 * `agent:mcp` permits it: that grant already lets a proxy have the agent run any program, and the
 * MCP bridge (Cordon's own component, which speaks MCP-over-ACP for the agent) holds it.
 *
 * Cost: per proxy, one digest per handed MCP request still open inside it (released when it passes
 * it on, answers it, or fails) plus at most 256 handed notifications (`Forwardable`).
 */
import { refusal, sender } from "../gates/gate.js";
import { Handed } from "./handed.js";
import { PASS, type Rule } from "./rule.js";

const MCP_CALLS = new Set(["mcp/connect", "mcp/message", "mcp/disconnect"]);

export function mcpOrigin(): Rule {
  /** Per proxy: the MCP calls its successor handed it, not yet passed on or answered. */
  const handed = new Handed();
  return {
    name: "mcp-origin",
    judges: (method) => MCP_CALLS.has(method),
    call(_cx, call, from) {
      if (!MCP_CALLS.has(call.method) || from.position.role !== "proxy" || from.grants.has("agent:mcp")) return PASS;
      if (handed.take(from, call.method, call.params)) return PASS;
      return {
        kind: "refuse",
        refusal: refusal(
          "mcp-origin",
          `${call.method} from ${sender(from)} toward the client side is its own (not the agent's passed on unchanged): a proxy may not call an MCP server it does not serve as if it were the agent unless it has the "agent:mcp" grant, which ${sender(from)} does not have`,
          undefined,
          "agent:mcp",
        ),
      };
    },
    ...handed.hooks((cx, { from, to, call }) => cx.indexOf(from) > cx.indexOf(to) && MCP_CALLS.has(call.method)),
  };
}
