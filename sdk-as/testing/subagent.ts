/**
 * Testing a proxy's subagents (sessions it opens at the agent for itself): the test plays the agent
 * answering them, and Cordon refusing them when the chain config withholds a grant.
 */
import type { Json } from "./messages.js";
import { INIT_RESULT, INIT_RESULT_MCP } from "./proxy-under-test.js";

/** An `initialize` answer from an agent that can close sessions (`sessionCapabilities.close`): subagents are closed with `session/close`. */
export const INIT_RESULT_CLOSE = {
  ...INIT_RESULT,
  agentCapabilities: { ...INIT_RESULT.agentCapabilities, sessionCapabilities: { close: {} } },
};

/** The same, with MCP-over-ACP too. */
export const INIT_RESULT_CLOSE_MCP = {
  ...INIT_RESULT_MCP,
  agentCapabilities: { ...INIT_RESULT_MCP.agentCapabilities, sessionCapabilities: { close: {} } },
};

/** The grant Cordon wants for a call a proxy makes toward the agent on its own. */
const GRANT_OF: Record<string, string> = {
  "session/new": "agent:sessions",
  "session/load": "agent:sessions",
  "session/resume": "agent:sessions",
  "session/fork": "agent:sessions",
  "session/close": "agent:sessions",
  "session/delete": "agent:sessions",
  "session/prompt": "agent:prompt",
};

/**
 * Cordon's answer to a call the proxy made on its own without the grant it needs (the error
 * `cordon run` sends, with the grant in `data.cordon.grant`): deliver it in place of the agent's
 * answer. `sent` is the request as the proxy sent it (unwrapped, as `send(…).toAgent` gives it).
 */
export function refusedForGrant(sent: Json, proxyName = "proxy", grant: string = GRANT_OF[sent.method] ?? "agent:sessions"): Json {
  const who = `proxy "${proxyName}"`;
  return {
    jsonrpc: "2.0",
    id: sent.id,
    error: {
      code: -32600,
      message: `${sent.method} from ${who} is its own (not the client's passed on), and a proxy's own ${sent.method} needs the "${grant}" grant, which ${who} does not have`,
      data: { cordon: { component: "cordon", failure: "refused", gate: "agent-authority", grant } },
    },
  };
}
