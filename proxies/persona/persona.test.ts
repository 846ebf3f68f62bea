import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { configProblems } from "../../runtime/sandbox/manifest.js";
import {
  agentUpdate,
  clientUpdate,
  exampleManifest,
  loadExampleProxy,
  mcpConnect,
  mcpProxyUnderTest,
  mcpRequest,
  newSession,
  setupSession,
  textChunk,
  toolText,
} from "../../sdk-as/test/harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadExampleProxy("persona");
});

const SPARKLE = { name: "Sparkle", embodiment: "You are Sparkle ✨, a cheerful assistant. Answer with enthusiasm." };
const userPrompt = (sessionId: string, text: string) => ({ sessionId, prompt: [{ type: "text", text }] });

describe("persona: the embodiment turn", () => {
  it("holds the first prompt, embodies first (its updates reach the client, its answer does not), then sends the user's prompt", async () => {
    const p = await mcpProxyUnderTest(component, SPARKLE);
    const [decl] = newSession(p, "s1");
    expect(decl).toMatchObject({ type: "acp", name: "persona" });

    const [embody] = p.deliver({ jsonrpc: "2.0", id: 1, method: "session/prompt", params: userPrompt("s1", "hello") });
    expect(embody).toEqual({
      jsonrpc: "2.0",
      id: embody.id,
      method: "proxy/successor",
      params: { method: "session/prompt", params: { sessionId: "s1", prompt: [{ type: "text", text: SPARKLE.embodiment }] } },
    });
    expect(p.logs.map((l) => l.message)).toContain("embodying Sparkle in session s1 before the user's first prompt");
    // the embodiment turn's updates go to the client
    expect(p.deliver(agentUpdate(textChunk("I am Sparkle!"), "s1"))).toEqual([clientUpdate(textChunk("I am Sparkle!"), "s1")]);
    // the persona's tool is callable while it runs, and says so
    expect(toolText(mcpRequest(p, { serverId: decl.serverId }, "tools/call", { name: "persona_info" }).result)).toBe(
      `You are Sparkle. Session s1: the embodiment turn is running.\nInstructions: ${SPARKLE.embodiment}`,
    );
    // its answer is discarded; the user's prompt goes on, exactly as it was received
    const [user] = p.deliver({ jsonrpc: "2.0", id: embody.id, result: { stopReason: "end_turn" } });
    expect(user).toEqual({
      jsonrpc: "2.0",
      id: user.id,
      method: "proxy/successor",
      params: { method: "session/prompt", params: userPrompt("s1", "hello") },
    });
    expect(p.deliver(agentUpdate(textChunk("Hello!!"), "s1"))).toEqual([clientUpdate(textChunk("Hello!!"), "s1")]);
    expect(p.deliver({ jsonrpc: "2.0", id: user.id, result: { stopReason: "end_turn" } })).toEqual([
      { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } },
    ]);

    // later prompts pass straight through
    const [second] = p.deliver({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: userPrompt("s1", "again") });
    expect(second.params.params).toEqual(userPrompt("s1", "again"));
    expect(
      toolText(mcpRequest(p, { connectionId: mcpConnect(p, decl.serverId) }, "tools/call", { name: "persona_info" }).result),
    ).toContain("Session s1: embodied.");
  });

  it("embodies each new session once, and not loaded, resumed or forked ones", async () => {
    const p = await mcpProxyUnderTest(component, SPARKLE);
    newSession(p, "a");
    newSession(p, "b");
    setupSession(p, "session/load", { sessionId: "old", cwd: "/w", mcpServers: [] }, {});
    setupSession(p, "session/resume", { sessionId: "older", cwd: "/w" }, {});
    setupSession(p, "session/fork", { sessionId: "a", cwd: "/w", mcpServers: [] }, { sessionId: "a-fork" });
    const sent = (session: string) =>
      p.deliver({ jsonrpc: "2.0", id: p.nextId(), method: "session/prompt", params: userPrompt(session, "hi") })[0];
    const ea = sent("a");
    const eb = sent("b");
    expect(ea.params.params.prompt[0].text).toBe(SPARKLE.embodiment);
    expect(eb.params.params.prompt[0].text).toBe(SPARKLE.embodiment);
    for (const s of ["old", "older", "a-fork"]) expect(sent(s).params.params.prompt[0].text).toBe("hi");
    // the two embodiment turns end in the other order; each releases its own session's prompt
    expect(p.deliver({ jsonrpc: "2.0", id: eb.id, result: { stopReason: "end_turn" } })[0].params.params).toEqual(userPrompt("b", "hi"));
    expect(p.deliver({ jsonrpc: "2.0", id: ea.id, result: { stopReason: "end_turn" } })[0].params.params).toEqual(userPrompt("a", "hi"));
  });

  it("session/cancel during the embodiment turn cancels both; the next prompt embodies again", async () => {
    const p = await mcpProxyUnderTest(component, SPARKLE);
    newSession(p, "s");
    const [embody] = p.deliver({ jsonrpc: "2.0", id: 10, method: "session/prompt", params: userPrompt("s", "first") });
    const cancel = p.deliver({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
    expect(cancel).toEqual([
      { jsonrpc: "2.0", id: 10, result: { stopReason: "cancelled" } },
      { jsonrpc: "2.0", method: "proxy/successor", params: { method: "session/cancel", params: { sessionId: "s" } } },
    ]);
    // the agent ends the embodiment turn cancelled: nothing more reaches the client, nothing goes to the agent
    expect(p.deliver({ jsonrpc: "2.0", id: embody.id, result: { stopReason: "cancelled" } })).toEqual([]);
    const [again] = p.deliver({ jsonrpc: "2.0", id: 11, method: "session/prompt", params: userPrompt("s", "second") });
    expect(again.params.params.prompt[0].text).toBe(SPARKLE.embodiment);
    expect(p.deliver({ jsonrpc: "2.0", id: again.id, result: { stopReason: "end_turn" } })[0].params.params).toEqual(
      userPrompt("s", "second"),
    );
  });

  it("$/cancel_request for the held prompt withdraws the embodiment turn and answers it cancelled", async () => {
    const p = await mcpProxyUnderTest(component, SPARKLE);
    newSession(p, "s");
    const [embody] = p.deliver({ jsonrpc: "2.0", id: "u1", method: "session/prompt", params: userPrompt("s", "x") });
    expect(p.deliver({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: "u1" } })).toEqual([
      { jsonrpc: "2.0", method: "proxy/successor", params: { method: "$/cancel_request", params: { requestId: embody.id } } },
      { jsonrpc: "2.0", id: "u1", error: { code: -32800, message: "Request cancelled" } },
    ]);
    expect(p.deliver({ jsonrpc: "2.0", id: embody.id, error: { code: -32800, message: "cancelled" } })).toEqual([]);
  });

  it("sends the user's prompt even when the embodiment turn fails, with a warning", async () => {
    const p = await mcpProxyUnderTest(component, SPARKLE);
    newSession(p, "s");
    const [embody] = p.deliver({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: userPrompt("s", "hi") });
    const [user] = p.deliver({ jsonrpc: "2.0", id: embody.id, error: { code: -32603, message: "model overloaded" } });
    expect(user.params.params).toEqual(userPrompt("s", "hi"));
    expect(p.logs.find((l) => l.level === "warn")?.message).toBe(
      "the embodiment turn of session s failed (model overloaded); sending the user's prompt anyway",
    );
  });

  it("without an embodiment it passes prompts through and still serves its tool", async () => {
    const p = await mcpProxyUnderTest(component, { name: "Quiet", serverName: "who" });
    const [decl] = newSession(p, "s");
    expect(decl.name).toBe("who");
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 1, method: "session/prompt", params: userPrompt("s", "hi") });
    expect(fwd.params.params).toEqual(userPrompt("s", "hi"));
    expect(toolText(mcpRequest(p, { serverId: decl.serverId }, "tools/call", { name: "persona_info" }).result)).toBe(
      "You are Quiet. Session s: not embodied yet.\nInstructions: (none configured)",
    );
    expect(p.logs.map((l) => l.message)).toContain("no embodiment configured: prompts pass through unchanged");
  });

  it("embeds a manifest whose schema takes its config", async () => {
    const manifest = exampleManifest("persona");
    expect(await configProblems(manifest, SPARKLE)).toEqual([]);
    expect(await configProblems(manifest, { embodyment: "typo" })).not.toEqual([]);
  });
});
