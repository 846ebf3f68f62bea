/**
 * Load and abuse at the chain level: an agent killed mid-prompt, many concurrent sessions with
 * permission round trips through three proxies, and a fuzzer feeding the conductor mutated
 * JSON-RPC while real traffic goes on. Counts and order are asserted, never timings (beyond the
 * "answered within a second" promise for a dead agent).
 */
import { afterEach, describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, REFERENCE_AGENT, SCRIPTED_AGENT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";

const pass = ["--proxy", proxyWasm("passthrough")];
const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

function start(args: string[], agent = SCRIPTED_AGENT): RawClient {
  const client = new RawClient(NODE, [CORDON, "run", ...args, "--", ...agent]);
  open.push(client);
  return client;
}

const script = (steps: unknown[]) => [{ type: "text", text: JSON.stringify(steps) }];

describe("stress", () => {
  it("an agent killed mid-prompt: every pending request is answered within a second, with its stderr, and Cordon exits non-zero", async () => {
    const client = start([...pass, ...pass, ...pass]);
    await client.request("initialize", { protocolVersion: 1 });
    const sessions = await Promise.all([1, 2, 3].map(() => client.request("session/new", { cwd: "/tmp", mcpServers: [] })));
    const pending = sessions.map((s, i) =>
      client.request("session/prompt", {
        sessionId: s.result.sessionId,
        prompt: script(i === 0 ? [{ pid: true }, { waitCancel: true }] : [{ waitCancel: true }]),
      }),
    );
    const { params } = await client.waitFor((m) => m.method === "_test/pid");
    const killedAt = Date.now();
    process.kill(params.pid, "SIGKILL");
    const answers = await Promise.all(pending);
    const elapsed = Date.now() - killedAt;
    for (const a of answers) expect(a.error.message).toMatch(/agent ".*scripted-agent\.mjs" was killed by SIGKILL/);
    expect(elapsed).toBeLessThan(1000);
    expect((await client.exited).code).toBe(1);
  });

  it("50 sessions × 200 prompts with a permission round trip each, through 3 proxies: nothing lost, duplicated or reordered", async () => {
    const SESSIONS = 50;
    const PROMPTS = 200;
    const client = start([...pass, ...pass, ...pass]);
    client.onRequest = (m) => ({ result: { outcome: { outcome: "selected", optionId: `ok-${m.params.toolCall.toolCallId}` } } });
    await client.request("initialize", { protocolVersion: 1 });
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i++) ids.push((await client.request("session/new", { cwd: "/tmp", mcpServers: [] })).result.sessionId);
    const update = (sessionId: string, text: string) => ({
      send: {
        jsonrpc: "2.0",
        method: "session/update",
        params: { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
      },
    });
    await Promise.all(
      ids.map(async (sessionId) => {
        for (let p = 0; p < PROMPTS; p++) {
          const ask = {
            ask: {
              method: "session/request_permission",
              params: {
                sessionId,
                toolCall: { toolCallId: `${sessionId}/${p}` },
                options: [{ optionId: "x", name: "x", kind: "allow_once" }],
              },
            },
          };
          const res = await client.request("session/prompt", {
            sessionId,
            prompt: script([update(sessionId, `before ${p}`), ask, update(sessionId, `after ${p}`)]),
          });
          expect(res.result).toEqual({ stopReason: "end_turn" });
        }
      }),
    );
    for (const sessionId of ids) {
      const texts = client.received
        .filter((m) => m.method === "session/update" && m.params.sessionId === sessionId)
        .map((m) => m.params.update.content.text);
      expect(texts).toEqual(Array.from({ length: PROMPTS }, (_, p) => [`before ${p}`, `after ${p}`]).flat());
      const asked = client.received.filter((m) => m.method === "session/request_permission" && m.params.sessionId === sessionId);
      expect(asked.map((m) => m.params.toolCall.toolCallId)).toEqual(Array.from({ length: PROMPTS }, (_, p) => `${sessionId}/${p}`));
    }
    const responseIds = client.received.filter((m) => !("method" in m)).map((m) => m.id);
    expect(new Set(responseIds).size).toBe(responseIds.length); // no duplicated answers
  }, 180_000);

  it("a fuzzer's 100k mutated JSON-RPC lines do not crash the conductor; real traffic in between is still answered", async () => {
    const client = start(pass, REFERENCE_AGENT);
    await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    // The fuzz targets one session; each real prompt gets its own, which no fuzzed prompt can keep busy.
    // Real requests use ids no fuzzed line can carry, so no fuzzed answer is mistaken for theirs.
    let realId = 0;
    const newSession = async () =>
      (await client.request("session/new", { cwd: "/tmp", mcpServers: [] }, `new-${realId++}`)).result.sessionId as string;
    const sessionId = await newSession();
    const realSessions: string[] = [];
    let seed = 1337;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const seeds: Json[] = [
      { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "x" }] } },
      { jsonrpc: "2.0", method: "session/cancel", params: { sessionId } },
      { jsonrpc: "2.0", id: "r", result: { outcome: { outcome: "cancelled" } } },
      { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 3 } },
      { jsonrpc: "2.0", id: 9, method: "proxy/successor", params: { method: "initialize", params: {} } },
      {
        jsonrpc: "2.0",
        id: 10,
        method: "proxy/successor",
        params: { method: "proxy/successor", params: { method: "fs/read_text_file", params: { sessionId, path: "/etc/passwd" } } },
      },
      { jsonrpc: "2.0", method: "_cordon/configure", params: { name: "passthrough", config: {} } },
      { jsonrpc: "2.0", id: 11, method: "__proto__", params: JSON.parse('{"__proto__":{"x":1},"level":"constructor"}') },
      {
        jsonrpc: "2.0",
        id: 12,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: "d", _meta: JSON.parse("[".repeat(500) + "]".repeat(500)) }] },
      },
    ];
    const junk = ['"', "{", "}", "[", "]", ",", ":", "\\u0000", "null", "1e999", "-0", "\uD800", "😀", "\\", "true", '{"a":', "[[[[[[[["];
    const mutate = (m: Json): string => {
      let text = JSON.stringify(m);
      switch (rand(6)) {
        case 0: {
          const at = rand(text.length);
          return text.slice(0, at) + junk[rand(junk.length)] + text.slice(at + 1);
        }
        case 1:
          return text.slice(0, rand(text.length));
        case 2:
          return JSON.stringify({ ...m, id: [null, {}, [], 1.5, -1, 2 ** 60, "x".repeat(rand(50))][rand(7)] });
        case 3:
          return JSON.stringify({ ...m, method: [42, null, "", "_x/" + rand(1000), "session/prompt", "initialize"][rand(6)] });
        case 4:
          return JSON.stringify({ ...m, params: [null, 7, "s", [], { sessionId: rand(5) }, { prompt: "nope" }][rand(6)] });
        default:
          text = text.replace(/"jsonrpc":"2.0"/, ['"jsonrpc":"1.0"', '"jsonrpc":2', ""][rand(3)]);
          return text;
      }
    };
    const TOTAL = 100_000;
    const BATCH = 2_000;
    const real: Promise<Json>[] = [];
    for (let sent = 0; sent < TOTAL; sent += BATCH) {
      const lines: string[] = [];
      for (let i = 0; i < BATCH; i++) lines.push(mutate(seeds[rand(seeds.length)]));
      client.child.stdin!.write(lines.join("\n") + "\n");
      const realSession = await newSession();
      realSessions.push(realSession);
      real.push(
        client.request("session/prompt", { sessionId: realSession, prompt: [{ type: "text", text: `real ${sent}` }] }, `real-${sent}`),
      );
      await new Promise((r) => setTimeout(r, 5));
    }
    const answers = await Promise.all(real);
    // Each real prompt was answered, in full. (A fuzzed session/cancel may name any session; the
    // reference agent then ends that turn "cancelled" — still an answer.)
    expect(answers).toHaveLength(TOTAL / BATCH);
    answers.forEach((a, i) => {
      expect(["end_turn", "cancelled"], JSON.stringify(a)).toContain(a.result?.stopReason);
      if (a.result.stopReason !== "end_turn") return;
      const chunks = client.received.filter(
        (m) =>
          m.method === "session/update" &&
          m.params.sessionId === realSessions[i] &&
          m.params.update.sessionUpdate === "agent_message_chunk",
      );
      expect(chunks.map((m) => m.params.update.content.text)).toContain(`echo: real ${i * BATCH}\n`);
    });
    // Still alive and serving after the storm.
    const after = await client.request("session/new", { cwd: "/tmp", mcpServers: [] }, "after-the-storm");
    expect(after.result.sessionId).toBeTruthy();
    expect(client.child.exitCode).toBeNull();
  }, 180_000);
});
