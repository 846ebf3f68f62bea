import { describe, expect, it } from "vitest";
import { answerTo, memoryChain } from "../../../test/helpers/memory-chain.js";
import type { Json, MemoryPeer, Script } from "../../../test/helpers/memory-peer.js";

/**
 * A proxy that speaks only the Rust SDK's `_proxy/*`: it passes everything on in `_proxy/successor`
 * and unwraps what comes back. `proxy/initialize` it either refuses as unknown (`strict`) or, as
 * `sacp` does with every method it does not know, forwards to its successor.
 */
const rustOnly =
  (strict: boolean): Script =>
  (m, peer) => {
    const up = (inner: Json) =>
      peer.emit({
        jsonrpc: "2.0",
        ...("id" in inner ? { id: inner.id } : {}),
        method: "_proxy/successor",
        params: { method: inner.method, params: inner.params },
      });
    if (!("method" in m)) return peer.emit(m);
    if (m.method === "proxy/initialize" && strict)
      return peer.emit({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "unknown method" } });
    if (m.method === "_proxy/initialize") return up({ ...m, method: "initialize" });
    if (m.method === "_proxy/successor")
      return peer.emit({ jsonrpc: "2.0", ...("id" in m ? { id: m.id } : {}), method: m.params.method, params: m.params.params });
    up(m);
  };

const methods = (peer: MemoryPeer) => peer.received.map((m) => m.method ?? "answer");

describe("rust-dialect: a proxy that knows only _proxy/* is switched to it", () => {
  it("one that answers proxy/initialize with method-not-found is asked again in _proxy/initialize, and joins", async () => {
    const { proxies, agent, request } = await memoryChain([rustOnly(true)]); // asserts the agent's initialize answer arrived
    expect(methods(proxies[0]).slice(0, 2)).toEqual(["proxy/initialize", "_proxy/initialize"]);
    const session = await request("session/new", { cwd: "/", mcpServers: [] });
    expect(session.result?.sessionId, JSON.stringify(session)).toBeTypeOf("string");
    // The agent was initialized once, in plain ACP.
    expect(methods(agent).filter((m) => m.includes("initialize"))).toEqual(["initialize"]);
  });

  it("one that forwards proxy/initialize to its successor is told it may not, asked again, and joins", async () => {
    const { proxies, agent } = await memoryChain([rustOnly(false)]);
    const first = proxies[0].received[0];
    expect(first.method).toBe("proxy/initialize");
    // Its forwarded copy (same id: it reuses the conductor's) is answered with an error and never reaches the agent.
    expect((await answerTo(proxies[0], first.id)).error?.message).toMatch(/only sent by the conductor/);
    expect(methods(proxies[0])).toContain("_proxy/initialize");
    expect(methods(agent).filter((m) => m.includes("initialize"))).toEqual(["initialize"]);
  });
});
