import { describe, expect, it } from "vitest";
import { agentScript, MemoryPeer } from "../../../test/helpers/memory-peer.js";
import { createLogger } from "../../log.js";
import { Conductor } from "../conductor.js";

describe("start-failure: a chain that could not start says so to the client", () => {
  it("the first request is answered with the reason, and the conductor ends non-zero", async () => {
    const client = new MemoryPeer("client");
    const proxy = new MemoryPeer('proxy "broken"');
    proxy.open = () => Promise.reject(new Error('proxy "broken" has no such file'));
    const lines: string[] = [];
    let exit: number | null = null;
    const conductor = new Conductor({
      client,
      proxies: [proxy],
      agent: new MemoryPeer('agent "memory"', agentScript),
      log: createLogger("info", (line) => lines.push(line)),
      onExit: (code) => (exit = code),
    });
    await conductor.start();
    expect(lines.join("")).toMatch(/cannot start the chain: proxy "broken" has no such file/);
    expect(exit).toBeNull();
    client.emit({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    const answer = await client.waitFor((m) => m.id === 1);
    expect(answer.error).toMatchObject({
      message: 'Cordon could not start the chain: proxy "broken" has no such file',
      data: { cordon: { component: "cordon", failure: "start" } },
    });
    expect(exit).toBe(1);
  });
});
