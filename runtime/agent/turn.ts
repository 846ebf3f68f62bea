/**
 * Runs one prompt turn of the reference agent: executes the parsed {@link Step}s in order, emitting
 * `session/update`s and making requests of the client (`session/request_permission`, `fs/*`,
 * `terminal/*`) through the given {@link TurnIO}. The steps that only talk are here; each tool family
 * has its module (`tools/simulated.ts`, `tools/fs.ts`, `tools/terminal.ts`, `tools/mcp.ts`), all built
 * on the {@link TurnContext} (`turn-context.ts`).
 *
 * Cancellation: the turn's signal is checked before every step and interrupts `wait`, `sleep` and any
 * pending request to the client (fs and terminal requests are also withdrawn with `$/cancel_request`);
 * once it is aborted no further step runs and the turn ends with `stopReason: "cancelled"` (never an
 * error). A tool call interrupted that way is closed with a `failed` update first.
 */
import { RequestError, type StopReason } from "@agentclientprotocol/sdk/unstable";
import { fakeSecret, helpText, type Step } from "./commands.js";
import type { AgentSession } from "./session.js";
import { runEdit, runRead } from "./tools/fs.js";
import { runMcp } from "./tools/mcp.js";
import { runMcpCatalog } from "./tools/mcp-catalog.js";
import { runPermission, runTool } from "./tools/simulated.js";
import { runCommand } from "./tools/terminal.js";
import { messageChunk, TurnCancelled, TurnContext, type TurnIO, thoughtChunk } from "./turn-context.js";

/**
 * The code of the SDK's "Internal error". `error <message>` answers with exactly `<message>`, so only
 * the code is taken from {@link RequestError.internalError} (whose message has an `Internal error: ` prefix).
 */
const INTERNAL_ERROR = RequestError.internalError().code;

export async function runTurn(session: AgentSession, steps: readonly Step[], signal: AbortSignal, io: TurnIO): Promise<StopReason> {
  const turn = new TurnContext(session, signal, io);
  try {
    for (const step of steps) {
      if (signal.aborted) return "cancelled";
      const stop = await runStep(turn, step);
      if (stop) return stop;
    }
    return signal.aborted ? "cancelled" : "end_turn";
  } catch (error) {
    if (error instanceof TurnCancelled) return "cancelled";
    throw error;
  }
}

async function runStep(turn: TurnContext, step: Step): Promise<StopReason | undefined> {
  const { session } = turn;
  switch (step.kind) {
    case "echo":
      await turn.emit(messageChunk(`echo: ${step.text}`));
      return;
    case "usage":
      await turn.emit(messageChunk(step.text));
      return;
    case "think":
      await turn.emit(thoughtChunk(step.text));
      return;
    case "secret":
      await turn.emit(messageChunk(`here is a fake ${step.flavour} API key: ${fakeSecret(step.flavour)}`));
      return;
    case "help":
      await turn.emit(messageChunk(helpText()));
      return;
    case "info":
      await turn.emit(messageChunk(describeSession(turn).join("\n")));
      return;
    case "block":
      await turn.emit({ sessionUpdate: "agent_message_chunk", content: step.block });
      return;
    case "title":
      session.setTitle(step.title);
      await turn.emit({ sessionUpdate: "session_info_update", title: step.title, updatedAt: session.updatedAt });
      return;
    case "mirror":
      return;
    case "wait":
      await turn.emit(messageChunk("waiting for session/cancel"));
      await turn.untilAborted();
      return "cancelled";
    case "sleep":
      await turn.sleep(step.ms);
      return;
    case "stop":
      return step.reason;
    case "error":
      throw new RequestError(INTERNAL_ERROR, step.message, { command: "error" });
  }
  // The tool commands.
  if (session.config("tool_calls_enabled") === false) {
    await turn.emit(messageChunk(`not run (tool_calls_enabled is off): ${describeToolStep(step)}`));
    return;
  }
  switch (step.kind) {
    case "tool":
      await runTool(turn, step.title);
      return;
    case "permission":
      return runPermission(turn, step.title);
    case "read":
      return runRead(turn, step.path);
    case "edit":
      return runEdit(turn, step.path, step.text);
    case "run":
      return runCommand(turn, step.command, step.args);
    case "mcp-call":
    case "mcp-list":
      return runMcp(turn, step);
    case "mcp-catalog":
    case "mcp-read":
    case "mcp-prompt":
      return runMcpCatalog(turn, step);
  }
}

/** What `info` prints: the session as the agent sees it, then the connection. */
function describeSession(turn: TurnContext): string[] {
  const { session } = turn;
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
    ...turn.io.describeConnection(),
  ];
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
    case "mcp-catalog":
      return `${step.what} ${step.server}`;
    case "mcp-read":
      return `resource ${step.server} ${step.uri}`;
    case "mcp-prompt":
      return `prompt ${step.server}::${step.name} ${JSON.stringify(step.arguments)}`;
    default:
      return step.kind;
  }
}
