/**
 * Splits a byte stream into newline-delimited lines (the ACP stdio framing).
 *
 * Chunks are kept as-is until a newline arrives, so a long line costs one concat at the end,
 * not one per chunk. A trailing `\r` is stripped. A line longer than `maxLineBytes` is not
 * buffered without bound: its bytes are dropped as they arrive and it is reported once, as an
 * `oversized` entry, when its newline comes — the stream stays in sync for the next line.
 *
 * Invariant: `push` returns complete lines in arrival order; bytes after the last newline stay
 * buffered (at most `maxLineBytes` of them) until more data or `end()`.
 */
export type Line = { kind: "line"; text: string } | { kind: "oversized"; bytes: number };

export class LineBuffer {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private dropping = 0;

  constructor(private readonly maxLineBytes = 64 * 1024 * 1024) {}

  push(chunk: Buffer): Line[] {
    const out: Line[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      this.append(chunk.subarray(start, nl));
      out.push(this.take());
      start = nl + 1;
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
    return out;
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
    const buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
    this.chunks = [];
    this.buffered = 0;
    let end = buf.length;
    if (end > 0 && buf[end - 1] === 0x0d) end--;
    return { kind: "line", text: buf.toString("utf8", 0, end) };
  }
}
