import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { configProblems } from "../../runtime/sandbox/manifest.js";
import {
  agentRequest,
  agentUpdate,
  clientPrompt,
  clientUpdate,
  exampleManifest,
  INIT_RESULT_CLOSE,
  type Json,
  loadExampleProxy,
  type ProxyUnderTest,
  proxyUnderTest,
  refusedForGrant,
  textChunk,
  thoughtChunk,
} from "../../sdk-as/test/harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadExampleProxy("subagent");
});

const start = (config: Json = {}) => proxyUnderTest(component, config, { agentResult: INIT_RESULT_CLOSE });
const answer = (p: ProxyUnderTest, sent: Json, result: Json) => p.send({ jsonrpc: "2.0", id: sent.id, result });

/** The client's `session/new` in `cwd`, answered with `sessionId`. */
function userSession(p: ProxyUnderTest, sessionId: string, cwd = "/home/me/project"): void {
  const [setup] = p.send({ jsonrpc: "2.0", id: p.nextId(), method: "session/new", params: { cwd, mcpServers: [] } }).toAgent;
  answer(p, setup, { sessionId });
}

/** `/review <text>` in `session`: the proxy's session/new for the subagent and what the user got. */
function review(p: ProxyUnderTest, text: string, session = "user-1", id = 5) {
  const sent = p.send(clientPrompt(`/review ${text}`, session, id));
  expect(sent.answers).toEqual([]);
  expect(sent.toClient).toEqual([clientUpdate(thoughtChunk("Reviewing in a subagent session…\n"), session)]);
  expect(sent.toAgent).toHaveLength(1);
  return sent.toAgent[0];
}

describe("subagent: /review", () => {
  it("runs the review prompt in a subagent session in the user's cwd; its answer is the turn's result", async () => {
    const p = await start();
    userSession(p, "user-1");
    const setup = review(p, "teh quick fox");
    expect(setup.method).toBe("session/new");
    expect(setup.params).toEqual({ cwd: "/home/me/project", mcpServers: [] });
    const [prompt] = answer(p, setup, { sessionId: "sub-1" }).toAgent;
    expect(prompt.method).toBe("session/prompt");
    expect(prompt.params.sessionId).toBe("sub-1");
    expect(prompt.params.prompt[0].text).toMatch(/^You are reviewing text for the user\..*\n\nThe text to review:\nteh quick fox$/s);

    // the subagent's updates never reach the client; a tool it runs is one progress line
    expect(p.deliver(agentUpdate(textChunk("typo: teh → the. "), "sub-1"))).toEqual([]);
    expect(p.deliver(agentUpdate({ sessionUpdate: "tool_call", toolCallId: "t1", title: "spellcheck" }, "sub-1"))).toEqual([
      clientUpdate(thoughtChunk("The reviewer runs: spellcheck\n"), "user-1"),
    ]);
    p.deliver(agentUpdate(textChunk("Otherwise fine."), "sub-1"));

    const end = answer(p, prompt, { stopReason: "end_turn" });
    expect(end.toClient).toEqual([clientUpdate(textChunk("typo: teh → the. Otherwise fine."), "user-1")]);
    expect(end.answers).toEqual([{ jsonrpc: "2.0", id: 5, result: { stopReason: "end_turn" } }]);
    expect(end.toAgent.map((m) => [m.method, m.params])).toEqual([["session/close", { sessionId: "sub-1" }]]);
  });

  it("other prompts go to the agent untouched; /review without text says how to use it", async () => {
    const p = await start();
    const normal = p.send(clientPrompt("hello", "user-1", 1));
    expect(normal.toAgent[0].params).toEqual({ sessionId: "user-1", prompt: [{ type: "text", text: "hello" }] });
    const usage = p.send(clientPrompt("/review", "user-1", 2));
    expect(usage.toClient).toEqual([clientUpdate(textChunk("usage: /review <text to review>"), "user-1")]);
    expect(usage.toAgent).toEqual([]);
  });

  it("advertises /review merged into the agent's commands", async () => {
    const p = await start();
    const [out] = p.deliver(
      agentUpdate({ sessionUpdate: "available_commands_update", availableCommands: [{ name: "help", description: "h" }] }, "user-1"),
    );
    expect(out.params.update.availableCommands.map((c: Json) => c.name)).toEqual(["help", "review"]);
  });

  it("the subagent's permission requests are rejected (allowed only with permissions: allow)", async () => {
    const ask = {
      sessionId: "sub-1",
      toolCall: { toolCallId: "t1", title: "rm -rf /" },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    };
    for (const [config, chosen] of [
      [{}, "reject"],
      [{ permissions: "allow" }, "allow"],
    ] as const) {
      const p = await start(config);
      answer(p, review(p, "x"), { sessionId: "sub-1" });
      const asked = agentRequest(p, "session/request_permission", ask);
      expect(asked.result).toEqual({ outcome: { outcome: "selected", optionId: chosen } });
      expect(asked.others).toEqual([]);
    }
  });

  it("session/cancel of the user's turn cancels the subagent; the turn ends cancelled", async () => {
    const p = await start();
    const [prompt] = answer(p, review(p, "wait"), { sessionId: "sub-1" }).toAgent;
    const cancel = p.fromClient("session/cancel", { sessionId: "user-1" });
    expect(cancel.toAgent.map((m) => m.params.sessionId)).toEqual(["sub-1", "user-1"]);
    const end = answer(p, prompt, { stopReason: "cancelled" });
    expect(end.toClient).toEqual([]);
    expect(end.answers).toEqual([{ jsonrpc: "2.0", id: 5, result: { stopReason: "cancelled" } }]);
  });

  it("without the grants the user is told which to give", async () => {
    const p = await start();
    const setup = review(p, "x");
    const out = p.send(refusedForGrant(setup, "subagent"));
    expect(out.toClient).toEqual([
      clientUpdate(
        textChunk(
          '/review cannot run: grant agent:sessions to this proxy to let it start subagents (in the chain config: "grants": ["agent:sessions", "agent:prompt"]).',
        ),
        "user-1",
      ),
    ]);
    expect(out.answers).toEqual([{ jsonrpc: "2.0", id: 5, result: { stopReason: "end_turn" } }]);
    expect(p.logs.map((l) => l.message)).toContain("/review: grant agent:sessions to this proxy to let it start subagents");
  });

  it("its manifest asks for the two grants, watches what it handles and checks its config", async () => {
    const m = exampleManifest("subagent");
    expect(m?.grants).toEqual(["agent:sessions", "agent:prompt"]);
    expect(m?.watches?.methods).toEqual(expect.arrayContaining(["session/prompt", "session/cancel", "session/new"]));
    expect(m?.watches?.updates).toEqual(["available_commands_update"]);
    expect(await configProblems(m, { permissions: "allow", prompt: "Review: {text}" })).toEqual([]);
    expect((await configProblems(m, { permissions: "yes" })).join("\n")).toMatch(/permissions/);
    expect(await configProblems(m, { prompts: "typo" })).not.toEqual([]);
  });
});
