/**
 * Every grant name a package may request and a chain config may give, with what it lets a proxy
 * do in plain words (shown by `add`, `update` and `info`). The fs/terminal grants are the
 * routing's (`GRANTS`), the WASI ones the sandbox's; the agent grants are the names fixed for
 * authority that flows through the agent.
 */
import { GRANTS } from "../routing/grants.js";
import { WASI_GRANTS } from "../sandbox/wasi-grants.js";

const AGENT_GRANTS = ["agent:mcp", "agent:sessions", "agent:prompt", "agent:control", "permission:allow"] as const;

export const KNOWN_GRANTS: readonly string[] = [...new Set<string>([...GRANTS, ...AGENT_GRANTS, ...WASI_GRANTS])];

const WORDS: Record<string, string> = {
  "fs:read": "may ask your editor to read files in your workspace",
  "fs:write": "may ask your editor to write files in your workspace",
  terminal: "may ask your editor to run commands in your workspace",
  "agent:mcp": "may make the agent start or connect to MCP servers (local programs or network services)",
  "agent:sessions": "may create, load, fork, close or delete agent sessions of its own",
  "agent:prompt": "may send the agent prompts of its own",
  "agent:control": "may change the agent's mode and settings, and authenticate or log out",
  "permission:allow": "may answer the agent's permission requests with allow",
  "wasi:clocks": "may read the wall clock (which also allows timing measurements)",
  "wasi:random": "may get random numbers",
};

export const describeGrant = (grant: string) => WORDS[grant] ?? "unknown grant";
