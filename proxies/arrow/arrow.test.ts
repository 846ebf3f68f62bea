import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { configProblems } from "../../runtime/sandbox/manifest.js";
import {
  agentUpdate,
  clientUpdate,
  exampleManifest,
  loadExampleProxy,
  ProxyUnderTest,
  proxyUnderTest,
  textChunk,
} from "../../sdk-as/test/harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadExampleProxy("arrow");
});

describe("arrow proxy", () => {
  it("prefixes > to the text of agent_message_chunk updates, keeping every other field", async () => {
    const p = await proxyUnderTest(component);
    const update = {
      sessionUpdate: "agent_message_chunk",
      messageId: "m1",
      content: { type: "text", text: "Hello", annotations: { priority: 1 } },
      _meta: { k: "v" },
    };
    expect(p.deliver(agentUpdate(update))).toEqual([clientUpdate({ ...update, content: { ...update.content, text: ">Hello" } })]);
  });

  it("N arrows in a chain give N > (each hop adds one)", async () => {
    const hops = await Promise.all([1, 2, 3].map(() => proxyUnderTest(component)));
    let msg = agentUpdate(textChunk("hi"));
    for (const hop of hops) {
      const [out] = hop.deliver(msg);
      // what hop i sends its predecessor reaches hop i-1 wrapped
      msg = ProxyUnderTest.fromAgent({ method: out.method, params: out.params });
    }
    expect(msg.params.params.update.content.text).toBe(">>>hi");
  });

  it("leaves thought chunks, non-text chunks, tool calls and unknown variants byte-for-byte alone", async () => {
    const p = await proxyUnderTest(component);
    for (const params of [
      '{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm \\u00e9"}}}',
      '{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AAAA","mimeType":"image/png"}}}',
      '{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","status":"pending"}}',
      '{"sessionId":"s","update":{"sessionUpdate":"future_variant","text":"x"}}',
    ]) {
      expect(p.deliverRaw(`{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":${params}}}`)).toEqual([
        `{"jsonrpc":"2.0","method":"session/update","params":${params}}`,
      ]);
    }
  });

  it("keeps escapes and non-ASCII text intact when it edits", async () => {
    const p = await proxyUnderTest(component);
    const text = 'line "one"\nline \\two\\ — ünï 😀 \u0001';
    const [out] = p.deliver(agentUpdate(textChunk(text)));
    expect(out.params.update.content.text).toBe(`>${text}`);
  });

  it("does not touch client→agent traffic", async () => {
    const p = await proxyUnderTest(component);
    const params = '{"sessionId":"s","prompt":[{"type":"text","text":"agent_message_chunk"}]}';
    const [out] = p.deliverRaw(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":${params}}`);
    expect(out).toContain(`"params":${params}}}`);
  });

  it("embeds a manifest whose config schema accepts its config and refuses mistakes", async () => {
    const manifest = exampleManifest("arrow");
    expect(manifest?.name).toBe("arrow");
    expect(manifest?.description).toBeTruthy();
    expect(await configProblems(manifest, {})).toEqual([]);
    expect(await configProblems(manifest, { prefix: ">" })).not.toEqual([]);
  });
});
