/**
 * The AssemblyScript MCP proxies in a real chain (needs `make build`: dist/ and proxies/dist/):
 * a raw client → `cordon run --config` → passthrough.wasm → workspace-tools.wasm →
 * passthrough.wasm → the reference agent, whose MCP client calls the tools. The agent advertises
 * `acp` (it calls the proxy in the connectionless form), only `http` (Cordon's bridge relays
 * loopback HTTP, also in the connectionless form) or neither (a stdio `cordon mcp-bridge`). Then persona's
 * Sparkle flow in front of the same agent.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { chainClient, newChainSession, promptTurn, startChain } from "../../test/helpers/chain-turn.js";
import { proxyWasm } from "../../test/helpers/paths.js";
import type { Json, RawClient } from "../../test/helpers/raw-client.js";

const DIR = mkdtempSync(join(tmpdir(), "cordon-ws-chain-"));

const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** A chain of `proxies` (chain-turn.ts) whose client serves file reads with a marker text. */
function chain(proxies: Json[], mode: string): RawClient {
  const client = chainClient(proxies, mode);
  client.onRequest = (m) =>
    m.method === "fs/read_text_file"
      ? { result: { content: `contents of ${m.params.path}` } }
      : { error: { code: -32601, message: `client has no ${m.method}` } };
  open.push(client);
  return client;
}

const passthrough = (name: string) => ({ name, wasm: proxyWasm("passthrough") });
const workspaceTools = (grants: string[] = ["fs:read"]) => ({ name: "workspace-tools", wasm: proxyWasm("workspace-tools"), grants });

const start = (client: RawClient, clientCapabilities: Json = { fs: { readTextFile: true, writeTextFile: false } }) =>
  startChain(client, clientCapabilities);
const newSession = (client: RawClient) => newChainSession(client, DIR);
const prompt = promptTurn;

describe.each(["acp", "http", "stdio"])("workspace-tools.wasm in a chain, agent --mcp %s", (mode) => {
  it("lists and calls recall and read_file; two sessions' calls do not cross", async () => {
    const client = chain([passthrough("before"), workspaceTools(), passthrough("after")], mode);
    const init = await start(client);
    expect(init.agentCapabilities.mcpCapabilities.acp).toBe(true);
    const a = await newSession(client);
    const b = await newSession(client);
    await prompt(client, a, "the launch codename is bluebird");
    await prompt(client, b, "this session is about sqlite");

    const listed = await prompt(client, a, "list tools workspace");
    expect(listed.tools).toEqual([
      { title: "list tools workspace", status: "completed", text: expect.stringMatching(/^recall: .*\nread_file: /) },
    ]);

    const recallA = await prompt(client, a, 'use tool workspace::recall {"query":"codename sqlite"}');
    expect(recallA.tools[0].status).toBe("completed");
    expect(recallA.tools[0].text).toContain("[turn 1, user] the launch codename is bluebird");
    expect(recallA.tools[0].text).not.toContain("this session is about sqlite");
    const recallB = await prompt(client, b, 'use tool workspace::recall {"query":"codename sqlite"}');
    expect(recallB.tools[0].text).toContain("[turn 1, user] this session is about sqlite");
    expect(recallB.tools[0].text).not.toContain("bluebird");

    const read = await prompt(client, b, 'use tool workspace::read_file {"path":"notes.txt"}');
    expect(read.tools[0]).toMatchObject({ status: "completed", text: `contents of ${join(DIR, "notes.txt")}` });
    const readFs = client.received.find((m) => m.method === "fs/read_text_file");
    expect(readFs?.params).toEqual({ sessionId: b, path: join(DIR, "notes.txt") });
  });
});

describe("workspace-tools.wasm without what read_file needs", () => {
  it("answers read_file with a tool error naming the missing grant, and the session goes on", async () => {
    const client = chain([workspaceTools([])], "acp");
    await start(client);
    const s = await newSession(client);
    const turn = await prompt(
      client,
      s,
      'use tool workspace::read_file {"path":"/etc/hostname"}\nuse tool workspace::recall {"query":"x"}',
    );
    expect(turn.tools.map((t) => t.status)).toEqual(["failed", "completed"]);
    expect(turn.tools[0].text).toContain('could not read /etc/hostname: fs/read_text_file needs the "fs:read" grant');
    expect(client.received.some((m) => m.method === "fs/read_text_file")).toBe(false);
  });

  it("answers read_file with a tool error when the client offers no fs.readTextFile", async () => {
    const client = chain([workspaceTools()], "http");
    await start(client, {});
    const s = await newSession(client);
    const turn = await prompt(client, s, 'use tool workspace::read_file {"path":"/etc/hostname"}');
    expect(turn.tools[0]).toMatchObject({
      status: "failed",
      text: "read_file is unavailable: the client did not advertise fs.readTextFile",
    });
  });
});

describe("persona.wasm in a chain", () => {
  it("the agent gets the embodiment prompt first, the client sees that turn and then its own answer, and persona_info works", async () => {
    const embodiment = "You are Sparkle, a cheerful assistant.";
    const client = chain(
      [
        { name: "persona", wasm: proxyWasm("persona"), grants: ["agent:prompt"], config: { name: "Sparkle", embodiment } },
        passthrough("after"),
      ],
      "stdio",
    );
    await start(client);
    const s = await newSession(client);
    const first = await prompt(client, s, "hello there");
    expect(first.stopReason).toBe("end_turn");
    const joined = first.chunks.join("");
    expect(joined.indexOf(embodiment)).toBeGreaterThanOrEqual(0);
    expect(joined.indexOf("hello there")).toBeGreaterThan(joined.indexOf(embodiment));
    const second = await prompt(client, s, "use tool persona::persona_info");
    expect(second.chunks.join("")).not.toContain(embodiment); // later prompts pass straight through
    expect(second.tools[0]).toMatchObject({ status: "completed" });
    expect(second.tools[0].text).toContain(`You are Sparkle. Session ${s}: embodied.`);
  });
});
