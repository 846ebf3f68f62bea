// The skills proxy in the SDK's testing kit (real .wasm): the list in each session's first prompt,
// per-session resources, reads refused across sessions, prompts, and what it does without MCP.
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { configProblems } from "../../runtime/sandbox/manifest.js";
import {
  clientPrompt,
  exampleManifest,
  type Json,
  loadExampleProxy,
  mcpConnect,
  mcpListAll,
  mcpProxyUnderTest,
  mcpRequest,
  newSession,
  type ProxyUnderTest,
  proxyUnderTest,
  resourceText,
} from "../../sdk-as/test/harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadExampleProxy("skills");
}, 180_000); // a build under load can take minutes

const DEPLOY = '# Deploy\n1. Run `make release`.\n2. Tag it — "vX.Y" ✓';
const CONFIG = {
  skills: [
    { name: "deploy", description: "Ship a release", body: DEPLOY },
    { name: "triage", body: "Label the issue." },
  ],
};

/** A prompt from the client side: the prompt the successor got. */
function forwardedPrompt(p: ProxyUnderTest, sessionId: string, text: string): Json[] {
  const [out] = p.deliver(clientPrompt(text, sessionId, p.nextId()));
  expect(out.params.method).toBe("session/prompt");
  p.deliver({ jsonrpc: "2.0", id: out.id, result: { stopReason: "end_turn" } });
  return out.params.params.prompt;
}

const serverOf = (declared: Json[]) => declared.find((d) => d.name === "skills")!.serverId;

describe("skills proxy", () => {
  it("adds the list of skills, with each one's resource URI, to each session's first prompt only", async () => {
    const p = await mcpProxyUnderTest(component, CONFIG);
    newSession(p, "s/1");
    newSession(p, "s2");
    const first = forwardedPrompt(p, "s/1", "hello");
    expect(first).toEqual([
      {
        type: "text",
        text:
          'Skills available in this session (MCP server "skills"; read a skill\'s resource before you use it):\n' +
          "- deploy: Ship a release (skill://s%2F1/deploy)\n- triage (skill://s%2F1/triage)",
      },
      { type: "text", text: "hello" },
    ]);
    expect(forwardedPrompt(p, "s/1", "again")).toEqual([{ type: "text", text: "again" }]);
    expect(forwardedPrompt(p, "s2", "hi")[0].text).toContain("(skill://s2/deploy)");
  });

  it("lists and serves each session's skills as resources, and refuses a read of another session's", async () => {
    const p = await mcpProxyUnderTest(component, CONFIG);
    const a = serverOf(newSession(p, "sa"));
    const b = serverOf(newSession(p, "sb"));
    const init = mcpRequest(p, { serverId: a }, "initialize", { protocolVersion: "2025-11-25" }).result;
    expect(init.capabilities).toEqual({ resources: { listChanged: false }, prompts: { listChanged: false } });
    expect(mcpRequest(p, { serverId: a }, "resources/list").result).toEqual({
      resources: [
        {
          uri: "skill://sa/deploy",
          name: "deploy",
          description: "Ship a release",
          mimeType: "text/markdown",
          size: Buffer.byteLength(DEPLOY),
        },
        { uri: "skill://sa/triage", name: "triage", mimeType: "text/markdown", size: 16 },
      ],
    });
    expect(mcpRequest(p, { serverId: a }, "resources/read", { uri: "skill://sa/deploy" }).result).toEqual({
      contents: [{ uri: "skill://sa/deploy", mimeType: "text/markdown", text: DEPLOY }],
    });
    const connection = mcpConnect(p, b);
    expect(mcpListAll(p, { connectionId: connection }, "resources/list", "resources").map((r) => r.uri)).toEqual([
      "skill://sb/deploy",
      "skill://sb/triage",
    ]);
    expect(resourceText(mcpRequest(p, { connectionId: connection }, "resources/read", { uri: "skill://sb/triage" }).result)).toBe(
      "Label the issue.",
    );
    // session b's connections cannot read session a's skills
    expect(mcpRequest(p, { connectionId: connection }, "resources/read", { uri: "skill://sa/deploy" }).error).toEqual({
      code: -32002,
      message: "Resource not found: skill://sa/deploy",
    });
    expect(mcpRequest(p, { serverId: b }, "resources/read", { uri: "skill://sa/deploy" }).error?.code).toBe(-32002);
    expect(mcpRequest(p, { serverId: a }, "resources/read", { uri: "skill://sa/nope" }).error?.code).toBe(-32002);
  });

  it("serves each skill as a prompt too", async () => {
    const p = await mcpProxyUnderTest(component, CONFIG);
    const a = serverOf(newSession(p, "sa"));
    expect(mcpRequest(p, { serverId: a }, "prompts/list").result.prompts).toEqual([
      { name: "deploy", description: "Ship a release" },
      { name: "triage" },
    ]);
    expect(mcpRequest(p, { serverId: a }, "prompts/get", { name: "deploy" }).result).toEqual({
      description: "Ship a release",
      messages: [{ role: "user", content: { type: "text", text: DEPLOY } }],
    });
  });

  it("offers nothing (and warns once) when the agent side cannot reach its MCP server", async () => {
    const p = await proxyUnderTest(component, { ...CONFIG, serverName: "sk" });
    newSession(p, "s1");
    newSession(p, "s2");
    expect(forwardedPrompt(p, "s1", "hello")).toEqual([{ type: "text", text: "hello" }]);
    expect(forwardedPrompt(p, "s2", "hello")).toEqual([{ type: "text", text: "hello" }]);
    expect(p.logs.filter((l) => l.message.includes("skills are not offered"))).toHaveLength(1);
  });

  it("skips a skill without a name or body, with a warning; no skills: prompts pass unchanged", async () => {
    const p = await mcpProxyUnderTest(component, { skills: [{ name: "x" }, { name: "ok", body: "b" }] });
    newSession(p, "s");
    expect(forwardedPrompt(p, "s", "hi")[0].text).toContain("- ok (skill://s/ok)");
    expect(p.logs.map((l) => l.message)).toContain("skills[0] needs a name and a body; skipped");
    const empty = await mcpProxyUnderTest(component, {});
    newSession(empty, "s");
    expect(forwardedPrompt(empty, "s", "hi")).toEqual([{ type: "text", text: "hi" }]);
  });

  it("declares what it watches, needs no grant, and checks its config", async () => {
    const manifest = exampleManifest("skills")!;
    expect(manifest.grants ?? []).toEqual([]);
    expect(manifest.watches?.methods).toEqual(expect.arrayContaining(["session/new", "session/prompt", "mcp/message"]));
    expect(manifest.watches?.updates).toEqual([]);
    expect(await configProblems(manifest, CONFIG)).toEqual([]);
    expect(await configProblems(manifest, { skills: [{ name: "x" }] })).not.toEqual([]);
  });
});
