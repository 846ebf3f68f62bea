/**
 * MCP resources, prompts, pagination and checked tool arguments of an AssemblyScript proxy, as the
 * MCP TypeScript SDK's own client sees them: a raw client → `cordon run` → the SDK fixture
 * `mcp-catalog.wasm` → the reference agent, whose `@modelcontextprotocol/sdk` Client reaches the
 * proxy's server over MCP-over-ACP itself (`--mcp acp`), over Cordon's bridge on loopback HTTP
 * (`--mcp http`), or through a stdio `cordon mcp-bridge` process (`--mcp stdio`).
 */
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadFixture } from "../sdk-as/test/harness.js";
import { chainClient, newChainSession, promptTurn, startChain } from "./helpers/chain-turn.js";
import { ROOT } from "./helpers/paths.js";
import type { RawClient } from "./helpers/raw-client.js";

const WASM = join(ROOT, "sdk-as/test/fixtures/dist/mcp-catalog.wasm");

beforeAll(async () => {
  await loadFixture("mcp-catalog"); // builds it when stale
}, 120_000);

const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe.each(["acp", "http", "stdio"])("an SDK proxy's MCP catalog through a real MCP client, agent --mcp %s", (mode) => {
  it("lists every page of resources, tools and prompts; reads; gets prompts; refuses another session's resource and bad arguments", async () => {
    const client = chainClient([{ name: "catalog", wasm: WASM }], mode);
    open.push(client);
    await startChain(client);
    const a = await newChainSession(client);
    const b = await newChainSession(client);

    const listed = await promptTurn(client, a, "resources docs\nlist tools docs\nprompts docs");
    expect(listed.tools.map((t) => t.status)).toEqual(["completed", "completed", "completed"]);
    expect(listed.tools[0].text.split("\n").map((l) => l.split(" ")[0])).toEqual([
      "doc://readme",
      "doc://empty",
      "doc://third",
      `doc://session/${a}`,
    ]);
    expect(listed.tools[1].text.split("\n").map((l) => l.split(":")[0])).toEqual(["typed", "plain", "third"]);
    expect(listed.tools[2].text).toBe("greet: Greets someone\nfixed: A fixed text");

    const read = await promptTurn(
      client,
      a,
      `resource docs doc://readme\nresource docs doc://empty\nresource docs doc://session/${a}\nprompt docs::greet {"who":"Ada"}`,
    );
    expect(read.tools.map((t) => [t.status, t.text])).toEqual([
      ["completed", '# Read me\nhé "q" ✓'],
      // the agent speaks the connectionless form itself; the bridge speaks the connection form to SDK proxies
      ["completed", `read in ${a} via ${mode === "acp" ? "connectionless" : "connection"}`],
      ["completed", `private to ${a}`],
      ["completed", `Hello Ada in ${a}`],
    ]);

    const refused = await promptTurn(
      client,
      b,
      `resource docs doc://session/${a}\nuse tool docs::typed {"text":3}\nprompt docs::greet\nuse tool docs::typed {"text":"ok","mode":"fast"}`,
    );
    expect(refused.tools.map((t) => t.status)).toEqual(["failed", "failed", "failed", "completed"]);
    expect(refused.tools[0].text).toBe(`MCP error -32002: Resource not found: doc://session/${a} is not in session ${b}`);
    expect(refused.tools[1].text).toBe('MCP error -32602: Invalid arguments for tool typed: argument "text" must be string, not number');
    expect(refused.tools[2].text).toBe('MCP error -32602: Invalid arguments for prompt greet: missing required argument "who"');
    expect(refused.tools[3].text).toBe('typed {"text":"ok","mode":"fast"}');
  });
});
