/**
 * Prompt-command parsing for the reference agent.
 *
 * This module is pure: it turns the content blocks of a `session/prompt` into a list of {@link Step}s and
 * knows nothing about the connection. The grammar is documented at the top of `reference-agent.ts`; the
 * canonical list of command words is {@link COMMANDS} (also what the `help` command prints).
 */
import type { ContentBlock, StopReason } from "@agentclientprotocol/sdk/unstable";

/** Flavours of fake secret the `secret` command can emit. */
export type SecretFlavour = "openai" | "anthropic" | "github" | "aws";

/** The stop reasons `stop <reason>` accepts. `cancelled` is reserved for a real `session/cancel`. */
export type VoluntaryStopReason = Exclude<StopReason, "cancelled">;

/** One thing the agent does during a prompt turn, in prompt order. */
export type Step =
  /** Emit `echo: <text>` as an `agent_message_chunk` (non-command lines, `echo <text>`, non-text blocks). */
  | { kind: "echo"; text: string }
  /** Emit `<text>` as an `agent_thought_chunk`. */
  | { kind: "think"; text: string }
  /** A fake tool call: `tool_call` (pending) → `tool_call_update` in_progress → completed with content. */
  | { kind: "tool"; title: string }
  /** Ask `session/request_permission` first, report the outcome, run the tool only when allowed. */
  | { kind: "permission"; title: string }
  /** A `read` tool call on a file (only through `fs/read_text_file`: without the client's fs it fails, the disk is never read). */
  | { kind: "read"; path: string }
  /** An `edit` tool call appending the line `text` to a file, after a permission request. */
  | { kind: "edit"; path: string; text: string }
  /** An `execute` tool call running `command args…` in a client terminal, after a permission request. */
  | { kind: "run"; command: string; args: string[] }
  /** Set the session title (`session_info_update`). */
  | { kind: "title"; title: string }
  /** Send this content block back verbatim as an `agent_message_chunk` (non-text blocks after `mirror`). */
  | { kind: "block"; block: ContentBlock }
  /** Emit a fake API key in an `agent_message_chunk`. */
  | { kind: "secret"; flavour: SecretFlavour }
  /** Hold the turn until `session/cancel`, then answer `stopReason: "cancelled"`. */
  | { kind: "wait" }
  /** Pause for `ms` milliseconds (interrupted by `session/cancel`). */
  | { kind: "sleep"; ms: number }
  /** End the turn now with this stop reason; later steps are skipped. */
  | { kind: "stop"; reason: VoluntaryStopReason }
  /** Fail the `session/prompt` request with a JSON-RPC error (-32603) carrying this message. */
  | { kind: "error"; message: string }
  /** Emit a description of the session and connection as seen by the agent. */
  | { kind: "info" }
  /** Emit the command list. */
  | { kind: "help" }
  /** Call a tool of one of the session's MCP servers; reported as a tool call with the result's text. */
  | { kind: "mcp-call"; server: string; tool: string; arguments: Record<string, unknown> }
  /** List the tools of one of the session's MCP servers, as a tool call. */
  | { kind: "mcp-list"; server: string }
  /** List an MCP server's resources (`resources`) or prompts (`prompts`), as a tool call. */
  | { kind: "mcp-catalog"; server: string; what: "resources" | "prompts" }
  /** Read a resource of an MCP server (`resources/read`), as a tool call whose content is its text. */
  | { kind: "mcp-read"; server: string; uri: string }
  /** Get a prompt of an MCP server (`prompts/get`), as a tool call whose content is its messages' text. */
  | { kind: "mcp-prompt"; server: string; name: string; arguments: Record<string, string> }
  /** From here to the end of the prompt, non-text blocks are sent back verbatim (parsing only: emits nothing). */
  | { kind: "mirror" }
  /** A command word with bad arguments: emit `usage: …` as an `agent_message_chunk`. */
  | { kind: "usage"; text: string };

/** Longest pause `sleep` accepts, in milliseconds. */
const MAX_SLEEP_MS = 60_000;

/** The command words, their arguments and what they do (printed by `help`). */
export const COMMANDS: ReadonlyArray<{ usage: string; summary: string }> = [
  { usage: "echo <text>", summary: "message chunk 'echo: <text>' (any non-command line does the same)" },
  { usage: "think <text>", summary: "agent_thought_chunk '<text>'" },
  { usage: "tool <title>", summary: "tool_call (pending), tool_call_update in_progress, completed with content" },
  {
    usage: "permission <title>",
    summary: "tool_call, session/request_permission (allow_once/reject_once), outcome as message; tool runs only if allowed",
  },
  {
    usage: "read <path>",
    summary:
      "tool_call kind read with the file's location; reads it via fs/read_text_file (fails if the client offers no fs.readTextFile; never the local disk)",
  },
  {
    usage: "edit <path> <text>",
    summary:
      "tool_call kind edit with a diff appending the line <text>; permission; writes via fs/write_text_file (fails unless the client offers fs.readTextFile and fs.writeTextFile; never the local disk)",
  },
  {
    usage: "run <command> [args…]",
    summary: "tool_call kind execute; permission; runs it in a client terminal (terminal/create, wait_for_exit, output, release)",
  },
  { usage: "secret [openai|anthropic|github|aws]", summary: "message chunk with a fake API key (default openai 'sk-…')" },
  { usage: "wait", summary: "hold the turn until session/cancel, then stopReason 'cancelled'" },
  { usage: "sleep <ms>", summary: `pause up to ${MAX_SLEEP_MS} ms (session/cancel interrupts)` },
  { usage: "stop <end_turn|max_tokens|max_turn_requests|refusal>", summary: "end the turn now with that stopReason" },
  { usage: "error <message>", summary: "fail session/prompt with JSON-RPC error -32603 '<message>'" },
  { usage: "title <text>", summary: "set the session title: session_info_update {title, updatedAt}" },
  { usage: "mirror", summary: "send the prompt's later non-text blocks back verbatim as agent_message_chunks" },
  { usage: "info", summary: "describe the session (id, cwd, MCP servers, mode, config, title) and the client (info, capabilities)" },
  { usage: "help", summary: "this list" },
];

/**
 * The MCP client commands. Announced in `available_commands_update` only to sessions that were given
 * MCP servers (see `controls.ts`); `help` always lists them.
 */
export const MCP_COMMANDS: ReadonlyArray<{ usage: string; summary: string }> = [
  {
    usage: "use tool <server>::<tool> [json arguments]",
    summary:
      "call a tool of an MCP server given in session/new (stdio, http or acp): tool_call, in_progress, then completed (failed if the tool says isError) with the result's text",
  },
  { usage: "list tools <server>", summary: "list an MCP server's tools: a tool call whose content is one line per tool" },
  {
    usage: "resources <server>",
    summary: "list an MCP server's resources (every page): a tool call whose content is one line per resource",
  },
  { usage: "resource <server> <uri>", summary: "read an MCP server's resource (resources/read): a tool call whose content is its text" },
  { usage: "prompts <server>", summary: "list an MCP server's prompts (every page): a tool call whose content is one line per prompt" },
  {
    usage: "prompt <server>::<name> [json arguments]",
    summary: "get an MCP server's prompt (prompts/get): a tool call whose content is its messages' text",
  },
];

const SECRET_FLAVOURS: readonly SecretFlavour[] = ["openai", "anthropic", "github", "aws"];
const VOLUNTARY_STOP_REASONS: readonly VoluntaryStopReason[] = ["end_turn", "max_tokens", "max_turn_requests", "refusal"];

/** Longest text of an embedded text resource quoted in its description, in characters. */
export const MAX_QUOTED_RESOURCE_CHARS = 200;

/**
 * Parses a whole prompt: text blocks line by line, every other block into an `echo` describing it — or,
 * after a `mirror` line, into a `block` step that sends it back verbatim.
 */
export function parsePrompt(blocks: readonly ContentBlock[]): Step[] {
  const steps: Step[] = [];
  let mirror = false;
  for (const block of blocks) {
    if (block.type === "text") {
      for (const line of block.text.split(/\r?\n/)) {
        const step = parseLine(line);
        if (step?.kind === "mirror") mirror = true;
        else if (step) steps.push(step);
      }
    } else {
      steps.push(mirror ? { kind: "block", block } : { kind: "echo", text: describeBlock(block) });
    }
  }
  return steps;
}

/**
 * Parses one line of prompt text. Blank lines give `undefined`. The command word is the first
 * whitespace-separated token, case-insensitive, with an optional leading `/`; the argument is the rest of
 * the line, trimmed. A line whose first word is not a command is echoed as typed (trimmed).
 */
export function parseLine(rawLine: string): Step | undefined {
  const line = rawLine.trim();
  if (line === "") return undefined;
  const match = /^\/?(\S+)(?:\s+([\s\S]*))?$/.exec(line);
  const word = (match?.[1] ?? "").toLowerCase();
  const arg = (match?.[2] ?? "").trim();
  switch (word) {
    case "echo":
      return { kind: "echo", text: arg };
    case "think":
      return arg ? { kind: "think", text: arg } : usage("think");
    case "tool":
      return arg ? { kind: "tool", title: arg } : usage("tool");
    case "permission":
      return arg ? { kind: "permission", title: arg } : usage("permission");
    case "read":
      return arg ? { kind: "read", path: arg } : usage("read");
    case "edit": {
      const edit = /^(\S+)\s+([\s\S]+)$/.exec(arg);
      return edit ? { kind: "edit", path: edit[1], text: edit[2] } : usage("edit");
    }
    case "run": {
      const [command, ...args] = arg.split(/\s+/);
      return command ? { kind: "run", command, args } : usage("run");
    }
    case "title":
      return arg ? { kind: "title", title: arg } : usage("title");
    case "mirror":
      return arg ? usage("mirror") : { kind: "mirror" };
    case "secret": {
      if (!arg) return { kind: "secret", flavour: "openai" };
      const flavour = arg.toLowerCase() as SecretFlavour;
      return SECRET_FLAVOURS.includes(flavour) ? { kind: "secret", flavour } : usage("secret");
    }
    case "wait":
      return arg ? usage("wait") : { kind: "wait" };
    case "sleep": {
      if (!/^\d+$/.test(arg)) return usage("sleep");
      const ms = Number(arg);
      return ms <= MAX_SLEEP_MS ? { kind: "sleep", ms } : usage("sleep");
    }
    case "stop": {
      const reason = arg.toLowerCase() as VoluntaryStopReason;
      return VOLUNTARY_STOP_REASONS.includes(reason) ? { kind: "stop", reason } : usage("stop");
    }
    case "error":
      return arg ? { kind: "error", message: arg } : usage("error");
    case "info":
      return arg ? usage("info") : { kind: "info" };
    case "help":
      return { kind: "help" };
    case "use": {
      // Only `use tool …` is a command; any other line starting with "use" is echoed as before.
      if (!/^tool(\s|$)/i.test(arg)) return { kind: "echo", text: line };
      const call = /^tool\s+(\S+?)::(\S+)(?:\s+([\s\S]*))?$/i.exec(arg);
      if (!call) return usage("use");
      let args: unknown = {};
      if (call[3] !== undefined && call[3].trim() !== "") {
        try {
          args = JSON.parse(call[3]);
        } catch {
          return usage("use");
        }
      }
      if (typeof args !== "object" || args === null || Array.isArray(args)) return usage("use");
      return { kind: "mcp-call", server: call[1], tool: call[2], arguments: args as Record<string, unknown> };
    }
    case "list": {
      if (!/^tools(\s|$)/i.test(arg)) return { kind: "echo", text: line };
      const server = /^tools\s+(\S+)$/i.exec(arg);
      return server ? { kind: "mcp-list", server: server[1] } : usage("list");
    }
    case "resources":
    case "prompts": {
      const server = /^(\S+)$/.exec(arg);
      return server ? { kind: "mcp-catalog", server: server[1], what: word } : usage(word);
    }
    case "resource": {
      const read = /^(\S+)\s+(\S+)$/.exec(arg);
      return read ? { kind: "mcp-read", server: read[1], uri: read[2] } : usage(word);
    }
    case "prompt": {
      const get = /^(\S+?)::(\S+)(?:\s+([\s\S]*))?$/.exec(arg);
      if (!get) return usage(word);
      let args: unknown = {};
      if (get[3] !== undefined && get[3].trim() !== "") {
        try {
          args = JSON.parse(get[3]);
        } catch {
          return usage(word);
        }
      }
      if (typeof args !== "object" || args === null || Array.isArray(args)) return usage(word);
      if (!Object.values(args).every((v) => typeof v === "string")) return usage(word);
      return { kind: "mcp-prompt", server: get[1], name: get[2], arguments: args as Record<string, string> };
    }
    default:
      return { kind: "echo", text: line };
  }
}

function usage(word: string): Step {
  const command = [...COMMANDS, ...MCP_COMMANDS].find((c) => c.usage === word || c.usage.startsWith(`${word} `));
  return { kind: "usage", text: `usage: ${command?.usage ?? word}` };
}

/** The text of the `help` message. */
export function helpText(): string {
  const all = [...COMMANDS, ...MCP_COMMANDS];
  const width = Math.max(...all.map((c) => c.usage.length));
  const lines = all.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`);
  return ["commands (one per line of prompt text; anything else is echoed):", ...lines].join("\n");
}

/** A one-line description of a non-text content block, as the agent echoes it. */
export function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "resource_link":
      return `[resource_link name=${block.name} uri=${block.uri}]`;
    case "image":
      return `[image mimeType=${block.mimeType} ${base64Bytes(block.data)} bytes${block.uri ? ` uri=${block.uri}` : ""}]`;
    case "audio":
      return `[audio mimeType=${block.mimeType} ${base64Bytes(block.data)} bytes]`;
    case "resource": {
      const resource = block.resource;
      const mime = resource.mimeType ? ` mimeType=${resource.mimeType}` : "";
      if ("text" in resource) {
        const text =
          resource.text.length > MAX_QUOTED_RESOURCE_CHARS ? `${resource.text.slice(0, MAX_QUOTED_RESOURCE_CHARS)}…` : resource.text;
        return `[resource uri=${resource.uri}${mime} text=${JSON.stringify(text)}]`;
      }
      return `[resource uri=${resource.uri}${mime} blob=${base64Bytes(resource.blob)} bytes]`;
    }
    default: {
      // Unreachable with a validated prompt; kept so a future block type is still echoed.
      const unknown = block as { type?: unknown };
      return `[${String(unknown.type)}]`;
    }
  }
}

function base64Bytes(data: string): number {
  return Buffer.from(data, "base64").length;
}

/** The fake API key the `secret` command emits. Deterministic, clearly fake, shaped like the real thing. */
export function fakeSecret(flavour: SecretFlavour): string {
  switch (flavour) {
    case "openai":
      return "sk-FAKEcordon0123456789abcdefghijklmnopqrstuvwxyzAB";
    case "anthropic":
      return "sk-ant-api03-FAKEcordon0123456789abcdefghijklmnopqrstuvwxyz-_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789AA";
    case "github":
      return "ghp_FAKEcordon0123456789abcdefghijklmnop";
    case "aws":
      return "AKIAIOSFODNN7EXAMPLE";
  }
}
