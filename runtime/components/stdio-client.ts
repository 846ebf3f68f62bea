/** The client end: the conductor's own stdin and stdout, as an editor spawns an agent. */
import type { Readable, Writable } from "node:stream";
import { NdjsonChannel } from "../protocol/ndjson-channel.js";
import type { Peer, PeerSink } from "../routing/peer.js";
import { ChannelPeer } from "./channel-peer.js";

export class StdioClientPeer extends ChannelPeer implements Peer {
  readonly label = "client";

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
  ) {
    super();
  }

  async open(sink: PeerSink): Promise<void> {
    this.channel = new NdjsonChannel(this.input, this.output, {
      message: (value) => sink.message(value),
      malformed: (detail) => sink.malformed(detail),
      end: (error) => sink.closed(error ? `input failed: ${error.message}` : "closed its input"),
      congested: (congested) => sink.congested?.(congested),
    });
  }

  /** Resolves when everything sent so far has reached the OS (call before exiting). */
  flush(): Promise<void> {
    return this.channel?.flush() ?? Promise.resolve();
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
