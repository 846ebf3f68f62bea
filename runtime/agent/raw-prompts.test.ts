import type { AnyMessage, ContentBlock, Stream } from "@agentclientprotocol/sdk/unstable";
import { describe, expect, it } from "vitest";
import { MAX_PENDING_PROMPTS, RawPrompts } from "./raw-prompts.js";

/** Pushes `messages` through the tapped side of a stream and returns what came out. */
async function through(raw: RawPrompts, messages: AnyMessage[]): Promise<AnyMessage[]> {
  const stream: Stream = {
    readable: new ReadableStream<AnyMessage>({
      start(controller) {
        for (const m of messages) controller.enqueue(m);
        controller.close();
      },
    }),
    writable: new WritableStream<AnyMessage>(),
  };
  const wrapped = raw.wrap(stream);
  expect(wrapped.writable).toBe(stream.writable);
  const out: AnyMessage[] = [];
  for await (const m of wrapped.readable as unknown as AsyncIterable<AnyMessage>) out.push(m);
  return out;
}

const parsed: ContentBlock[] = [{ type: "text", text: "hi" }];
const prompt = (id: number, blocks: unknown[]) =>
  ({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId: "s", prompt: blocks } }) as AnyMessage;

describe("RawPrompts", () => {
  it("passes every message on unchanged (same objects) and hands back the raw prompt once", async () => {
    const raw = new RawPrompts();
    const rawBlocks = [{ type: "text", text: "hi", future: { kept: true } }];
    const messages = [prompt(1, rawBlocks), { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } } as AnyMessage];
    const out = await through(raw, messages);
    expect(out).toHaveLength(2);
    expect(out[0]).toBe(messages[0]);
    expect(out[1]).toBe(messages[1]);
    expect(raw.take(1, parsed)).toBe(rawBlocks);
    expect(raw.take(1, parsed)).toBe(parsed);
  });

  it("falls back to the parsed prompt without an id, or when the raw one does not fit", async () => {
    const raw = new RawPrompts();
    await through(raw, [
      prompt(2, [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ]),
      prompt(3, "not an array" as unknown as unknown[]),
    ]);
    expect(raw.take(undefined, parsed)).toBe(parsed);
    expect(raw.take(null, parsed)).toBe(parsed);
    expect(raw.take(2, parsed)).toBe(parsed);
    expect(raw.take(3, parsed)).toBe(parsed);
  });

  it("keeps at most MAX_PENDING_PROMPTS untaken prompts, dropping the oldest", async () => {
    const raw = new RawPrompts();
    const count = MAX_PENDING_PROMPTS + 5;
    await through(
      raw,
      Array.from({ length: count }, (_, i) => prompt(i, [{ type: "text", text: String(i) }])),
    );
    expect(raw.take(0, parsed)).toBe(parsed);
    expect(raw.take(4, parsed)).toBe(parsed);
    expect(raw.take(5, parsed)).toStrictEqual([{ type: "text", text: "5" }]);
    expect(raw.take(count - 1, parsed)).toStrictEqual([{ type: "text", text: String(count - 1) }]);
  });
});
