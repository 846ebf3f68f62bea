import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { configProblems } from "../../runtime/sandbox/manifest.js";
import { agentUpdate, clientUpdate, exampleManifest, loadExampleProxy, proxyUnderTest, textChunk } from "../../sdk-as/test/harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadExampleProxy("context");
});

const AGENTS_MD = '# House rules\n- Use "tabs".\n- Never push to main. ✅';

describe("context proxy", () => {
  it("prepends the configured text block to every session/prompt", async () => {
    const p = await proxyUnderTest(component, { text: AGENTS_MD });
    for (const id of [1, "two", 3]) {
      const prompt = [
        { type: "text", text: "fix the bug" },
        { type: "resource_link", uri: "file:///src/a.ts", name: "a.ts", _meta: { x: 1 } },
      ];
      const [out] = p.deliver({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId: "s1", prompt, _meta: { trace: "t" } } });
      expect(out).toEqual({
        jsonrpc: "2.0",
        id: out.id,
        method: "proxy/successor",
        params: {
          method: "session/prompt",
          params: { sessionId: "s1", prompt: [{ type: "text", text: AGENTS_MD }, ...prompt], _meta: { trace: "t" } },
        },
      });
      expect(p.deliver({ jsonrpc: "2.0", id: out.id, result: { stopReason: "end_turn" } })).toEqual([
        { jsonrpc: "2.0", id, result: { stopReason: "end_turn" } },
      ]);
    }
  });

  it("adds a prompt array when the request has none", async () => {
    const p = await proxyUnderTest(component, { text: "ctx" });
    const [out] = p.deliver({ jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s" } });
    expect(out.params.params).toEqual({ sessionId: "s", prompt: [{ type: "text", text: "ctx" }] });
  });

  it("splices the block into empty and oddly spaced prompt arrays, leaving the rest of the text as it was", async () => {
    const p = await proxyUnderTest(component, { text: "ctx" });
    for (const [prompt, expected] of [
      ["[]", '[{"type":"text","text":"ctx"}]'],
      ["[ \n ]", '[ \n {"type":"text","text":"ctx"}]'],
      ['[ {"type":"text","text":"hi"} ]', '[ {"type":"text","text":"ctx"},{"type":"text","text":"hi"} ]'],
    ]) {
      const [out] = p.deliverRaw(
        `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt" : ${prompt},"n":1.50}}`,
      );
      expect(out).toBe(
        `{"jsonrpc":"2.0","id":${JSON.parse(out).id},"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s","prompt" : ${expected},"n":1.50}}}`,
      );
    }
  });

  it("forwards prompts untouched when no text is configured", async () => {
    const p = await proxyUnderTest(component, {});
    const params = '{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}';
    const [out] = p.deliverRaw(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":${params}}`);
    expect(out).toBe(
      `{"jsonrpc":"2.0","id":${JSON.parse(out).id},"method":"proxy/successor","params":{"method":"session/prompt","params":${params}}}`,
    );
  });

  it("leaves the rest of the session alone", async () => {
    const p = await proxyUnderTest(component, { text: "ctx" });
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    expect(fwd.params).toEqual({ method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    expect(p.deliver(agentUpdate(textChunk("ok")))).toEqual([clientUpdate(textChunk("ok"))]);
  });

  it("embeds a manifest whose config schema accepts its config and refuses mistakes", async () => {
    const manifest = exampleManifest("context");
    expect(manifest?.name).toBe("context");
    expect(manifest?.description).toBeTruthy();
    expect(await configProblems(manifest, { text: "House rules" })).toEqual([]);
    expect(await configProblems(manifest, { txt: "typo" })).not.toEqual([]);
  });
});
