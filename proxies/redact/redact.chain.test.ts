/**
 * redact.wasm in a real chain (needs `make build`): a raw client → `cordon run` → redact.wasm → the
 * scripted agent (`test/peers/scripted-agent.mjs`), which streams exactly the chunks a test gives
 * it — here secrets split across chunks. What the client sees, joined, has every secret masked, the
 * held tail arrives before the prompt's answer, and `session/cancel` flushes what is held.
 */
import { afterEach, describe, expect, it } from "vitest";
import { cordonRun, NODE, SCRIPTED_AGENT } from "../../test/helpers/paths.js";
import { type Json, RawClient } from "../../test/helpers/raw-client.js";

const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z";
const chunk = (sessionId: string, text: string) => ({
  send: {
    jsonrpc: "2.0",
    method: "session/update",
    params: { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
  },
});

async function session(): Promise<{ client: RawClient; sessionId: string }> {
  const client = new RawClient(NODE, cordonRun(["redact"], SCRIPTED_AGENT));
  open.push(client);
  expect((await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} })).error).toBeUndefined();
  const created = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
  return { client, sessionId: created.result.sessionId };
}

/** The texts of the message chunks among `messages`, in order. */
const texts = (messages: Json[]): string[] =>
  messages
    .filter((m: Json) => m.method === "session/update" && m.params.update.sessionUpdate === "agent_message_chunk")
    .map((m: Json) => m.params.update.content.text);

describe("redact.wasm in a chain: secrets split across streamed chunks", () => {
  it("masks a key split in three and a bearer token split in two; the held tail comes before the answer", async () => {
    const { client, sessionId } = await session();
    const steps = [
      chunk(sessionId, "here: s"),
      chunk(sessionId, KEY.slice(1, 15)),
      chunk(sessionId, `${KEY.slice(15)} and Bearer eyJhbGciOiJIUzI1NiJ9.`),
      chunk(sessionId, "eyJzdWIiOiIxIn0.sig-123"), // held at the turn's end, flushed masked
    ];
    const id = "p1";
    client.send({
      jsonrpc: "2.0",
      id,
      method: "session/prompt",
      params: { sessionId, prompt: [{ type: "text", text: JSON.stringify(steps) }] },
    });
    const answer = await client.waitFor((m) => m.id === id && !("method" in m), 20_000);
    expect(answer.result).toEqual({ stopReason: "end_turn" });
    const before = client.received.indexOf(answer);
    expect(texts(client.received).join("")).toBe("here: [REDACTED] and Bearer [REDACTED]");
    expect(texts(client.received.slice(0, before)).join("")).toBe(texts(client.received).join("")); // all before the answer
    expect(JSON.stringify(client.received)).not.toContain("Ab3dEf6hIj9k");
  });

  it("masks a key in a permission request; the client's answer goes back to the agent past the guest, as it was given", async () => {
    // The manifest watches the answers to prompts only (onTurnEnd flushes what is held): a
    // permission request's answer passes redact's sandbox (`watches.answers`).
    const { client, sessionId } = await session();
    const permission = {
      method: "session/request_permission",
      params: {
        sessionId,
        toolCall: { toolCallId: "t1", title: `Run curl -H "Authorization: Bearer ${KEY}"` },
        options: [{ optionId: "ok", name: "Allow", kind: "allow_once" }],
      },
    };
    let asked: Json | null = null;
    client.onRequest = (m) => {
      asked = m;
      return { result: { outcome: { outcome: "selected", optionId: "ok" }, _meta: { by: "client" } } };
    };
    const steps = [{ ask: permission }, { report: true }];
    const answer = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: JSON.stringify(steps) }] });
    expect(answer.result).toEqual({ stopReason: "end_turn" });
    expect(asked!.params.toolCall.title).not.toContain("Ab3dEf6hIj9k");
    const report = await client.waitFor((m) => m.method === "_test/answers");
    expect(report.params.answers.map((a: Json) => a.result)).toEqual([
      { outcome: { outcome: "selected", optionId: "ok" }, _meta: { by: "client" } },
    ]);
  });

  it("flushes a held key, masked, when the client cancels the turn", async () => {
    const { client, sessionId } = await session();
    const steps = [chunk(sessionId, `done: ${KEY}`), { waitCancel: true }];
    const id = "p2";
    client.send({
      jsonrpc: "2.0",
      id,
      method: "session/prompt",
      params: { sessionId, prompt: [{ type: "text", text: JSON.stringify(steps) }] },
    });
    await client.waitFor((m) => m.method === "session/update" && m.params.update.content?.text === "done: ", 20_000);
    const from = client.received.length;
    client.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    const answer = await client.waitFor((m) => m.id === id && !("method" in m), 20_000);
    expect(answer.result).toEqual({ stopReason: "cancelled" });
    expect(texts(client.received.slice(from))).toEqual(["[REDACTED]"]);
  });
});
