/**
 * The file tools: `read <path>` and `edit <path> <text>` (append a line).
 *
 * Paths are resolved against the session's `cwd` and must lie inside it or one of its
 * `additionalDirectories` (checked lexically, before anything is read: a symlink inside that points
 * outside is followed). Files go through the client (`fs/read_text_file`, `fs/write_text_file`) when
 * it advertised `clientCapabilities.fs.readTextFile` / `writeTextFile`, else the local disk; from disk a
 * file is read whole, so at most {@link MAX_FILE_BYTES}. Reading asks no permission (no side effect);
 * an edit is shown as a diff and written only when the client allows it.
 */
import { readFile, stat, writeFile } from "node:fs/promises";
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

/** Longest file `read` and `edit` read from disk, in bytes. */
const MAX_FILE_BYTES = 1024 * 1024;

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

/** A file's text: through `fs/read_text_file` if the client offers it, else from disk. */
async function readText(turn: TurnContext, path: string): Promise<string> {
  if (turn.io.clientCapabilities().fs?.readTextFile === true) {
    const { content } = await turn.clientRequest(methods.client.fs.readTextFile, { sessionId: turn.session.id, path });
    return content;
  }
  const info = await turn.abortable(stat(path));
  if (info.size > MAX_FILE_BYTES) throw new Error(`${path} is larger than ${MAX_FILE_BYTES} bytes`);
  return turn.abortable(readFile(path, "utf8"));
}

/** Writes a file: through `fs/write_text_file` if the client offers it, else to disk. */
async function writeText(turn: TurnContext, path: string, content: string): Promise<void> {
  if (turn.io.clientCapabilities().fs?.writeTextFile === true) {
    await turn.clientRequest(methods.client.fs.writeTextFile, { sessionId: turn.session.id, path, content });
    return;
  }
  await writeFile(path, content);
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

/** A missing file: ENOENT from disk, or "Resource not found" from the client. */
function isNotFound(error: unknown): boolean {
  if (error instanceof RequestError) return error.code === RESOURCE_NOT_FOUND;
  return (error as NodeJS.ErrnoException)?.code === "ENOENT";
}
