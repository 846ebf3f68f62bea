/**
 * `--trace <file>`: every message at every hop, as newline-delimited JSON in the event shape the
 * Rust reference conductor writes (`request` / `response` / `notification` / `trace`, with `ts`
 * in seconds since the trace started), so its sequence-diagram viewer reads Cordon's traces.
 *
 * The trace is idealised the same way: `proxy/successor` envelopes are not shown — a message a
 * proxy forwards to its successor appears as the inner method going from `proxy:i` to
 * `proxy:i+1` (or `agent`). Ids are those of the hop the message travelled on, so each request
 * pairs with its response. Writes are buffered by the stream and never block routing.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import type { JsonRpcId } from "../protocol/json-rpc.js";

export type TraceEvent =
  | { type: "request"; protocol: "acp"; from: string; to: string; id: JsonRpcId; method: string; session: string | null; params: unknown }
  | { type: "response"; from: string; to: string; id: JsonRpcId; is_error: boolean; payload: unknown }
  | { type: "notification"; protocol: "acp"; from: string; to: string; method: string; session: string | null; params: unknown }
  | { type: "trace"; component: string; level: string; message: string };

export type Tracer = (event: TraceEvent) => void;

export class TraceFile {
  private readonly stream: WriteStream;
  private readonly start = performance.now();

  constructor(path: string) {
    this.stream = createWriteStream(path, { flags: "w" });
    this.stream.on("error", (error) => process.stderr.write(`[cordon] warn: cannot write trace ${path}: ${error.message}\n`));
  }

  readonly write: Tracer = (event) => {
    const ts = (performance.now() - this.start) / 1000;
    this.stream.write(JSON.stringify({ ts, ...event }) + "\n");
  };

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }
}

/** The session a message belongs to, when its params say. */
export function sessionOf(params: unknown): string | null {
  if (typeof params !== "object" || params === null) return null;
  const id = (params as Record<string, unknown>).sessionId;
  return typeof id === "string" ? id : null;
}
