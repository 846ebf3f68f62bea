// Unit tests of the built proxy (dist/{{name}}.wasm) with the SDK's testing kit: each test plays the
// conductor, delivers messages from the client or the agent side and checks what the proxy sent.
// `npm test` builds first when the source changed, replays the .jsonl transcripts, then runs this.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ProxyUnderTest, agentUpdate, clientPrompt, clientUpdate, result, textChunk } from "@cordon/sdk-as/testing";

const WASM = new URL("../dist/{{name}}.wasm", import.meta.url).pathname;

test("/{{name}} is answered by the proxy itself", async () => {
  const p = await ProxyUnderTest.start(WASM, { greeting: "Hi" });
  assert.deepEqual(p.deliver(clientPrompt("/{{name}} there", "s1", 7)), [
    clientUpdate(textChunk("Hi, there! (from the {{name}} proxy)"), "s1"),
    result(7, { stopReason: "end_turn" }),
  ]);
});

test("other prompts go to the agent, and the answer comes back", async () => {
  const p = await ProxyUnderTest.start(WASM);
  const sent = p.send(clientPrompt("what is 2+2?", "s1", 8));
  assert.equal(sent.toAgent.length, 1);
  assert.equal(sent.toAgent[0].method, "session/prompt");
  assert.deepEqual(p.deliver(result(sent.toAgent[0].id, { stopReason: "end_turn" })), [result(8, { stopReason: "end_turn" })]);
});

test("the agent's updates pass unchanged", async () => {
  const p = await ProxyUnderTest.start(WASM);
  assert.deepEqual(p.deliver(agentUpdate(textChunk("4"), "s1")), [clientUpdate(textChunk("4"), "s1")]);
});
