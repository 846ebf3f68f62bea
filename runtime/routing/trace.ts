/**
 * `--trace <file>`: every message at every hop, as newline-delimited JSON in the event shape the
 * Rust reference conductor writes (`request` / `response` / `notification` / `trace`, with `ts`
 * in seconds since the trace started), so its sequence-diagram viewer reads Cordon's traces.
 *
 * The trace is idealised the same way: `proxy/successor` envelopes are not shown — a message a
 * proxy forwards to its successor appears as the inner method going from `proxy:i` to
 * `proxy:i+1` (or `agent`). Ids are those of the hop the message travelled on, so each request
 * pairs with its response. A message that skipped proxies (they do not watch it, or were bypassed)
 * names them in `past`, Cordon's one addition to the format. Writes are buffered by the stream and
 * never block routing.
 *
 * A trace holds whole conversations and the MCP bridge's secrets, so the file is private: created
 * 0600 (an existing one is truncated and set to 0600), never written through a symbolic link
 * another user owns (one planted at the path in a shared directory), and never into a file another
 * user owns. When the file cannot be opened safely, Cordon says why and runs without a trace.
 */
import {
  closeSync,
  constants,
  createWriteStream,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  type WriteStream,
} from "node:fs";
import { dirname, resolve } from "node:path";
import { sanitizeForLog } from "../log.js";
import type { JsonRpcId } from "../protocol/json-rpc.js";

/** `past` (Cordon's addition): the proxies between `from` and `to` that the message was routed past, unseen. */
export type TraceEvent =
  | {
      type: "request";
      protocol: "acp";
      from: string;
      to: string;
      id: JsonRpcId;
      method: string;
      session: string | null;
      params: unknown;
      past?: string[];
    }
  | { type: "response"; from: string; to: string; id: JsonRpcId; is_error: boolean; payload: unknown; past?: string[] }
  | {
      type: "notification";
      protocol: "acp";
      from: string;
      to: string;
      method: string;
      session: string | null;
      params: unknown;
      past?: string[];
    }
  /** A component's log line, or (with `dropped`) a message Cordon dropped or refused, and why. */
  | { type: "trace"; component: string; level: string; message: string; dropped?: unknown };

export type Tracer = (event: TraceEvent) => void;

export class TraceFile {
  private readonly stream: WriteStream | null = null;
  private readonly start = performance.now();

  constructor(path: string) {
    const warn = (message: string) =>
      process.stderr.write(`[cordon] warn: cannot write trace ${sanitizeForLog(path, 1024)}: ${sanitizeForLog(message)}\n`);
    let fd: number;
    try {
      fd = openTraceFile(path);
    } catch (error) {
      warn((error as Error).message);
      return;
    }
    this.stream = createWriteStream("", { fd });
    this.stream.on("error", (error) => warn(error.message));
  }

  readonly write: Tracer = (event) => {
    if (!this.stream) return;
    const ts = (performance.now() - this.start) / 1000;
    this.stream.write(JSON.stringify({ ts, ...event }) + "\n");
  };

  close(): Promise<void> {
    const stream = this.stream;
    return stream ? new Promise((resolve) => stream.end(resolve)) : Promise.resolve();
  }
}

/**
 * Opens `path` for a trace (write-only, from empty, mode 0600) and returns the descriptor.
 *
 * - A symbolic link at `path` is followed only when it belongs to `uid` or to root (the rule of
 *   Linux's `fs.protected_symlinks`, applied everywhere): one planted by another user is refused,
 *   while `--trace /dev/stderr` or a link of one's own still work. The target is then opened with
 *   `O_NOFOLLOW`, so the final component cannot be swapped for a link in between.
 * - A regular file is created 0600; an existing one must belong to `uid`, and is truncated and set
 *   to 0600 only after that check (an existing file's mode is not changed by `open`).
 * - Anything else (a device such as `/dev/null`, a FIFO) is written as it is.
 *
 * `uid` is the owner the file must have (the process's; a parameter for tests). Throws with the
 * reason when the path is refused.
 */
export function openTraceFile(path: string, uid: number | undefined = process.getuid?.()): number {
  let target = path;
  const link = lstatSync(path, { throwIfNoEntry: false });
  if (link?.isSymbolicLink()) {
    if (uid !== undefined && link.uid !== uid && link.uid !== 0) {
      throw new Error(`it is a symbolic link owned by another user (uid ${link.uid}); refusing to follow it`);
    }
    try {
      target = realpathSync(path);
    } catch {
      target = resolve(dirname(path), readlinkSync(path)); // a link of one's own to a file not made yet
    }
  }
  const fd = openSync(target, constants.O_WRONLY | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    const stat = fstatSync(fd);
    if (stat.isFile()) {
      if (uid !== undefined && stat.uid !== uid)
        throw new Error(`the file belongs to another user (uid ${stat.uid}); refusing to write a trace into it`);
      fchmodSync(fd, 0o600);
      ftruncateSync(fd, 0);
    }
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** The session a message belongs to, when its params say. */
export function sessionOf(params: unknown): string | null {
  if (typeof params !== "object" || params === null) return null;
  const id = (params as Record<string, unknown>).sessionId;
  return typeof id === "string" ? id : null;
}
