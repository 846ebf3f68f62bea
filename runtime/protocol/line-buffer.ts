/**
 * Splits a byte stream into newline-delimited lines (the ACP stdio framing).
 *
 * Chunks are kept as-is until a newline arrives, so a long line costs one concat at the end,
 * not one per chunk. A trailing `\r` is stripped. A line longer than `maxLineBytes` is not
 * buffered without bound: its bytes are dropped as they arrive and it is reported once, as an
 * `oversized` entry, when its newline comes — the stream stays in sync for the next line.
 *
 * The complete lines of a chunk are decoded in one call, up to its last newline, and cut from
 * that text: a UTF-8 decode per line cost 0.19 µs a line against 0.05 (400 streamed updates per
 * 64 KB read, measured). A newline byte is never part of a multi-byte sequence, so the text is
 * what decoding line by line gives. A line cut from it is a view that keeps the chunk's text
 * (≤ one read, 64 KB) alive as long as it lives; routed messages live for one routing step.
 *
 * A line that spans chunks is copied into one buffer kept for the next such line, not into a new
 * one each time (`assemble`): a `Buffer`'s bytes lie outside V8's heap, and V8 counts such memory
 * allocated since its last major GC toward the old generation's limit. A 100 KB prompt made a
 * 175 KB `Buffer.concat` per line, and once the heap had settled V8 started a major GC every ~60
 * prompts (30 against 3 in 3,000 prompts through `context.wasm`, issue 20's P3; measured). The
 * reused buffer holds at most `REUSED_UP_TO` bytes for as long as the stream lives; a longer line
 * gets a buffer of its own, as before.
 *
 * Invariant: `push` returns complete lines in arrival order; bytes after the last newline stay
 * buffered (at most `maxLineBytes` of them) until more data or `end()`. No line's text shares
 * memory with the reused buffer: decoding copies.
 */
export type Line = { kind: "line"; text: string } | { kind: "oversized"; bytes: number };

/** Longest line assembled in the reused buffer (`assemble`); the buffer never grows past it. */
const REUSED_UP_TO = 1024 * 1024;
/** The reused buffer's first size: room for a 100 KB prompt's line, which is larger than one read. */
const FIRST_SIZE = 256 * 1024;

export class LineBuffer {
  private chunks: Buffer[] = [];
  /** Where a line spanning chunks is put together (`assemble`); made by the first such line. */
  private reused: Buffer | null = null;
  private buffered = 0;
  private dropping = 0;

  constructor(private readonly maxLineBytes = 64 * 1024 * 1024) {}

  push(chunk: Buffer): Line[] {
    const out: Line[] = [];
    let start = 0;
    if (this.buffered > 0 || this.dropping > 0) {
      // The line begun in an earlier chunk ends at this one's first newline.
      const nl = chunk.indexOf(0x0a);
      if (nl === -1) {
        this.append(chunk);
        return out;
      }
      this.append(chunk.subarray(0, nl));
      out.push(this.take());
      start = nl + 1;
    }
    const last = chunk.lastIndexOf(0x0a);
    if (last >= start) {
      if (last - start <= this.maxLineBytes) cut(chunk.toString("utf8", start, last), out);
      else this.oneByOne(chunk, start, out); // a line in there may be over the limit: measured line by line
      start = last + 1;
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
    return out;
  }

  private oneByOne(chunk: Buffer, start: number, out: Line[]): void {
    for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      this.append(chunk.subarray(start, nl));
      out.push(this.take());
      start = nl + 1;
    }
  }

  /** The unterminated last line, if any (called at end of stream). */
  end(): Line[] {
    if (this.buffered === 0 && this.dropping === 0) return [];
    return [this.take()];
  }

  private append(part: Buffer): void {
    if (part.length === 0) return;
    if (this.dropping > 0 || this.buffered + part.length > this.maxLineBytes) {
      this.dropping += this.buffered + part.length;
      this.chunks = [];
      this.buffered = 0;
      return;
    }
    this.chunks.push(part);
    this.buffered += part.length;
  }

  private take(): Line {
    if (this.dropping > 0) {
      const bytes = this.dropping;
      this.dropping = 0;
      return { kind: "oversized", bytes };
    }
    const buf = this.chunks.length === 1 ? this.chunks[0] : this.assemble();
    this.chunks = [];
    this.buffered = 0;
    let end = buf.length;
    if (end > 0 && buf[end - 1] === 0x0d) end--;
    return { kind: "line", text: buf.toString("utf8", 0, end) };
  }

  /** The buffered chunks as one run of bytes, in the reused buffer when the line fits it (a view, valid until the next line). */
  private assemble(): Buffer {
    const n = this.buffered;
    if (n > REUSED_UP_TO) return Buffer.concat(this.chunks, n);
    let reused = this.reused;
    if (reused === null || reused.length < n) {
      const size = Math.min(REUSED_UP_TO, Math.max(n, FIRST_SIZE, 2 * (reused?.length ?? 0)));
      reused = this.reused = Buffer.allocUnsafeSlow(size);
    }
    let at = 0;
    for (const chunk of this.chunks) at += chunk.copy(reused, at);
    return reused.subarray(0, n);
  }
}

/** The lines of `text` (complete lines without their final newline) into `out`, each without a trailing `\r`. */
function cut(text: string, out: Line[]): void {
  let from = 0;
  for (;;) {
    const nl = text.indexOf("\n", from);
    let end = nl === -1 ? text.length : nl;
    if (end > from && text.charCodeAt(end - 1) === 0x0d) end--;
    out.push({ kind: "line", text: text.slice(from, end) });
    if (nl === -1) return;
    from = nl + 1;
  }
}
