/**
 * MCP servers a proxy declares to the agent. At session setup (`session/new`, `load`, `resume`,
 * `fork`) the agent starts every stdio server's command and connects to every http/sse server's
 * URL, with the user's authority. So a proxy may add only `{"type":"acp"}` declarations (its own
 * MCP-over-ACP servers, which Cordon bridges); any other declaration it sends toward its successor
 * must be one it was handed exactly (compared canonically: name, command, args, env, url,
 * headers) in a setup still open inside it — the client's own, or one an earlier proxy was
 * allowed to add — unless it holds `agent:mcp`. Otherwise the setup is refused to the proxy,
 * naming the rule, the server and the grant, and logged; the agent never sees it.
 *
 * Cost: the canonical text of each handed setup's non-acp declarations while the setup is open
 * inside the proxy (released when it answers it, or fails).
 */

import { sanitizeForLog } from "../../log.js";
import { paramsObject } from "../../protocol/json-rpc.js";
import { refusal, sender } from "../gates/gate.js";
import { canonical, SESSION_SETUP } from "../grants.js";
import type { Hop } from "../hop.js";
import { membersLike } from "./lax-members.js";
import { PASS, type Rule } from "./rule.js";

/**
 * The declarations that need a grant (everything but acp), as canonical text. Read under every
 * spelling of `mcpServers` a lax reader would take for it (Go's `encoding/json` matches member
 * names case-insensitively): a `McpServers` list is judged like the real one.
 */
function declarations(params: unknown): { text: string; name: string }[] {
  const out: { text: string; name: string }[] = [];
  for (const [key, servers] of membersLike(params, "mcpservers")) {
    if (!Array.isArray(servers)) {
      if (servers !== undefined && servers !== null) out.push({ text: canonical(servers), name: `(${key} is not a list)` });
      continue;
    }
    collect(servers, out);
  }
  return out;
}

function collect(servers: unknown[], out: { text: string; name: string }[]): void {
  for (const server of servers) {
    const s = paramsObject(server);
    if (s?.type === "acp") continue;
    out.push({ text: canonical(server), name: typeof s?.name === "string" ? s.name : "(unnamed)" });
  }
}

export function mcpServers(): Rule {
  /** Per proxy: the declarations of each setup it was handed and has not answered, by its hop key. */
  const handed = new Map<Hop, Map<string, string[]>>();
  return {
    name: "mcp-servers",
    judges: (method) => SESSION_SETUP.has(method),
    call(_cx, call, from) {
      if (!SESSION_SETUP.has(call.method) || from.grants.has("agent:mcp")) return PASS;
      const declared = declarations(call.params);
      if (declared.length === 0) return PASS;
      const allowed = new Set<string>();
      for (const texts of handed.get(from)?.values() ?? []) for (const t of texts) allowed.add(t);
      const added = declared.find((d) => !allowed.has(d.text));
      if (!added) return PASS;
      return {
        kind: "refuse",
        refusal: refusal(
          "mcp-servers",
          `${call.method} from ${sender(from)} declares MCP server "${sanitizeForLog(added.name, 80)}" (not an acp server), which the client did not declare as sent; a proxy may add only {"type":"acp"} servers unless it has the "agent:mcp" grant, which ${sender(from)} does not have`,
          undefined,
          "agent:mcp",
        ),
      };
    },
    forwarded(cx, { from, to, key, call }) {
      if (key === null || to.position.role !== "proxy" || cx.indexOf(from) > cx.indexOf(to) || !SESSION_SETUP.has(call.method)) return;
      const texts = declarations(call.params).map((d) => d.text);
      if (texts.length === 0) return;
      let open = handed.get(to);
      if (!open) handed.set(to, (open = new Map()));
      open.set(key, texts);
    },
    answer(_cx, _answer, { answerer, key }) {
      handed.get(answerer)?.delete(key);
      return undefined;
    },
    settled: (_cx, hop, key) => void handed.get(hop)?.delete(key),
    closed: (_cx, hop) => void handed.delete(hop),
  };
}
