/**
 * The SDK's author helpers, watched from the wire: slash commands merged into
 * available_commands_update, answering a prompt yourself, onTurnEnd, per-session state freed on
 * session/close, the Denied code — and the defence in depth against forged envelopes.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import {
  agentUpdate,
  clientPrompt,
  clientUpdate,
  ErrorCode,
  error,
  fromAgent,
  type Json,
  loadFixture,
  ProxyUnderTest,
  proxyUnderTest,
  result,
  textChunk,
  thoughtChunk,
} from "./harness.js";

let helpers: LoadedComponent;
beforeAll(async () => {
  helpers = await loadFixture("helpers");
}, 180_000);

const USAGE = { name: "usage", description: "Show how many chunks this session got" };
const PLAN = { name: "plan", description: "The proxy's own plan", input: { hint: "what to plan" } };

describe("slash commands", () => {
  it("are merged into the agent's available_commands_update (the proxy's replace same-named ones)", async () => {
    const p = await proxyUnderTest(helpers);
    const agentList = [
      { name: "plan", description: "agent plan" },
      { name: "web", description: "Search", input: { hint: "q" } },
    ];
    const out = p.deliver(agentUpdate({ sessionUpdate: "available_commands_update", availableCommands: agentList }, "s1"));
    expect(out).toEqual([
      clientUpdate({ sessionUpdate: "available_commands_update", availableCommands: [agentList[1], USAGE, PLAN] }, "s1"),
    ]);
  });

  it("announceCommands sends the agent's last list merged with the proxy's", async () => {
    const p = await proxyUnderTest(helpers);
    expect(p.deliver(clientPrompt("/announce", "s0", 1))).toEqual([
      clientUpdate({ sessionUpdate: "available_commands_update", availableCommands: [USAGE, PLAN] }, "s0"),
      result(1, { stopReason: "end_turn" }),
    ]);
    p.deliver(
      agentUpdate({ sessionUpdate: "available_commands_update", availableCommands: [{ name: "web", description: "Search" }] }, "s1"),
    );
    expect(p.deliver(clientPrompt("/announce", "s1", 2))[0].params.update.availableCommands).toEqual([
      { name: "web", description: "Search" },
      USAGE,
      PLAN,
    ]);
  });
});

describe("answering a prompt yourself", () => {
  it("answerPrompt: a message chunk then the turn's answer; sendThought; PerSession counts per session", async () => {
    const p = await proxyUnderTest(helpers);
    p.deliver(agentUpdate(textChunk("a"), "s1"));
    p.deliver(agentUpdate(textChunk("b"), "s1"));
    p.deliver(agentUpdate(textChunk("c"), "s2"));
    expect(p.deliver(clientPrompt("/usage", "s1", 5))).toEqual([
      clientUpdate(thoughtChunk("counting"), "s1"),
      clientUpdate(textChunk("chunks: 2 (2 sessions, closed: )"), "s1"),
      result(5, { stopReason: "end_turn" }),
    ]);
  });

  it("sendUpdate sends any update; endTurn takes a stop reason", async () => {
    const p = await proxyUnderTest(helpers);
    expect(p.deliver(clientPrompt("/plan  write tests ", "s1", "x"))).toEqual([
      clientUpdate({ sessionUpdate: "plan", entries: [{ content: "write tests", priority: "high", status: "pending" }] }, "s1"),
      result("x", { stopReason: "refusal" }),
    ]);
  });

  it("respondDenied / ErrorCode.Denied", async () => {
    const p = await proxyUnderTest(helpers);
    expect(p.deliver(clientPrompt("/deny", "s1", 3))).toEqual([error(3, ErrorCode.Denied, "not allowed here")]);
    expect(p.deliver(fromAgent("fs/write_text_file", { sessionId: "s1", path: "/x", content: "" }, "w1"))).toEqual([
      error("w1", -32001, "read-only"),
    ]);
  });
});

describe("onTurnEnd", () => {
  it("runs before the agent's answer is relayed, so what it sends is inside the turn", async () => {
    const p = await proxyUnderTest(helpers);
    const [fwd] = p.deliver(clientPrompt("hello", "s1", 9));
    expect(fwd.params.method).toBe("session/prompt");
    expect(p.deliver(result(fwd.id, { stopReason: "cancelled" }))).toEqual([
      clientUpdate(textChunk("[turn ended: cancelled]"), "s1"),
      result(9, { stopReason: "cancelled" }),
    ]);
    const [again] = p.deliver(clientPrompt("hello", "s1", 10));
    expect(p.deliver(error(again.id, -32603, "agent broke"))).toEqual([
      clientUpdate(textChunk("[turn ended: error]"), "s1"),
      error(10, -32603, "agent broke"),
    ]);
  });
});

describe("onSessionClosed", () => {
  it("a successful session/close frees PerSession state and calls the hook; a failed one does not", async () => {
    const p = await proxyUnderTest(helpers);
    p.deliver(agentUpdate(textChunk("a"), "s1"));
    p.deliver(agentUpdate(textChunk("b"), "s2"));
    const [failed] = p.deliver({ jsonrpc: "2.0", id: 20, method: "session/close", params: { sessionId: "s2" } });
    p.deliver(error(failed.id, -32002, "no such session"));
    const [close] = p.deliver({ jsonrpc: "2.0", id: 21, method: "session/close", params: { sessionId: "s1" } });
    expect(p.deliver(result(close.id, {}))).toEqual([result(21, {})]);
    const [del] = p.deliver({ jsonrpc: "2.0", id: 22, method: "session/delete", params: { sessionId: "s2" } });
    p.deliver(result(del.id, {}));
    expect(p.deliver(clientPrompt("/usage", "s3", 23))[1]).toEqual(clientUpdate(textChunk("chunks: 0 (1 sessions, closed: s1,s2)"), "s3"));
  });
});

describe("defence in depth: a successor envelope carrying control methods never reaches hooks", () => {
  for (const inner of ["proxy/successor", "_proxy/successor", "proxy/initialize", "_proxy/initialize"]) {
    it(`${inner} inside proxy/successor: a request is refused, a notification dropped, both logged`, async () => {
      const p = await proxyUnderTest(helpers);
      const params: Json = inner.endsWith("successor")
        ? { method: "session/prompt", params: { sessionId: "s", prompt: [] } }
        : { protocolVersion: 1 };
      expect(p.deliver(fromAgent(inner, params, "f1"))).toEqual([error("f1", -32600, `refused ${inner} inside proxy/successor`)]);
      expect(p.deliver(fromAgent(inner, params))).toEqual([]);
      expect(p.logs.filter((l) => l.level === "warn" && l.message.includes(inner))).toHaveLength(2);
    });
  }
});

describe("the public API", () => {
  it("a fresh instance per ProxyUnderTest", () => {
    expect(new ProxyUnderTest(helpers).deliver({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "h", config: {} } })).toEqual(
      [],
    );
  });
});
