/**
 * The file tools: `read <path>` and `edit <path> <text>` (append a line).
 *
 * Paths are resolved against the session's `cwd` and must lie inside it or one of its
 * `additionalDirectories` (checked lexically, before anything is read: a symlink inside that points
 * outside is followed). Files go only through the client (`fs/read_text_file`, `fs/write_text_file`),
 * and only when it advertised `clientCapabilities.fs.readTextFile` / `writeTextFile`; without that the
 * tool fails with an error saying so. The agent never touches the local disk for a file tool: a client
 * that lends no fs has not agreed to have its files read or written, and a proxy that opens its own
 * session must not be able to read the machine through the agent (issue 17). Reading asks no
 * permission (no side effect); an edit needs both methods (the diff shows the old text), is shown as a
 * diff and written only when the client allows it.
 */
import { isAbsolute, normalize, relative, resolve } from "node:path";
import {
  methods,
  RequestError,
  type StopReason,
  type ToolCall,
  type ToolCallContent,
  type ToolCallLocation,
} from "@agentclientprotocol/sdk/unstable";
import { askPermission, notRun } from "../permission.js";
import { errorMessage, TurnCancelled, type TurnContext, textContent } from "../turn-context.js";

/** The code of the SDK's "Resource not found" error (what a client answers for a missing file). */
const RESOURCE_NOT_FOUND = RequestError.resourceNotFound().code;

/** The file content after `edit` appends the line `text` (a missing file counts as empty). */
export function appendLine(oldText: string | null, text: string): string {
  const before = oldText ?? "";
  return `${before}${before === "" || before.endsWith("\n") ? "" : "\n"}${text}\n`;
}

/** `read <path>`: a `read` tool call whose content is the file's text. */
export async function runRead(turn: TurnContext, pathArg: string): Promise<StopReason | undefined> {
  const toolCallId = turn.session.nextToolCallId();
  const path = resolvePath(turn, pathArg);
  const locations: ToolCallLocation[] = [{ path }];
  await turn.emit({
    sessionUpdate: "tool_call",
    toolCallId,
    title: `Read ${pathArg}`,
    kind: "read",
    status: "pending",
    locations,
    rawInput: { path },
  });
  if (!insideSession(turn, path)) {
    await turn.failed(toolCallId, `not read: ${path} is outside the session's directories`);
    return;
  }
  await turn.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  return turn.interruptible(toolCallId, async () => {
    let text: string;
    try {
      text = await readText(turn, path);
    } catch (error) {
      if (error instanceof TurnCancelled) throw error;
      await turn.failed(toolCallId, `not read: ${errorMessage(error)}`);
      return;
    }
    await turn.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "completed", content: textContent(text), locations });
  });
}

/** `edit <path> <text>`: an `edit` tool call with a diff appending the line, written after permission. */
export async function runEdit(turn: TurnContext, pathArg: string, text: string): Promise<StopReason | undefined> {
  const toolCallId = turn.session.nextToolCallId();
  const path = resolvePath(turn, pathArg);
  const title = `Edit ${pathArg}`;
  const rawInput = { path, append: text };
  if (!insideSession(turn, path)) {
    await turn.emit({ sessionUpdate: "tool_call", toolCallId, title, kind: "edit", status: "pending", locations: [{ path }], rawInput });
    await turn.failed(toolCallId, `not edited: ${path} is outside the session's directories`);
    return;
  }
  const missing = missingFs(turn, "writeTextFile") ?? missingFs(turn, "readTextFile");
  if (missing) {
    await turn.emit({ sessionUpdate: "tool_call", toolCallId, title, kind: "edit", status: "pending", locations: [{ path }], rawInput });
    await turn.failed(toolCallId, `not edited: ${missing}`);
    return;
  }
  // Read the current text first, so the tool call (and the permission request) can show the diff.
  let oldText: string | null;
  try {
    oldText = await readText(turn, path);
  } catch (error) {
    if (error instanceof TurnCancelled) throw error;
    if (!isNotFound(error)) {
      await turn.emit({ sessionUpdate: "tool_call", toolCallId, title, kind: "edit", status: "pending", locations: [{ path }], rawInput });
      await turn.failed(toolCallId, `not edited: ${errorMessage(error)}`);
      return;
    }
    oldText = null;
  }
  const newText = appendLine(oldText, text);
  const content: ToolCallContent[] = [{ type: "diff", path, oldText, newText }];
  const locations: ToolCallLocation[] = [{ path, line: newText.split("\n").length - 1 }];
  const call: ToolCall = { toolCallId, title, kind: "edit", status: "pending", content, locations, rawInput };
  await turn.emit({ sessionUpdate: "tool_call", ...call });
  const outcome = await askPermission(turn, call);
  if (outcome !== "allowed") return notRun(turn, toolCallId, outcome);
  await turn.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  return turn.interruptible(toolCallId, async () => {
    try {
      await writeText(turn, path, newText);
    } catch (error) {
      if (error instanceof TurnCancelled) throw error;
      await turn.failed(toolCallId, `not edited: ${errorMessage(error)}`);
      return;
    }
    await turn.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "completed", content, locations });
  });
}

/** Why the client cannot serve `capability`, or null when it advertised it. */
function missingFs(turn: TurnContext, capability: "readTextFile" | "writeTextFile"): string | null {
  if (turn.io.clientCapabilities().fs?.[capability] === true) return null;
  return `the client offers no fs.${capability} (clientCapabilities.fs.${capability}); this agent reads and writes files only through the client, never the local disk`;
}

/** A file's text, through `fs/read_text_file`; an error when the client does not offer it. */
async function readText(turn: TurnContext, path: string): Promise<string> {
  const missing = missingFs(turn, "readTextFile");
  if (missing) throw new Error(missing);
  const { content } = await turn.clientRequest(methods.client.fs.readTextFile, { sessionId: turn.session.id, path });
  return content;
}

/** Writes a file through `fs/write_text_file` (the caller checked that the client offers it). */
async function writeText(turn: TurnContext, path: string, content: string): Promise<void> {
  await turn.clientRequest(methods.client.fs.writeTextFile, { sessionId: turn.session.id, path, content });
}

function resolvePath(turn: TurnContext, pathArg: string): string {
  return isAbsolute(pathArg) ? normalize(pathArg) : resolve(turn.session.setup.cwd, pathArg);
}

/** Whether `path` is inside the session's cwd or one of its additional directories. */
function insideSession(turn: TurnContext, path: string): boolean {
  const { cwd, additionalDirectories } = turn.session.setup;
  return [cwd, ...additionalDirectories].some((root) => {
    const rel = relative(root, path);
    return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
  });
}

/** A missing file: "Resource not found" from the client. */
function isNotFound(error: unknown): boolean {
  return error instanceof RequestError && error.code === RESOURCE_NOT_FOUND;
}
