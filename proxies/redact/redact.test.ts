import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { configProblems } from "../../runtime/sandbox/manifest.js";
import {
  agentUpdate,
  clientUpdate,
  exampleManifest,
  type Json,
  loadExampleProxy,
  ProxyUnderTest,
  proxyUnderTest,
  textChunk,
} from "../../sdk-as/test/harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadExampleProxy("redact");
});

const M = "[REDACTED]";
const OPENAI = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z";
const ANTHROPIC = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_aB";
const GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
const GH_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz";
const AWS = "AKIAIOSFODNN7EXAMPLE";
const SLACK = "xoxb-1234567890-abcdefGHIJKL";
const BEARER_TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_value-123";

/**
 * Delivers one agent text chunk, then the client's `session/cancel` (which flushes what redact held
 * back), and returns all the text the client got, joined.
 */
function chunkThrough(p: ProxyUnderTest, text: string, kind = "agent_message_chunk"): string {
  const out = [
    ...p.deliver(agentUpdate(textChunk(text, kind))),
    ...p.deliver({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "sess-1" } }),
  ];
  const updates = out.filter((m) => m.method === "session/update");
  for (const u of updates) expect(u.params.update.sessionUpdate).toBe(kind);
  return updates.map((u) => u.params.update.content.text).join("");
}

/** The texts the client gets for a stream of chunks of one session (no flush). */
function streamThrough(p: ProxyUnderTest, chunks: string[], sessionId = "sess-1", kind = "agent_message_chunk"): string[] {
  return chunks.flatMap((text) =>
    p
      .deliver(agentUpdate(textChunk(text, kind), sessionId))
      .filter((m) => m.method === "session/update")
      .map((m) => m.params.update.content.text),
  );
}

describe("redact proxy", () => {
  it("masks each built-in kind of key in agent message and thought chunks", async () => {
    const p = await proxyUnderTest(component);
    expect(chunkThrough(p, `openai ${OPENAI} and anthropic=${ANTHROPIC}.`)).toBe(`openai ${M} and anthropic=${M}.`);
    expect(chunkThrough(p, `tokens: "${GHP}", '${GH_PAT}'`, "agent_thought_chunk")).toBe(`tokens: "${M}", '${M}'`);
    expect(chunkThrough(p, `export AWS_ACCESS_KEY_ID=${AWS}\nslack ${SLACK}`)).toBe(`export AWS_ACCESS_KEY_ID=${M}\nslack ${M}`);
    expect(chunkThrough(p, `curl -H "Authorization: Bearer ${BEARER_TOKEN}" https://x`)).toBe(
      `curl -H "Authorization: Bearer ${M}" https://x`,
    );
    expect(chunkThrough(p, `${OPENAI}`)).toBe(M);
  });

  it("leaves near misses alone and passes clean chunks through byte-for-byte", async () => {
    const p = await proxyUnderTest(component);
    const clean = [
      "sk-short is not a key",
      "task-AbCdEfGhIjKlMnOpQrStUvWxYz is not sk- at a word boundary",
      "ghp_tooShort123 ",
      "AKIAIOSFODNN7EXAMPLEX (too long for an access key id)",
      "akiaiosfodnn7example (lower case)",
      "Bearer short!",
      "xoxz-1234567890-abcdef (not a slack prefix)",
      'plain text with ünïcödé 😀 and "quotes"',
    ];
    for (const text of clean) {
      const params = JSON.stringify({ sessionId: "s", update: textChunk(text) });
      expect(p.deliverRaw(`{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":${params}}}`)).toEqual([
        `{"jsonrpc":"2.0","method":"session/update","params":${params}}`,
      ]);
    }
    expect(p.logs).toEqual([]);
  });

  it("masks configured literal patterns with the configured mask, longest first", async () => {
    const p = await proxyUnderTest(component, { patterns: ["hunter2", "hunter2-prod", ""], mask: "***" });
    expect(chunkThrough(p, "pw hunter2 / hunter2-prod / Hunter2")).toBe("pw *** / *** / Hunter2");
    expect(chunkThrough(p, `and ${OPENAI}`)).toBe("and ***");
  });

  it("can run with literal patterns only", async () => {
    const p = await proxyUnderTest(component, { patterns: ["s3cr3t"], builtin: false });
    expect(chunkThrough(p, `s3cr3t ${OPENAI}`)).toBe(`${M} ${OPENAI}`);
  });

  it("masks tool call titles, text content, diffs and raw input/output, keeping the rest", async () => {
    const p = await proxyUnderTest(component);
    const update: Json = {
      sessionUpdate: "tool_call",
      toolCallId: "t1",
      title: `Run curl with ${GHP}`,
      kind: "execute",
      status: "in_progress",
      content: [
        { type: "content", content: { type: "text", text: `output: ${AWS}` } },
        { type: "diff", path: "/w/.env", oldText: "KEY=", newText: `KEY=${OPENAI}` },
        { type: "terminal", terminalId: "term-1" },
        { type: "content", content: { type: "image", data: "AAAA", mimeType: "image/png" } },
      ],
      rawInput: { command: ["curl", "-H", `Authorization: Bearer ${BEARER_TOKEN}`], n: 3 },
      rawOutput: { stdout: `token=${SLACK}\n`, nested: [{ v: OPENAI }, 1, null] },
      _meta: { untouched: OPENAI },
    };
    const [out] = p.deliver(agentUpdate(update));
    expect(out).toEqual(
      clientUpdate({
        ...update,
        title: `Run curl with ${M}`,
        content: [
          { type: "content", content: { type: "text", text: `output: ${M}` } },
          { type: "diff", path: "/w/.env", oldText: "KEY=", newText: `KEY=${M}` },
          { type: "terminal", terminalId: "term-1" },
          { type: "content", content: { type: "image", data: "AAAA", mimeType: "image/png" } },
        ],
        rawInput: { command: ["curl", "-H", `Authorization: Bearer ${M}`], n: 3 },
        rawOutput: { stdout: `token=${M}\n`, nested: [{ v: M }, 1, null] },
      }),
    );
    expect(p.logs).toEqual([{ level: "info", message: "masked 6 secrets in tool_call (6 so far)" }]);
    p.deliver(
      agentUpdate({
        sessionUpdate: "tool_call_update",
        toolCallId: "t1",
        content: [{ type: "content", content: { type: "text", text: GH_PAT } }],
      }),
    );
    expect(p.logs.at(-1)).toEqual({ level: "info", message: "masked 1 secret in tool_call_update (7 so far)" });
  });

  it("masks the tool call shown in a permission request and still relays the client's answer", async () => {
    const p = await proxyUnderTest(component);
    const params = {
      sessionId: "s",
      toolCall: { toolCallId: "t2", title: `echo ${OPENAI}`, rawInput: { command: `echo ${OPENAI}` } },
      options: [{ optionId: "ok", name: "Allow", kind: "allow_once" }],
    };
    const [fwd] = p.deliver(ProxyUnderTest.fromAgent({ method: "session/request_permission", params }, "perm-1"));
    expect(fwd).toEqual({
      jsonrpc: "2.0",
      id: fwd.id,
      method: "session/request_permission",
      params: { ...params, toolCall: { toolCallId: "t2", title: `echo ${M}`, rawInput: { command: `echo ${M}` } } },
    });
    expect(p.deliver({ jsonrpc: "2.0", id: fwd.id, result: { outcome: { outcome: "selected", optionId: "ok" } } })).toEqual([
      { jsonrpc: "2.0", id: "perm-1", result: { outcome: { outcome: "selected", optionId: "ok" } } },
    ]);
  });

  it("masks a key behind member names spelled with escapes, or written with escapes itself", async () => {
    const p = await proxyUnderTest(component);
    const reads = (params: string) => {
      const [out] = p.deliverRaw(`{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":${params}}}`);
      return JSON.parse(out).params.update; // what a client's JSON.parse sees
    };
    // `"t\u0065xt"` is `text` to the client: the chunk's text must be masked all the same.
    const chunk = reads(
      `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","t\\u0065xt":"key ${OPENAI}."}}}`,
    );
    expect(chunk.content.text).toBe(`key ${M}.`);
    const escapedKind = reads(
      `{"sessionId":"s","update":{"s\\u0065ssionUpdate":"agent_message_chunk","c\\u006fntent":{"\\u0074ype":"text","text":"${GHP}."}}}`,
    );
    expect(escapedKind.content.text).toBe(`${M}.`);
    // A repeated name: the client keeps the last one, so that is the one to mask.
    const repeated = reads(
      `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok","te\\u0078t":"${AWS}."}}}`,
    );
    expect(repeated.content.text).toBe(`${M}.`);
    const tool = reads(
      `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","t\\u0069tle":"curl ${SLACK}","rawInput":{"t\\u006fken":"${GH_PAT}"}}}`,
    );
    expect([tool.title, tool.rawInput.token]).toEqual([`curl ${M}`, M]);
    // An escaped slash inside a bearer token is still one token to the client.
    const bearer = reads(
      `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"Bearer abcdefghij\\/klmnopqrstuv"}}`,
    );
    expect(bearer.title).toBe(`Bearer ${M}`);
  });

  it("logs a count per message, never the secret", async () => {
    const p = await proxyUnderTest(component);
    chunkThrough(p, `${OPENAI} ${OPENAI}.`);
    chunkThrough(p, "nothing here");
    chunkThrough(p, `${AWS} `);
    expect(p.logs).toEqual([
      { level: "info", message: "masked 2 secrets in agent_message_chunk (2 so far)" },
      { level: "info", message: "masked 1 secret in agent_message_chunk (3 so far)" },
    ]);
    expect(p.wire.join("\n")).not.toContain(OPENAI);
  });

  it("catches a key split across two chunks: the possible start is held back and sent with the next chunk", async () => {
    const p = await proxyUnderTest(component);
    for (const key of [OPENAI, ANTHROPIC, GHP, GH_PAT, AWS, SLACK]) {
      for (const at of [1, 2, 3, 4, 5, 11, key.length - 1]) {
        expect(streamThrough(p, [`before ${key.slice(0, at)}`, `${key.slice(at)} after`]).join("")).toBe(`before ${M} after`);
      }
    }
    expect(streamThrough(p, ["Authorization: Bea", "rer ", BEARER_TOKEN.slice(0, 9), `${BEARER_TOKEN.slice(9)}\n`]).join("")).toBe(
      `Authorization: Bearer ${M}\n`,
    );
    // across three chunks, and the clean part is never held
    expect(streamThrough(p, ["key: s", "k-proj-Ab3dEf6hIj", "9kLm2nOp5qRs8tUv1wXy4z!"])).toEqual(["key: ", `${M}!`]);
    expect(p.wire.join("\n")).not.toContain(OPENAI.slice(3, 12));
  });

  it("catches a configured literal split across chunks, in escaped and multi-byte text", async () => {
    const p = await proxyUnderTest(component, { patterns: ["pässwörd-😀-42"] });
    expect(streamThrough(p, ["my pä", "sswörd-\ud83d", "\ude00-42 ✓"])).toEqual(["my ", `${M} ✓`]);
    // the chunk arrives with its text spelled in escapes
    const raw = (text: string) =>
      p.deliverRaw(
        `{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"${text}"}}}}}`,
      );
    expect(raw("x p\\u00e4ssw\\u00f6rd")).toEqual([
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x "}}}}',
    ]);
    const [rest] = raw("-\\ud83d\\ude00-42\\n");
    expect(JSON.parse(rest).params.update.content.text).toBe(`${M}\n`);
    // a near miss that turns out not to be the literal is sent on as it was
    expect(streamThrough(p, ["pässw", "ort"]).join("")).toBe("pässwort");
  });

  it("flushes what it holds when the turn ends (before the answer), on session/cancel, and before other updates", async () => {
    const p = await proxyUnderTest(component);
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 5, method: "session/prompt", params: { sessionId: "sess-1", prompt: [] } });
    expect(streamThrough(p, ["the key is sk-proj-Ab3d"])).toEqual(["the key is "]);
    // the turn ends: the held text goes out (not a key yet: as it is) before the answer
    expect(p.deliver({ jsonrpc: "2.0", id: fwd.id, result: { stopReason: "end_turn" } })).toEqual([
      clientUpdate(textChunk("sk-proj-Ab3d")),
      { jsonrpc: "2.0", id: 5, result: { stopReason: "end_turn" } },
    ]);
    // a whole key held at the end of a chunk is masked when flushed by session/cancel
    expect(streamThrough(p, [`done: ${OPENAI}`])).toEqual(["done: "]);
    const cancelled = p.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "sess-1" } });
    expect(cancelled.toClient).toEqual([clientUpdate(textChunk(M))]);
    expect(cancelled.toAgent).toEqual([{ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "sess-1" } }]);
    // another update of the session (a plan, a thought) goes after the held text, in order
    expect(streamThrough(p, ["thinking about ghp_"])).toEqual(["thinking about "]);
    const plan = { sessionUpdate: "plan", entries: [] };
    expect(p.deliver(agentUpdate(plan))).toEqual([clientUpdate(textChunk("ghp_")), clientUpdate(plan)]);
    expect(streamThrough(p, ["x sk-", "!"], "sess-1")).toEqual(["x ", "sk-!"]);
    // sessions do not mix: each holds its own
    expect(streamThrough(p, ["a: sk-proj-"], "sess-A")).toEqual(["a: "]);
    expect(streamThrough(p, ["b: hello"], "sess-B")).toEqual(["b: hello"]);
    expect(streamThrough(p, ["Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z."], "sess-A")).toEqual([`${M}.`]);
    // a thought chunk after a held message chunk: the message part goes first, as a message
    expect(streamThrough(p, ["m: AKIA"])).toEqual(["m: "]);
    expect(p.deliver(agentUpdate(textChunk("t", "agent_thought_chunk")))).toEqual([
      clientUpdate(textChunk("AKIA")),
      clientUpdate(textChunk("t", "agent_thought_chunk")),
    ]);
  });

  it("does not touch what the client sends", async () => {
    const p = await proxyUnderTest(component);
    const [out] = p.deliver({
      jsonrpc: "2.0",
      id: 1,
      method: "session/prompt",
      params: { sessionId: "s", prompt: [{ type: "text", text: OPENAI }] },
    });
    expect(out.params.params.prompt[0].text).toBe(OPENAI);
  });

  it("embeds a manifest whose config schema accepts its config and refuses mistakes", async () => {
    const manifest = exampleManifest("redact");
    expect(manifest?.name).toBe("redact");
    expect(manifest?.description).toBeTruthy();
    expect(await configProblems(manifest, { patterns: ["a"], mask: "*", builtin: false })).toEqual([]);
    expect(await configProblems(manifest, { pattern: ["a"] })).not.toEqual([]);
  });
});
