import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { type Call, wrap } from "./envelope.js";
import type { Dialect } from "./hop.js";
import type { Peer } from "./peer.js";

/**
 * Proxy mode: the successor of our last proxy is reached through our parent. Calls toward it go
 * out wrapped in `proxy/successor`; answers to the parent's wrapped calls go out plain, as the RFD
 * says the answer to an enveloped request is the inner result.
 */
export class ParentSuccessorPeer implements Peer {
  readonly label = "parent conductor's successor";
  constructor(
    private readonly parent: Peer,
    private readonly dialect: () => Dialect,
  ) {}
  async open(): Promise<void> {}
  send(message: JsonRpcMessage): void {
    this.parent.send("method" in message ? wrap(message as Call, this.dialect()) : message);
  }
  async close(): Promise<void> {}
}
