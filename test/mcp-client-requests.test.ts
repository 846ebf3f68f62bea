/**
 * A proxy's MCP server asking the agent's MCP client, end to end: a raw client → `cordon run` →
 * the SDK fixture `mcp-asker.wasm` → an agent that speaks MCP-over-ACP itself in the connection
 * form (test/peers/mcp-connection-agent.mjs), whose MCP client is the MCP TypeScript SDK's own
 * `Client` declaring roots, sampling and elicitation. With the grants, the server's `roots/list`,
 * `sampling/createMessage`, `elicitation/create` and `ping` reach the client's handlers and the
 * answers come back to the proxy; `list_changed` reaches the client and its
 * `roots/list_changed` the server. Without them, Cordon refuses each and the SDK says in words
 * which grant to give. (Through Cordon's bridge for a plain-MCP agent:
 * runtime/mcp/bridge-client-requests.test.ts; a hostile proxy skipping the SDK:
 * test/hostile-mcp-client.test.ts.)
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadFixture } from "../sdk-as/test/harness.js";
import { newChainSession, promptTurn, startChain } from "./helpers/chain-turn.js";
import { CORDON, NODE, ROOT } from "./helpers/paths.js";
import { RawClient } from "./helpers/raw-client.js";

const ASKER = join(ROOT, "sdk-as/test/fixtures/dist/mcp-asker.wasm");
const AGENT = join(ROOT, "test/peers/mcp-connection-agent.mjs");
const DIR = mkdtempSync(join(tmpdir(), "cordon-mcp-client-"));

beforeAll(async () => {
  await loadFixture("mcp-asker"); // builds it when stale
}, 180_000);

const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

function run(grants: string[]): RawClient {
  const config = join(DIR, `chain-${grants.length}.json`);
  writeFileSync(config, JSON.stringify({ proxies: [{ name: "asker", wasm: ASKER, grants }], agent: { command: NODE, args: [AGENT] } }));
  const client = new RawClient(NODE, [CORDON, "run", "--config", config]);
  open.push(client);
  return client;
}

const ASKS = ["call asker roots", 'call asker sample {"text":"plan the day"}', 'call asker elicit {"question":"Name?"}', "call asker ping"];

describe("an SDK proxy's requests to an MCP-over-ACP agent's MCP client (connection form)", () => {
  it("with the grants: roots, sampling, elicitation and ping are answered by the client; list_changed both ways", async () => {
    const client = run(["mcp:roots", "mcp:sampling", "mcp:elicitation"]);
    await startChain(client);
    const sessionId = await newChainSession(client, DIR);
    const turn = await promptTurn(client, sessionId, [...ASKS, "call asker grow", "roots changed", "call asker notes", "notes"].join("\n"));
    const sampled = turn.chunks[1] ?? "";
    expect(JSON.parse(sampled.slice(sampled.indexOf("{")))).toEqual({
      role: "assistant",
      content: { type: "text", text: "model saw: plan the day" },
      model: "echo",
      stopReason: "endTurn",
    });
    expect(turn.chunks, client.stderr).toEqual([
      `roots: roots/list in ${sessionId}: {"roots":[{"uri":${JSON.stringify(pathToFileURL(DIR).href)},"name":"cwd"}]}`,
      `sample: sampling/createMessage in ${sessionId}: ${sampled.slice(sampled.indexOf("{"))}`,
      `elicit: elicitation/create in ${sessionId}: {"action":"accept","content":{"name":"Ada"}}`,
      `ping: ping in ${sessionId}: {}`,
      "grow: told 1",
      "roots changed",
      "notes: notifications/initialized\nnotifications/roots/list_changed",
      "notes: notifications/tools/list_changed",
    ]);
  }, 60_000);

  it("without them: each is refused by Cordon, and the SDK says which grant to give; ping needs none", async () => {
    const client = run([]);
    await startChain(client);
    const sessionId = await newChainSession(client, DIR);
    const turn = await promptTurn(client, sessionId, ASKS.join("\n"));
    expect(turn.chunks, client.stderr).toEqual([
      "roots failed: roots/list failed: grant mcp:roots to this proxy to let it see the user's workspace roots (MCP roots/list)",
      "sample failed: sampling/createMessage failed: grant mcp:sampling to this proxy to let it have the agent's model write for it (MCP sampling)",
      "elicit failed: elicitation/create failed: grant mcp:elicitation to this proxy to let it ask the user questions through the agent (MCP elicitation)",
      `ping: ping in ${sessionId}: {}`,
    ]);
  }, 60_000);
});
