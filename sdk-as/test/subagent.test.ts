// Subagents in the SDK: a proxy's own sessions at the agent — opened, prompted, several at once,
// their updates and permission requests kept to dedicated hooks (never the client), cancelled,
// closed; a missing grant surfaced in words. All through the real .wasm (fixtures/subagents.ts).
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import {
  agentRequest,
  agentUpdate,
  clientPrompt,
  clientUpdate,
  INIT_RESULT,
  INIT_RESULT_CLOSE,
  INIT_RESULT_CLOSE_MCP,
  type Json,
  loadFixture,
  mcpRequest,
  type ProxyUnderTest,
  proxyUnderTest,
  refusedForGrant,
  textChunk,
  thoughtChunk,
  toolText,
} from "./harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadFixture("subagents");
});

const start = (config: Json = {}, agentResult: Json = INIT_RESULT_CLOSE) => proxyUnderTest(component, config, { agentResult });
const answer = (p: ProxyUnderTest, sent: Json, result: Json) => p.send({ jsonrpc: "2.0", id: sent.id, result });

/** `/spawn n text` in session `user`: the proxy's session/new requests (nothing else is sent yet). */
function spawn(p: ProxyUnderTest, n: number, text: string, user = "user-1", id = 7): Json[] {
  const sent = p.send(clientPrompt(`/spawn ${n} ${text}`, user, id));
  expect(sent.toClient).toEqual([]);
  expect(sent.answers).toEqual([]);
  return sent.toAgent;
}

describe("opening and prompting subagents", () => {
  it("opens a session of its own per subagent, prompts each once it exists, and answers the user with their answers", async () => {
    const p = await start({ cwd: "/projects/x" });
    const setups = spawn(p, 2, "review this");
    expect(setups.map((m) => [m.method, m.params])).toEqual([
      ["session/new", { cwd: "/projects/x", mcpServers: [] }],
      ["session/new", { cwd: "/projects/x", mcpServers: [] }],
    ]);
    expect(setups[0].id).not.toBe(setups[1].id);

    // answered out of order: each prompt goes to its own session as soon as it exists
    const b = answer(p, setups[1], { sessionId: "sub-b", modes: null }).toAgent;
    expect(b).toEqual([
      {
        jsonrpc: "2.0",
        id: b[0].id,
        method: "session/prompt",
        params: { sessionId: "sub-b", prompt: [{ type: "text", text: "review this" }] },
      },
    ]);
    const [a] = answer(p, setups[0], { sessionId: "sub-a" }).toAgent;
    expect(a.params).toEqual({ sessionId: "sub-a", prompt: [{ type: "text", text: "review this" }] });
    expect(p.logs.map((l) => l.message)).toEqual(expect.arrayContaining(["started sub-b", "started sub-a"]));

    // their updates reach the dedicated hook only: the client sees the fixture's own thought
    expect(p.deliver(agentUpdate(textChunk("A says "), "sub-a"))).toEqual([
      clientUpdate(thoughtChunk("subagent 0: agent_message_chunk"), "user-1"),
    ]);
    expect(p.deliver(agentUpdate(textChunk("B says"), "sub-b"))).toEqual([
      clientUpdate(thoughtChunk("subagent 1: agent_message_chunk"), "user-1"),
    ]);
    p.deliver(agentUpdate(textChunk("hi"), "sub-a"));
    p.deliver(agentUpdate(thoughtChunk("(not collected)"), "sub-a"));
    // the user's own session still flows as always
    expect(p.deliver(agentUpdate(textChunk("user's"), "user-1"))).toEqual([clientUpdate(textChunk("user's"), "user-1")]);

    // first turn over: closed (the agent advertised session/close); the user waits for the other
    const closeA = answer(p, a, { stopReason: "end_turn" });
    expect(closeA.toClient).toEqual([]);
    expect(closeA.answers).toEqual([]);
    expect(closeA.toAgent).toEqual([{ jsonrpc: "2.0", id: closeA.toAgent[0].id, method: "session/close", params: { sessionId: "sub-a" } }]);
    const last = answer(p, b[0], { stopReason: "max_tokens" });
    expect(last.toClient).toEqual([clientUpdate(textChunk("A says hi(end_turn)\nB says(max_tokens)"), "user-1")]);
    expect(last.answers).toEqual([{ jsonrpc: "2.0", id: 7, result: { stopReason: "end_turn" } }]);
    expect(last.toAgent.map((m) => m.params)).toEqual([{ sessionId: "sub-b" }]);
    expect(p.logs.at(-1)?.message).toBe("open subagents: 2"); // both still closing

    answer(p, closeA.toAgent[0], {});
    answer(p, last.toAgent[0], {});
    expect(p.logs.map((l) => l.message)).toEqual(expect.arrayContaining(["closed sub-a", "closed sub-b"]));
    // a closed subagent's session is no longer the proxy's: its updates go the usual way
    expect(p.deliver(agentUpdate(textChunk("late"), "sub-a"))).toEqual([clientUpdate(textChunk("late"), "sub-a")]);
  });

  it("forgets instead of closing when the agent does not advertise session/close", async () => {
    const p = await start({}, INIT_RESULT);
    const [setup] = spawn(p, 1, "x");
    const [prompt] = answer(p, setup, { sessionId: "sub" }).toAgent;
    const end = answer(p, prompt, { stopReason: "end_turn" });
    expect(end.toAgent).toEqual([]);
    expect(end.answers).toEqual([{ jsonrpc: "2.0", id: 7, result: { stopReason: "end_turn" } }]);
    expect(p.logs.map((l) => l.message)).toContain("closed sub");
  });
});

describe("what a subagent's session sends stays with the proxy", () => {
  it("permission requests: rejected by default, allowed only when the proxy says so; never sent to the client", async () => {
    for (const [config, option] of [
      [{}, "reject"],
      [{ allow: true }, "allow"],
    ] as const) {
      const p = await start(config);
      const [setup] = spawn(p, 1, "permission rm");
      answer(p, setup, { sessionId: "sub" });
      const ask = agentRequest(p, "session/request_permission", {
        sessionId: "sub",
        toolCall: { toolCallId: "tool-1", title: "rm" },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      });
      expect(ask.result).toEqual({ outcome: { outcome: "selected", optionId: option } });
      expect(ask.others).toEqual([]);
    }
  });

  it("a permission request without a reject option is answered cancelled", async () => {
    const p = await start();
    const [setup] = spawn(p, 1, "x");
    answer(p, setup, { sessionId: "sub" });
    const ask = agentRequest(p, "session/request_permission", {
      sessionId: "sub",
      toolCall: { toolCallId: "t" },
      options: [{ optionId: "ok", name: "OK", kind: "allow_once" }],
    });
    expect(ask.result).toEqual({ outcome: { outcome: "cancelled" } });
  });

  it("the agent's other requests for it (fs, terminal) are refused to the agent, not passed to the client", async () => {
    const p = await start();
    const [setup] = spawn(p, 1, "x");
    answer(p, setup, { sessionId: "sub" });
    const read = agentRequest(p, "fs/read_text_file", { sessionId: "sub", path: "/etc/passwd" });
    expect(read.error).toEqual({ code: -32001, message: "proxy under-test offers its subagents no fs/read_text_file" });
    expect(read.others).toEqual([]);
    // the same request for the user's session is forwarded to the client as always
    const mine = p.fromAgent("fs/read_text_file", { sessionId: "user-1", path: "/a" }, "agent-9");
    expect(mine.toClient.map((m) => m.method)).toEqual(["fs/read_text_file"]);
  });
});

describe("cancelling", () => {
  it("session/cancel of the user's turn cancels every running subagent; the turn ends cancelled", async () => {
    const p = await start();
    const setups = spawn(p, 2, "wait");
    const prompts = setups.map((s, i) => answer(p, s, { sessionId: `sub-${i}` }).toAgent[0]);
    const cancel = p.fromClient("session/cancel", { sessionId: "user-1" });
    expect(cancel.toAgent.map((m) => [m.method, m.params, m.id])).toEqual([
      ["session/cancel", { sessionId: "sub-0" }, undefined],
      ["session/cancel", { sessionId: "sub-1" }, undefined],
      ["session/cancel", { sessionId: "user-1" }, undefined],
    ]);
    answer(p, prompts[0], { stopReason: "cancelled" });
    const end = answer(p, prompts[1], { stopReason: "cancelled" });
    expect(end.answers).toEqual([{ jsonrpc: "2.0", id: 7, result: { stopReason: "cancelled" } }]);
  });

  it("a cancel before the session exists drops the queued prompt: the turn ends at once, nothing is prompted later", async () => {
    const p = await start({ keep: true });
    const [setup] = spawn(p, 1, "wait");
    const cancel = p.fromClient("session/cancel", { sessionId: "user-1" });
    expect(cancel.answers).toEqual([{ jsonrpc: "2.0", id: 7, result: { stopReason: "cancelled" } }]);
    expect(cancel.toAgent.map((m) => m.params.sessionId)).toEqual(["user-1"]);
    expect(answer(p, setup, { sessionId: "sub" }).toAgent).toEqual([]);
  });
});

describe("grants", () => {
  it("without agent:sessions Cordon refuses the session/new; the hook gets it in words, and nothing is left open", async () => {
    const p = await start();
    const [setup] = spawn(p, 1, "x");
    const out = p.send(refusedForGrant(setup, "under-test"));
    expect(out.toClient).toEqual([
      clientUpdate(
        textChunk('start failed (grant "agent:sessions"): grant agent:sessions to this proxy to let it start subagents'),
        "user-1",
      ),
    ]);
    expect(out.answers).toEqual([{ jsonrpc: "2.0", id: 7, result: { stopReason: "end_turn" } }]);
    expect(p.logs.at(-1)?.message).toBe("open subagents: 0");
  });

  it("without agent:prompt the prompt is refused: the same, naming that grant", async () => {
    const p = await start();
    const [setup] = spawn(p, 1, "x");
    const [prompt] = answer(p, setup, { sessionId: "sub" }).toAgent;
    const out = p.send(refusedForGrant(prompt, "under-test"));
    expect(out.toClient[0].params.update.content.text).toBe(
      'prompt failed (grant "agent:prompt"): grant agent:prompt to this proxy to let it prompt its subagents',
    );
  });

  it("an error of the agent's own is passed on in words, with no grant", async () => {
    const p = await start();
    const [setup] = spawn(p, 1, "x");
    const out = p.send({ jsonrpc: "2.0", id: setup.id, error: { code: -32602, message: "cwd must be absolute" } });
    expect(out.toClient[0].params.update.content.text).toBe('start failed (grant ""): the subagent\'s start failed: cwd must be absolute');
  });
});

describe("the proxy's own MCP servers in a subagent's session", () => {
  it("declares them in its session/new and serves them with that session", async () => {
    const p = await start({ mcp: true }, INIT_RESULT_CLOSE_MCP);
    const [setup] = spawn(p, 1, "use tool helper::whose");
    expect(setup.params.mcpServers).toEqual([
      { type: "acp", name: "helper", serverId: expect.stringMatching(/^mcp:under-test:[0-9a-f]{8}:helper\/1$/) },
    ]);
    const serverId = setup.params.mcpServers[0].serverId;
    answer(p, setup, { sessionId: "sub" });
    const call = mcpRequest(p, { serverId }, "tools/call", { name: "whose" });
    expect(toolText(call.result)).toBe("subagent sub of user-1");
  });
});
