/**
 * skills.wasm in a real chain (needs `make build`: dist/ and proxies/dist/): a raw client →
 * `cordon run --config` → skills.wasm → passthrough.wasm → the reference agent. The agent echoes
 * its prompt, so the client sees the list skills added to the first one; the agent's MCP client
 * (`@modelcontextprotocol/sdk`) then lists and reads the session's skills and gets one as a prompt
 * — itself over MCP-over-ACP (`--mcp acp`) or through Cordon's bridge (`http`, `stdio`) — and a read
 * of another session's skill fails.
 */
import { afterEach, describe, expect, it } from "vitest";
import { chainClient, newChainSession, promptTurn, startChain } from "../../test/helpers/chain-turn.js";
import { proxyWasm } from "../../test/helpers/paths.js";
import type { RawClient } from "../../test/helpers/raw-client.js";

const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const BODY = "# Deploy\nRun `make release`, then tag the commit — ✓";
const skills = {
  name: "skills",
  wasm: proxyWasm("skills"),
  config: { skills: [{ name: "deploy", description: "Ship a release", body: BODY }] },
};

describe.each(["acp", "http", "stdio"])("skills.wasm in a chain, agent --mcp %s", (mode) => {
  it("the first prompt lists the skills; the agent reads its session's skill and gets it as a prompt; another session's is refused", async () => {
    const client = chainClient([skills, { name: "after", wasm: proxyWasm("passthrough") }], mode);
    open.push(client);
    await startChain(client);
    const a = await newChainSession(client);
    const b = await newChainSession(client);

    const first = await promptTurn(client, a, "hello");
    const uri = `skill://${a}/deploy`;
    expect(first.chunks.join("")).toContain(`echo: - deploy: Ship a release (${uri})`);
    expect(first.chunks.at(-1)).toBe("echo: hello\n");
    const second = await promptTurn(client, a, "hello again");
    expect(second.chunks).toEqual(["echo: hello again\n"]);

    const read = await promptTurn(client, a, `resources skills\nresource skills ${uri}\nprompt skills::deploy`);
    expect(read.tools).toEqual([
      { title: "resources skills", status: "completed", text: `${uri} deploy: Ship a release` },
      { title: `resource ${uri}`, status: "completed", text: BODY },
      { title: "prompt skills::deploy", status: "completed", text: BODY },
    ]);

    await promptTurn(client, b, "hi"); // b's first prompt
    const refused = await promptTurn(client, b, `resource skills ${uri}`);
    expect(refused.tools[0]).toEqual({ title: `resource ${uri}`, status: "failed", text: `MCP error -32002: Resource not found: ${uri}` });
  });
});
