/**
 * mcp-client: a proxy's MCP server may not have the agent's MCP client sample its model, ask the
 * user, or list the user's roots without the grant for each; `ping` and notifications need none, and
 * passing on another server's request unchanged stays free.
 */
import { describe, expect, it } from "vitest";
import { answerTo, memoryChain } from "../../../test/helpers/memory-chain.js";
import { agentScript, type Json, passThrough, type Script } from "../../../test/helpers/memory-peer.js";

/** The agent's MCP client answers every mcp/message request it gets. */
const agent: Script = (m, peer) => {
  if (m.method === "mcp/message" && "id" in m) peer.emit({ jsonrpc: "2.0", id: m.id, result: { answered: m.params.method } });
  else agentScript(m, peer);
};

const toSuccessor = (id: string, method: string): Json => ({
  jsonrpc: "2.0",
  id,
  method: "proxy/successor",
  params: { method: "mcp/message", params: { connectionId: "mcp:p0:1#1", method, params: {} } },
});

const GATED: [string, string][] = [
  ["sampling/createMessage", "mcp:sampling"],
  ["elicitation/create", "mcp:elicitation"],
  ["roots/list", "mcp:roots"],
];

describe("mcp-client: a server's requests to the agent's MCP client need their grant", () => {
  it("each gated request of a grantless proxy is refused, naming the grant; the agent never sees it; ping passes", async () => {
    const { proxies, agent: a } = await memoryChain([passThrough], [[]], agent);
    for (const [method, grant] of GATED) {
      proxies[0].emit(toSuccessor(`own-${method}`, method));
      const answer = await answerTo(proxies[0], `own-${method}`);
      expect(answer.error?.message, JSON.stringify(answer)).toContain(
        `${method} from proxy "p0"'s MCP server to the agent's MCP client needs the "${grant}" grant`,
      );
      expect(answer.error?.data?.cordon).toMatchObject({ failure: "refused", gate: "mcp-client", grant });
    }
    proxies[0].emit(toSuccessor("ping", "ping"));
    expect((await answerTo(proxies[0], "ping")).result).toEqual({ answered: "ping" });
    expect(a.received.filter((m) => m.method === "mcp/message").map((m) => m.params.method)).toEqual(["ping"]);
  });

  it("judges the older dialect's _mcp/message and every member a reader may take for method", async () => {
    const { proxies, agent: a } = await memoryChain([passThrough], [[]], agent);
    const sneaky: [string, Json][] = [
      ["_mcp/message", { connectionId: "c", method: "roots/list" }],
      ["mcp/message", { connectionId: "c", Method: "sampling/createMessage" }],
      ["mcp/message", { connectionId: "c", method: "ping", METHOD: "elicitation/create" }],
      ["mcp/message", { connectionId: "c", "method\u0000x": "roots/list" }],
    ];
    for (const [i, [method, params]] of sneaky.entries()) {
      proxies[0].emit({ jsonrpc: "2.0", id: `s${i}`, method: "proxy/successor", params: { method, params } });
      expect((await answerTo(proxies[0], `s${i}`)).error?.data?.cordon?.gate, JSON.stringify(params)).toBe("mcp-client");
    }
    expect(a.received.filter((m) => m.method?.endsWith("mcp/message"))).toEqual([]);
  });

  it("a proxy holding the grant may send that request (and only that one)", async () => {
    const { proxies } = await memoryChain([passThrough], [["mcp:roots"]], agent);
    proxies[0].emit(toSuccessor("roots", "roots/list"));
    expect((await answerTo(proxies[0], "roots")).result).toEqual({ answered: "roots/list" });
    proxies[0].emit(toSuccessor("sampling", "sampling/createMessage"));
    expect((await answerTo(proxies[0], "sampling")).error?.data?.cordon?.grant).toBe("mcp:sampling");
  });

  it("a grantless proxy passes on its predecessor's request unchanged; a notification of its own is dropped", async () => {
    const { proxies, agent: a, lines } = await memoryChain([passThrough, passThrough], [["mcp:sampling"], []], agent);
    proxies[0].emit(toSuccessor("sample", "sampling/createMessage"));
    expect((await answerTo(proxies[0], "sample")).result).toEqual({ answered: "sampling/createMessage" });
    proxies[1].emit({
      jsonrpc: "2.0",
      method: "proxy/successor",
      params: { method: "mcp/message", params: { connectionId: "x", method: "elicitation/create" } },
    });
    await expect.poll(() => lines.join("\n")).toMatch(/mcp-client/);
    expect(a.received.filter((m) => m.method === "mcp/message").map((m) => m.params.method)).toEqual(["sampling/createMessage"]);
  });
});
