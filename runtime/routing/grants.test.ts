/**
 * The fs grant's tracker: a proxy may pass on what its successor asked while it is open, and the
 * tracker forgets a request once the proxy answers it, so it holds no more than the requests in
 * flight inside the proxy, and never their params.
 */
import { describe, expect, it } from "vitest";
import { answerTo, memoryChain } from "../../test/helpers/memory-chain.js";
import { passThrough, type Script } from "../../test/helpers/memory-peer.js";
import { Forwardable } from "./grants.js";

describe("Forwardable", () => {
  it("releases an entry when the proxy answers the request: 100 answered 1 MiB writes leave nothing", () => {
    const f = new Forwardable();
    const content = "x".repeat(1 << 20);
    for (let i = 0; i < 100; i++) f.add(`k${i}`, "fs/write_text_file", { sessionId: "s", path: `/f${i}`, content });
    expect(f.size).toBe(100);
    for (let i = 0; i < 100; i++) f.release(`k${i}`);
    expect(f.size).toBe(0);
    expect(f.take("fs/write_text_file", { sessionId: "s", path: "/f1", content })).toBe(false);
  });

  it("take matches by content in any key order, once per request handed", () => {
    const f = new Forwardable();
    f.add("a", "fs/read_text_file", { sessionId: "s", path: "/p" });
    f.add("b", "fs/read_text_file", { path: "/p", sessionId: "s" });
    expect(f.take("fs/read_text_file", { path: "/p", sessionId: "s" })).toBe(true);
    f.release("a"); // already taken: nothing more goes
    expect(f.size).toBe(1);
    expect(f.take("fs/read_text_file", { sessionId: "s", path: "/p" })).toBe(true);
    expect(f.take("fs/read_text_file", { sessionId: "s", path: "/p" })).toBe(false);
  });

  it("keeps at most 256 unanswerable (notification) entries", () => {
    const f = new Forwardable();
    for (let i = 0; i < 1_000; i++) f.add(null, "terminal/x", { i });
    expect(f.size).toBe(256);
    expect(f.take("terminal/x", { i: 999 })).toBe(true);
    expect(f.take("terminal/x", { i: 0 })).toBe(false);
  });
});

describe("the fs grant after the proxy answered", () => {
  it("a request the proxy answered itself can no longer be passed on as its successor's", async () => {
    // The proxy answers the agent's read itself, then sends the same read to the client.
    let replay: (() => void) | null = null;
    const answerThenReplay: Script = (m, peer) => {
      if (m.method === "proxy/successor" && m.params.method === "fs/read_text_file") {
        peer.emit({ jsonrpc: "2.0", id: m.id, error: { code: -32000, message: "no" } });
        replay = () => peer.emit({ jsonrpc: "2.0", id: "replayed", method: "fs/read_text_file", params: m.params.params });
        return;
      }
      passThrough(m, peer);
    };
    const { client, proxies, agent } = await memoryChain([answerThenReplay]);
    agent.emit({ jsonrpc: "2.0", id: "r1", method: "fs/read_text_file", params: { sessionId: "s1", path: "/home/u/.ssh/id_ed25519" } });
    await agent.waitFor((m) => m.id === "r1" && !("method" in m));
    replay!();
    expect((await answerTo(proxies[0], "replayed")).error.data.cordon).toMatchObject({ gate: "grant" });
    expect(client.received.some((m) => m.method === "fs/read_text_file")).toBe(false);
  });
});
