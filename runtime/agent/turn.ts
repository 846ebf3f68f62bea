/**
 * Runs one prompt turn of the reference agent: executes the parsed {@link Step}s in order, emitting
 * `session/update`s and making requests of the client (`session/request_permission`, `fs/*`,
 * `terminal/*`) through the given {@link TurnIO}.
 *
 * Cancellation: the turn's signal is checked before every step and interrupts `wait`, `sleep` and any
 * pending request to the client (fs and terminal requests are also withdrawn with `$/cancel_request`);
 * once it is aborted no further step runs and the turn ends with `stopReason: "cancelled"` (never an
 * error). A tool call interrupted that way is closed with a `failed` update first.
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import { isAbsolute, normalize, relative, resolve } from "node:path";
import {
  RequestError,
  type ClientCapabilities,
  type PermissionOption,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
  type StopReason,
  type ToolCall,
  type ToolCallContent,
  type ToolCallLocation,
  type McpServer,
} from "@agentclientprotocol/sdk/unstable";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { fakeSecret, helpText, type Step } from "./commands.js";
import type { AgentSession } from "./session.js";

/** How a turn talks to the client. */
export interface TurnIO {
  /** Sends one `session/update` for the turn's session. */
  emit(update: SessionUpdate): Promise<void>;
  /** Sends `session/request_permission` and returns the client's answer. */
  requestPermission(params: RequestPermissionRequest): Promise<RequestPermissionResponse>;
  /**
   * Sends another request to the client (`fs/*`, `terminal/*`) and returns its result; when `signal`
   * aborts, the request is withdrawn with `$/cancel_request`.
   */
  request<T>(method: string, params: unknown, signal?: AbortSignal): Promise<T>;
  /** What the client advertised in `initialize`. */
  clientCapabilities(): ClientCapabilities;
  /** Lines describing the connection for `info` (client info and capabilities). */
  describeConnection(): string[];
  /** The MCP client (`use tool`, `list tools`), for the servers the session was set up with. */
  mcp?: TurnMcp;
}

/** MCP access for one turn: `server` is a server given in the session's setup. */
export interface TurnMcp {
  listTools(server: McpServer, signal: AbortSignal): Promise<Tool[]>;
  callTool(server: McpServer, tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
}

/** The options every permission request offers. */
export const PERMISSION_OPTIONS: readonly PermissionOption[] = [
  { optionId: "allow", name: "Allow once", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];

/** Longest file `read` and `edit` read from disk, in bytes. */
export const MAX_FILE_BYTES = 1024 * 1024;
/** `outputByteLimit` of the terminals `run` creates. */
export const TERMINAL_OUTPUT_LIMIT = 64 * 1024;

/** Text helpers for the updates the agent emits; every chunk ends with a newline. */
export const messageChunk = (text: string): SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  content: { type: "text", text: `${text}\n` },
});
export const thoughtChunk = (text: string): SessionUpdate => ({
  sessionUpdate: "agent_thought_chunk",
  content: { type: "text", text: `${text}\n` },
});
const textContent = (text: string): ToolCallContent[] => [{ type: "content", content: { type: "text", text } }];

/** The file content after `edit` appends the line `text` (a missing file counts as empty). */
export function appendLine(oldText: string | null, text: string): string {
  const before = oldText ?? "";
  return `${before}${before === "" || before.endsWith("\n") ? "" : "\n"}${text}\n`;
}

/** Thrown internally when the turn's signal aborts while a step is waiting. */
class TurnCancelled extends Error {}

type PermissionOutcome = "allowed" | "rejected" | "cancelled";

export async function runTurn(session: AgentSession, steps: readonly Step[], signal: AbortSignal, io: TurnIO): Promise<StopReason> {
  const emit = async (update: SessionUpdate): Promise<void> => {
    session.record({ kind: "update", update });
    await io.emit(update);
  };
  try {
    for (const step of steps) {
      if (signal.aborted) return "cancelled";
      const stop = await runStep(step);
      if (stop) return stop;
    }
    return signal.aborted ? "cancelled" : "end_turn";
  } catch (error) {
    if (error instanceof TurnCancelled) return "cancelled";
    throw error;
  }

  async function runStep(step: Step): Promise<StopReason | undefined> {
    switch (step.kind) {
      case "echo":
        await emit(messageChunk(`echo: ${step.text}`));
        return;
      case "usage":
        await emit(messageChunk(step.text));
        return;
      case "think":
        await emit(thoughtChunk(step.text));
        return;
      case "secret":
        await emit(messageChunk(`here is a fake ${step.flavour} API key: ${fakeSecret(step.flavour)}`));
        return;
      case "help":
        await emit(messageChunk(helpText()));
        return;
      case "info":
        await emit(messageChunk(describeSession().join("\n")));
        return;
      case "block":
        await emit({ sessionUpdate: "agent_message_chunk", content: step.block });
        return;
      case "title":
        session.setTitle(step.title);
        await emit({ sessionUpdate: "session_info_update", title: step.title, updatedAt: session.updatedAt });
        return;
      case "mirror":
        return;
      case "wait":
        await emit(messageChunk("waiting for session/cancel"));
        await untilAborted();
        return "cancelled";
      case "sleep":
        await sleep(step.ms);
        return;
      case "stop":
        return step.reason;
      case "error":
        throw new RequestError(-32603, step.message, { command: "error" });
    }
    // The tool commands.
    if (session.config("tool_calls_enabled") === false) {
      await emit(messageChunk(`not run (tool_calls_enabled is off): ${describeToolStep(step)}`));
      return;
    }
    switch (step.kind) {
      case "tool": {
        const toolCallId = session.nextToolCallId();
        await emit({ sessionUpdate: "tool_call", ...simulatedCall(toolCallId, step.title) });
        await runSimulated(toolCallId, step.title);
        return;
      }
      case "permission":
        return runPermission(step.title);
      case "read":
        return runRead(step.path);
      case "edit":
        return runEdit(step.path, step.text);
      case "run":
        return runCommand(step.command, step.args);
      case "mcp-call":
      case "mcp-list":
        return runMcp(step);
    }
  }

  /**
   * `use tool <server>::<tool> {json}` and `list tools <server>`: a tool call (kind `other`,
   * rawInput {server, tool?, arguments?}), `in_progress`, then `completed` with the result's text
   * as content and the MCP result as rawOutput — `failed` when the tool answered `isError`, or with
   * `MCP error: …` when the server could not be reached or refused the request.
   */
  async function runMcp(step: Extract<Step, { kind: "mcp-call" | "mcp-list" }>): Promise<StopReason | undefined> {
    const toolCallId = session.nextToolCallId();
    const call = step.kind === "mcp-call";
    const title = call ? `${step.server}::${step.tool}` : `list tools ${step.server}`;
    const rawInput = call ? { server: step.server, tool: step.tool, arguments: step.arguments } : { server: step.server };
    await emit({ sessionUpdate: "tool_call", toolCallId, title, kind: "other", status: "pending", rawInput });
    const servers = session.setup.mcpServers;
    const server = servers.find((s) => s.name === step.server);
    if (!server || !io.mcp) {
      const known = servers.map((s) => s.name).join(", ") || "none";
      await failed(toolCallId, `not run: no MCP server named "${step.server}" in this session (servers: ${known})`);
      return;
    }
    const mcp = io.mcp;
    await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
    return interruptible(toolCallId, async () => {
      try {
        if (call) {
          const result = await abortable(mcp.callTool(server, step.tool, step.arguments, signal));
          await emit({
            sessionUpdate: "tool_call_update",
            toolCallId,
            status: result.isError ? "failed" : "completed",
            content: textContent(mcpText(result.content)),
            rawOutput: result as unknown as Record<string, unknown>,
          });
        } else {
          const tools = await abortable(mcp.listTools(server, signal));
          const text = tools.map((t) => (t.description ? `${t.name}: ${t.description}` : t.name)).join("\n");
          await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "completed", content: textContent(text), rawOutput: { tools } });
        }
      } catch (error) {
        if (error instanceof TurnCancelled) throw error;
        const message = errorMessage(error);
        await failed(toolCallId, message.startsWith("MCP error") ? message : `MCP error: ${message}`);
      }
    });
  }

  function simulatedCall(toolCallId: string, title: string): ToolCall {
    return { toolCallId, title, kind: "execute", status: "pending", rawInput: { command: title } };
  }

  async function runSimulated(toolCallId: string, title: string): Promise<void> {
    await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
    await emit({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "completed",
      content: textContent(`ran ${title}`),
      rawOutput: { output: `ran ${title}` },
    });
  }

  function failed(toolCallId: string, text: string): Promise<void> {
    return emit({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: textContent(text) });
  }

  /**
   * Asks permission for `call` (already announced with `tool_call`) and reports the outcome as a message.
   * Rejected: a reject option, an unknown option or an error answer. Cancelled: outcome `cancelled`, or
   * `session/cancel` while waiting (or racing with the answer).
   */
  async function askPermission(call: ToolCall): Promise<PermissionOutcome> {
    let outcome: PermissionOutcome;
    let detail = "";
    try {
      const response = await abortable(io.requestPermission({ sessionId: session.id, toolCall: call, options: [...PERMISSION_OPTIONS] }));
      if (response.outcome.outcome === "cancelled") {
        outcome = "cancelled";
      } else {
        const optionId = response.outcome.optionId;
        const option = PERMISSION_OPTIONS.find((o) => o.optionId === optionId);
        outcome = option?.kind.startsWith("allow") ? "allowed" : "rejected";
        detail = option ? ` (option ${optionId})` : ` (unknown option ${JSON.stringify(optionId)})`;
      }
    } catch (error) {
      if (!(error instanceof TurnCancelled) && !signal.aborted) {
        // The client could not answer (e.g. -32601): treat it as a refusal and carry on with the turn.
        outcome = "rejected";
        detail = ` (request failed: ${errorMessage(error)})`;
      } else {
        outcome = "cancelled";
      }
    }
    if (signal.aborted) outcome = "cancelled";
    await emit(messageChunk(`permission ${outcome}: ${call.title}${detail}`));
    return outcome;
  }

  /** Closes a tool call that was not allowed to run; a cancelled permission ends the turn. */
  async function notRun(toolCallId: string, outcome: "rejected" | "cancelled"): Promise<StopReason | undefined> {
    if (outcome === "rejected") {
      await failed(toolCallId, "not run: permission rejected");
      return;
    }
    await failed(toolCallId, "not run: turn cancelled");
    return "cancelled";
  }

  async function runPermission(title: string): Promise<StopReason | undefined> {
    const toolCallId = session.nextToolCallId();
    const call = simulatedCall(toolCallId, title);
    await emit({ sessionUpdate: "tool_call", ...call });
    const outcome = await askPermission(call);
    if (outcome !== "allowed") return notRun(toolCallId, outcome);
    await runSimulated(toolCallId, title);
  }

  async function runRead(pathArg: string): Promise<StopReason | undefined> {
    const toolCallId = session.nextToolCallId();
    const path = resolvePath(pathArg);
    const locations: ToolCallLocation[] = [{ path }];
    await emit({ sessionUpdate: "tool_call", toolCallId, title: `Read ${pathArg}`, kind: "read", status: "pending", locations, rawInput: { path } });
    if (!insideSession(path)) {
      await failed(toolCallId, `not read: ${path} is outside the session's directories`);
      return;
    }
    await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
    return interruptible(toolCallId, async () => {
      let text: string;
      try {
        text = await readText(path);
      } catch (error) {
        if (error instanceof TurnCancelled) throw error;
        await failed(toolCallId, `not read: ${errorMessage(error)}`);
        return;
      }
      await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "completed", content: textContent(text), locations });
    });
  }

  async function runEdit(pathArg: string, text: string): Promise<StopReason | undefined> {
    const toolCallId = session.nextToolCallId();
    const path = resolvePath(pathArg);
    const title = `Edit ${pathArg}`;
    const rawInput = { path, append: text };
    if (!insideSession(path)) {
      await emit({ sessionUpdate: "tool_call", toolCallId, title, kind: "edit", status: "pending", locations: [{ path }], rawInput });
      await failed(toolCallId, `not edited: ${path} is outside the session's directories`);
      return;
    }
    // Read the current text first, so the tool call (and the permission request) can show the diff.
    let oldText: string | null;
    try {
      oldText = await readText(path);
    } catch (error) {
      if (error instanceof TurnCancelled) throw error;
      if (!isNotFound(error)) {
        await emit({ sessionUpdate: "tool_call", toolCallId, title, kind: "edit", status: "pending", locations: [{ path }], rawInput });
        await failed(toolCallId, `not edited: ${errorMessage(error)}`);
        return;
      }
      oldText = null;
    }
    const newText = appendLine(oldText, text);
    const content: ToolCallContent[] = [{ type: "diff", path, oldText, newText }];
    const locations: ToolCallLocation[] = [{ path, line: newText.split("\n").length - 1 }];
    const call: ToolCall = { toolCallId, title, kind: "edit", status: "pending", content, locations, rawInput };
    await emit({ sessionUpdate: "tool_call", ...call });
    const outcome = await askPermission(call);
    if (outcome !== "allowed") return notRun(toolCallId, outcome);
    await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
    return interruptible(toolCallId, async () => {
      try {
        await writeText(path, newText);
      } catch (error) {
        if (error instanceof TurnCancelled) throw error;
        await failed(toolCallId, `not edited: ${errorMessage(error)}`);
        return;
      }
      await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "completed", content, locations });
    });
  }

  async function runCommand(command: string, args: string[]): Promise<StopReason | undefined> {
    const toolCallId = session.nextToolCallId();
    const { cwd } = session.setup;
    const call: ToolCall = {
      toolCallId,
      title: `Run ${[command, ...args].join(" ")}`,
      kind: "execute",
      status: "pending",
      rawInput: { command, args, cwd },
    };
    await emit({ sessionUpdate: "tool_call", ...call });
    if (io.clientCapabilities().terminal !== true) {
      await failed(toolCallId, "not run: the client offers no terminal (clientCapabilities.terminal)");
      return;
    }
    const outcome = await askPermission(call);
    if (outcome !== "allowed") return notRun(toolCallId, outcome);
    let terminalId: string;
    try {
      ({ terminalId } = await clientRequest<{ terminalId: string }>("terminal/create", {
        sessionId: session.id,
        command,
        args,
        cwd,
        outputByteLimit: TERMINAL_OUTPUT_LIMIT,
      }));
    } catch (error) {
      if (error instanceof TurnCancelled) {
        await failed(toolCallId, "cancelled before the terminal started");
        return "cancelled";
      }
      await failed(toolCallId, `not run: ${errorMessage(error)}`);
      return;
    }
    const ids = { sessionId: session.id, terminalId };
    const terminal: ToolCallContent = { type: "terminal", terminalId };
    let released = false;
    try {
      await emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress", content: [terminal] });
      const exit = await clientRequest<{ exitCode?: number | null; signal?: string | null }>("terminal/wait_for_exit", ids);
      const output = await clientRequest<{ output: string; truncated: boolean }>("terminal/output", ids);
      released = true;
      await clientRequest("terminal/release", ids);
      const ok = exit.exitCode === 0;
      await emit({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: ok ? "completed" : "failed",
        content: [terminal, ...textContent(output.output)],
        rawOutput: { exitCode: exit.exitCode ?? null, signal: exit.signal ?? null, output: output.output, truncated: output.truncated },
      });
    } catch (error) {
      // Whatever happened, the terminal is released (the client keeps showing its output).
      if (error instanceof TurnCancelled) {
        if (!released) {
          void io.request("terminal/kill", ids).catch(() => {});
          void io.request("terminal/release", ids).catch(() => {});
        }
        await failed(toolCallId, "cancelled: terminal killed");
        return "cancelled";
      }
      if (!released) void io.request("terminal/release", ids).catch(() => {});
      await failed(toolCallId, `failed: ${errorMessage(error)}`);
    }
  }

  /** Runs a tool's work; if the turn is cancelled meanwhile, closes the tool call as failed and ends the turn. */
  async function interruptible(toolCallId: string, work: () => Promise<void>): Promise<StopReason | undefined> {
    try {
      await work();
    } catch (error) {
      if (!(error instanceof TurnCancelled)) throw error;
      await failed(toolCallId, "cancelled");
      return "cancelled";
    }
  }

  /** A request to the client that the turn's cancellation withdraws (`$/cancel_request`) and stops waiting for. */
  function clientRequest<T>(method: string, params: unknown): Promise<T> {
    return abortable(io.request<T>(method, params, signal));
  }

  /** A file's text: through `fs/read_text_file` if the client offers it, else from disk. */
  async function readText(path: string): Promise<string> {
    if (io.clientCapabilities().fs?.readTextFile === true) {
      const { content } = await clientRequest<{ content: string }>("fs/read_text_file", { sessionId: session.id, path });
      return content;
    }
    const info = await abortable(stat(path));
    if (info.size > MAX_FILE_BYTES) throw new Error(`${path} is larger than ${MAX_FILE_BYTES} bytes`);
    return abortable(readFile(path, "utf8"));
  }

  /** Writes a file: through `fs/write_text_file` if the client offers it, else to disk. */
  async function writeText(path: string, content: string): Promise<void> {
    if (io.clientCapabilities().fs?.writeTextFile === true) {
      await clientRequest("fs/write_text_file", { sessionId: session.id, path, content });
      return;
    }
    await writeFile(path, content);
  }

  function resolvePath(pathArg: string): string {
    return isAbsolute(pathArg) ? normalize(pathArg) : resolve(session.setup.cwd, pathArg);
  }

  /** Whether `path` is inside the session's cwd or one of its additional directories. */
  function insideSession(path: string): boolean {
    const { cwd, additionalDirectories } = session.setup;
    return [cwd, ...additionalDirectories].some((root) => {
      const rel = relative(root, path);
      return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
    });
  }

  function describeSession(): string[] {
    const { cwd, mcpServers, additionalDirectories } = session.setup;
    const servers = mcpServers.map((s) => `${s.name} (${"type" in s ? s.type : "stdio"})`);
    return [
      `session ${session.id}`,
      `cwd ${cwd}`,
      `additionalDirectories ${additionalDirectories.length ? additionalDirectories.join(", ") : "(none)"}`,
      `mcpServers ${servers.length ? servers.join(", ") : "(none)"}`,
      `mode ${session.mode}`,
      `config verbosity=${String(session.config("verbosity"))} tool_calls_enabled=${String(session.config("tool_calls_enabled"))}`,
      `title ${session.title ?? "(none)"}`,
      ...io.describeConnection(),
    ];
  }

  /** Races `promise` against the turn's signal. */
  function abortable<T>(promise: Promise<T>): Promise<T> {
    if (signal.aborted) {
      promise.catch(() => {});
      return Promise.reject(new TurnCancelled());
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(new TurnCancelled());
      signal.addEventListener("abort", onAbort, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      );
    });
  }

  function untilAborted(): Promise<never> {
    return abortable(new Promise<never>(() => {}));
  }

  async function sleep(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await abortable(new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))));
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The command line of a tool step, for the "tool calls disabled" message. */
function describeToolStep(step: Step): string {
  switch (step.kind) {
    case "tool":
    case "permission":
      return `${step.kind} ${step.title}`;
    case "read":
      return `read ${step.path}`;
    case "edit":
      return `edit ${step.path} ${step.text}`;
    case "run":
      return `run ${[step.command, ...step.args].join(" ")}`;
    case "mcp-call":
      return `use tool ${step.server}::${step.tool} ${JSON.stringify(step.arguments)}`;
    case "mcp-list":
      return `list tools ${step.server}`;
    default:
      return step.kind;
  }
}

/** The text of an MCP result's content: text blocks as they are, other blocks described on a line. */
export function mcpText(content: CallToolResult["content"] | undefined): string {
  return (content ?? [])
    .map((block) => {
      switch (block.type) {
        case "text":
          return block.text;
        case "resource":
          return "text" in block.resource ? block.resource.text : `[resource uri=${block.resource.uri}]`;
        case "resource_link":
          return `[resource_link uri=${block.uri}]`;
        case "image":
        case "audio":
          return `[${block.type} mimeType=${block.mimeType}]`;
        default:
          return JSON.stringify(block);
      }
    })
    .join("\n");
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A missing file: ENOENT from disk, or -32002 (resource not found) from the client. */
function isNotFound(error: unknown): boolean {
  if (error instanceof RequestError) return error.code === -32002;
  return (error as NodeJS.ErrnoException)?.code === "ENOENT";
}
