/** The client end: the conductor's own stdin and stdout, as an editor spawns an agent. */
import type { Readable, Writable } from "node:stream";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { NdjsonChannel } from "../protocol/ndjson-channel.js";
import type { Peer, PeerSink } from "../routing/peer.js";

export class StdioClient implements Peer {
  readonly label = "client";
  private channel: NdjsonChannel | null = null;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
  ) {}

  async open(sink: PeerSink): Promise<void> {
    this.channel = new NdjsonChannel(this.input, this.output, {
      message: (value) => sink.message(value),
      malformed: (detail) => sink.malformed(detail),
      end: (error) => sink.closed(error ? `input failed: ${error.message}` : "closed its input"),
    });
  }

  send(message: JsonRpcMessage): void {
    this.channel?.write(message);
  }

  pauseInput(): void {
    this.channel?.pause();
  }

  resumeInput(): void {
    this.channel?.resume();
  }

  /** Resolves when everything sent so far has reached the OS (call before exiting). */
  flush(): Promise<void> {
    return this.channel?.flush() ?? Promise.resolve();
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
