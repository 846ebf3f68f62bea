/**
 * The client end of an in-process chain: a {@link Peer} the conductor talks to instead of stdio.
 * What the conductor sends the client is handed to `deliver` on a later microtask, in order (the
 * router is never re-entered from its own `send`); what the application sends enters the
 * conductor through {@link InMemoryClientPeer.write}. Both directions are copied through JSON,
 * so each side gets exactly what it would have read from a stdio line and neither can mutate the
 * other's objects.
 */
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import type { Peer, PeerSink } from "../routing/peer.js";

export class InMemoryClientPeer implements Peer {
  readonly label = "client";
  private sink: PeerSink | null = null;
  private ended = false;

  constructor(private readonly deliver: (message: JsonRpcMessage) => void) {}

  async open(sink: PeerSink): Promise<void> {
    this.sink = sink;
  }

  /** The conductor sends the client a message. */
  send(message: JsonRpcMessage): void {
    if (this.ended) return;
    const copy = JSON.parse(JSON.stringify(message)) as JsonRpcMessage;
    queueMicrotask(() => this.deliver(copy));
  }

  /** The application sends the chain a message. Returns false once the link is closed. */
  write(message: JsonRpcMessage): boolean {
    if (this.ended || !this.sink) return false;
    this.sink.message(JSON.parse(JSON.stringify(message)));
    return true;
  }

  /** The application's readers fell behind (true) or caught up (false): the conductor pauses the chain's other inputs meanwhile. */
  congested(congested: boolean): void {
    if (!this.ended) this.sink?.congested?.(congested);
  }

  /** The application is done: the conductor sees the client close, as when an editor closes stdin. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.sink?.closed("closed the connection");
  }

  async close(): Promise<void> {}
}
