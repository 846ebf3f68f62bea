/**
 * Prompts exactly as they arrived on the wire.
 *
 * The SDK hands request handlers schema-parsed params, and parsing drops fields the schema does not
 * know. The agent stores and replays prompts verbatim, so it taps the incoming stream: {@link
 * RawPrompts.wrap} remembers the raw `prompt` of every `session/prompt` request by request id, and the
 * handler {@link RawPrompts.take}s it back. Nothing is re-serialized: the tap only reads the message
 * objects the stream already decoded and passes them on unchanged.
 *
 * Invariants: an entry lives from the message's arrival until its handler takes it; entries whose
 * request never reached a handler (invalid params) are evicted oldest first beyond
 * {@link MAX_PENDING_PROMPTS}, so memory is bounded. A raw prompt is used only if it is an array of the
 * same length as the parsed one; otherwise the parsed prompt is.
 */
import { type AnyMessage, type ContentBlock, type JsonRpcId, methods, type Stream } from "@agentclientprotocol/sdk/unstable";

/** Raw prompts kept at most while waiting for their handler. */
export const MAX_PENDING_PROMPTS = 1000;

export class RawPrompts {
  private readonly pending = new Map<string | number, unknown>();

  /** `stream` with its incoming side tapped (the outgoing side is untouched). */
  wrap(stream: Stream): Stream {
    const pending = this.pending;
    return {
      writable: stream.writable,
      readable: stream.readable.pipeThrough(
        new TransformStream<AnyMessage, AnyMessage>({
          transform(message, controller) {
            const m = message as { method?: unknown; id?: unknown; params?: { prompt?: unknown } };
            if (m.method === methods.agent.session.prompt && (typeof m.id === "string" || typeof m.id === "number")) {
              pending.set(m.id, m.params?.prompt);
              if (pending.size > MAX_PENDING_PROMPTS) pending.delete(pending.keys().next().value as string | number);
            }
            controller.enqueue(message);
          },
        }),
      ),
    };
  }

  /** The raw prompt of request `requestId` (forgotten from then on), or `parsed` when there is none that fits. */
  take(requestId: JsonRpcId | undefined, parsed: ContentBlock[]): ContentBlock[] {
    if (requestId === undefined || requestId === null) return parsed;
    const raw = this.pending.get(requestId);
    this.pending.delete(requestId);
    return Array.isArray(raw) && raw.length === parsed.length ? (raw as ContentBlock[]) : parsed;
  }
}
