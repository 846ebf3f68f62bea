// arrow: prefixes ">" to the text of every `agent_message_chunk` the agent streams back — the
// reference conductor's canonical test proxy. A chain of N arrows gives N ">" per chunk.
// Everything else passes through unchanged.
import { Proxy, SessionUpdate, register } from "@cordon/sdk-as";

class Arrow extends Proxy {
  onSessionUpdate(update: SessionUpdate): void {
    if (update.kind == "agent_message_chunk" && update.isTextChunk) {
      update.text = ">" + update.text;
    }
    this.forward(update);
  }
}

register(new Arrow());
