/** Minimal NDJSON over a stream pair, for the benchmark's raw peers and client (no SDK, no validation). */
import type { Readable, Writable } from "node:stream";

/** Calls `onLine` for every line of `input` (without the newline). */
export function readLines(input: Readable, onLine: (line: string) => void): void {
  let rest = "";
  input.setEncoding("utf8");
  input.on("data", (chunk: string) => {
    let start = 0;
    let nl = chunk.indexOf("\n");
    if (nl === -1) {
      rest += chunk;
      return;
    }
    onLine(rest + chunk.slice(0, nl));
    rest = "";
    start = nl + 1;
    while ((nl = chunk.indexOf("\n", start)) !== -1) {
      if (nl > start) onLine(chunk.slice(start, nl));
      start = nl + 1;
    }
    rest = chunk.slice(start);
  });
}

/** Calls `onMessage` with every line of `input` that parses as JSON; other lines are skipped. */
export function readMessages(input: Readable, onMessage: (message: any) => void): void {
  readLines(input, (line) => {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    onMessage(message);
  });
}

/** Writes lines, batching what is written in one tick; `drained` resolves once the stream accepts more. */
export class LineWriter {
  private buffer: string[] = [];
  private scheduled = false;
  constructor(private readonly output: Writable) {}
  write(message: unknown): void {
    this.buffer.push(JSON.stringify(message));
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.flush());
    }
  }
  flush(): boolean {
    this.scheduled = false;
    if (this.buffer.length === 0) return true;
    const text = this.buffer.join("\n") + "\n";
    this.buffer = [];
    return this.output.write(text);
  }
  drained(): Promise<void> {
    return this.flush() ? Promise.resolve() : new Promise((resolve) => this.output.once("drain", () => resolve()));
  }
}
