/**
 * Newline-delimited JSON over a pair of byte streams: the ACP stdio transport.
 *
 * Reading parses each line (`parseLine`: `JSON.parse`'s value; nothing else — classification is
 * the router's job) and reports lines that are not JSON separately, so the side that owns the
 * connection decides whether to answer them (the client gets a -32700) or log them (a misbehaving
 * agent). Each parsed message keeps its line's text (`attachRaw`), and writing sends that text (with the
 * router's splices, see raw-json.ts) so peers get the bytes the sender wrote. A message without
 * text, or whose text spans lines (pretty-printed JSON from a guest), is written with
 * `JSON.stringify`, which escapes newlines inside strings: a message never breaks the framing.
 *
 * Writes are batched: the lines the router writes in one synchronous step are joined and handed to
 * the stream once, from a microtask (or at once past `BATCH_BYTES`), in order — one syscall per
 * burst instead of one per message. A long line is not joined: it goes with the batch before it as
 * chunks of one corked write, as the pieces its text was built from (`writeLong`). `flush` and
 * `closeOutput` write the batch first.
 *
 * Backpressure: writes are never refused (a message the router accepted is not dropped), but once
 * more than `OUTPUT_HIGH_WATER` bytes wait for a peer that is not reading, the channel reports
 * itself congested, and clear again when the OS has taken everything ('drain'). The router then
 * stops producing work for it, so the buffer stays near the mark instead of growing without bound.
 */
import type { Readable, Writable } from "node:stream";
import { LineBuffer } from "./line-buffer.js";
import { parseLine } from "./parse-line.js";
import { piecesOf, serialize } from "./raw-json.js";

export interface NdjsonHandlers {
  message(value: unknown): void;
  /** A line that is not JSON (or too long); `detail` says which, `line` is its text (absent for a line too long to keep). */
  malformed(detail: string, line?: string): void;
  /** The input ended (EOF or error). */
  end(error?: Error): void;
  /** The peer is not reading what is written to it (true), or has caught up (false). */
  congested?(congested: boolean): void;
}

/** Bytes queued for a peer that is not reading, above which the channel reports congestion. */
const OUTPUT_HIGH_WATER = 1024 * 1024;
/** Batched text above which it is written at once instead of at the end of the routing step. */
const BATCH_BYTES = 64 * 1024;
/** A line longer than this (UTF-16 units) is written as its own chunks (`writeLong`), not joined to the batch. */
const LONG_LINE = 16 * 1024;

export class NdjsonChannel {
  private readonly lines: LineBuffer;
  private ended = false;
  private writable = true;
  private congested = false;
  /** Lines written since the last hand-off to the stream (each ends with a newline). */
  private batch = "";
  private batchScheduled = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly handlers: NdjsonHandlers,
    maxLineBytes?: number,
  ) {
    this.lines = new LineBuffer(maxLineBytes);
    const deliver = (lines: ReturnType<LineBuffer["push"]>) => {
      for (const line of lines) {
        if (line.kind === "oversized") {
          handlers.malformed(`line of ${line.bytes} bytes exceeds the limit`);
          continue;
        }
        // Blank lines are skipped; a line that starts with `{` is not blank (the common case, no trim).
        if (line.text.charCodeAt(0) !== 0x7b && line.text.trim() === "") continue;
        let value: unknown;
        try {
          value = parseLine(line.text);
        } catch (error) {
          handlers.malformed(`${(error as Error).message} in ${preview(line.text)}`, line.text);
          continue;
        }
        handlers.message(value);
      }
    };
    input.on("data", (chunk: Buffer) => deliver(this.lines.push(chunk)));
    const finish = (error?: Error) => {
      if (this.ended) return;
      this.ended = true;
      deliver(this.lines.end());
      handlers.end(error);
    };
    input.on("end", () => finish());
    input.on("error", (error) => finish(error));
    input.on("close", () => finish());
    output.on("error", () => {
      this.writable = false; // EPIPE: the peer is gone; its exit is reported by whoever owns it
    });
  }

  write(message: object): void {
    if (!this.writable) return;
    // A long text built from pieces (raw-json.ts `piecesOf`) is written as them, never made whole.
    let text = serialize(message);
    const pieces = piecesOf(message, text);
    if (pieces !== undefined && !pieces.some((piece) => piece.includes("\n"))) return this.writeLong(pieces);
    // A text with a raw newline (pretty-printed by a guest) would break the framing: re-serialized.
    if (pieces !== undefined || text.includes("\n")) text = JSON.stringify(message);
    if (text.length > LONG_LINE) return this.writeLong([text]);
    this.batch += text + "\n";
    if (this.batch.length >= BATCH_BYTES) this.writeBatch();
    else if (!this.batchScheduled) {
      this.batchScheduled = true;
      queueMicrotask(this.writeBatch);
    }
  }

  /**
   * A long line, after the lines batched before it, handed to the stream as its own chunks: its
   * concatenation with the newline would have V8 flatten a copy of it (raw-json.ts `piecesOf`: a
   * 100 KB prompt cost 1.4 ms of CPU per write that way, 0.24 ms as pieces). Corked, so the stream
   * takes the batch, the pieces and the newline in one `writev`.
   */
  private writeLong(pieces: readonly string[]): void {
    this.output.cork();
    this.writeBatch();
    for (const piece of pieces) this.output.write(piece);
    this.output.write("\n");
    this.output.uncork();
    this.watchCongestion();
  }

  /** Hands the batched lines to the stream, and reports congestion once the peer stops taking them. */
  private readonly writeBatch = (): void => {
    this.batchScheduled = false;
    if (this.batch === "") return;
    const text = this.batch;
    this.batch = "";
    if (!this.writable) return;
    this.output.write(text);
    this.watchCongestion();
  };

  private watchCongestion(): void {
    if (!this.congested && this.output.writableLength > OUTPUT_HIGH_WATER) {
      this.congested = true;
      this.handlers.congested?.(true);
      this.output.once("drain", () => {
        this.congested = false;
        this.handlers.congested?.(false);
      });
    }
  }

  /** Resolves once everything written so far has been handed to the OS. */
  flush(): Promise<void> {
    this.writeBatch();
    if (!this.writable || this.output.writableLength === 0) return Promise.resolve();
    return new Promise((resolve) => this.output.write("", () => resolve()));
  }

  pause(): void {
    this.input.pause();
  }

  resume(): void {
    this.input.resume();
  }

  /** Stops writing and closes the output (the peer sees EOF). */
  closeOutput(): void {
    this.writeBatch();
    this.writable = false;
    this.output.end();
  }
}

function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
