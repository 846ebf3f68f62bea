/** What the peers that talk NDJSON over a pair of streams (the client, a child process) share. */
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import type { NdjsonChannel } from "../protocol/ndjson-channel.js";

export abstract class ChannelPeer {
  protected channel: NdjsonChannel | null = null;

  send(message: JsonRpcMessage): void {
    this.channel?.write(message);
  }

  pauseInput(): void {
    this.channel?.pause();
  }

  resumeInput(): void {
    this.channel?.resume();
  }
}
