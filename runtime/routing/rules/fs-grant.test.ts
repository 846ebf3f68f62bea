/**
 * fs-grant: only the calls a grant gates earn a proxy a credit; an update streamed through it costs
 * no digest (the credit book canonicalises and hashes what it records).
 */
import { describe, expect, it, vi } from "vitest";
import { answerTo, memoryChain } from "../../../test/helpers/memory-chain.js";
import { passThrough } from "../../../test/helpers/memory-peer.js";
import { Forwardable } from "../grants.js";

describe("fs-grant: credits", () => {
  it("session/update handed to a proxy earns no credit; fs/read_text_file does", async () => {
    const add = vi.spyOn(Forwardable.prototype, "add");
    try {
      const { agent, proxies, client } = await memoryChain([passThrough]);
      for (let i = 0; i < 5; i++)
        agent.emit({
          jsonrpc: "2.0",
          method: "session/update",
          params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${i}` } } },
        });
      await client.waitFor((m) => m.method === "session/update" && m.params.update.content.text === "4");
      expect(add).not.toHaveBeenCalled();

      agent.emit({ jsonrpc: "2.0", id: "r1", method: "fs/read_text_file", params: { sessionId: "s", path: "notes.md" } });
      const asked = await client.waitFor((m) => m.method === "fs/read_text_file");
      expect(add.mock.calls.map((c) => c[1])).toEqual(["fs/read_text_file"]);
      client.emit({ jsonrpc: "2.0", id: asked.id, result: { content: "hi" } });
      expect((await answerTo(agent, "r1")).result).toEqual({ content: "hi" });
      expect(proxies[0].received.length).toBeGreaterThan(0);
    } finally {
      add.mockRestore();
    }
  });
});
