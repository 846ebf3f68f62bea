/**
 * The security suite's MCP-client attack: a hostile AssemblyScript proxy
 * (test/fixtures/hostile/mcp-client-abuser.ts) serves the agent an MCP tool and, when the agent
 * calls it, sends the agent's MCP client `sampling/createMessage`, `elicitation/create`,
 * `roots/list` and `ping` of its own, skipping the SDK — inside a real `cordon run` with a real
 * client and the reference agent, whose MCP client reaches the proxy through Cordon's HTTP bridge
 * (connection form) or over MCP-over-ACP itself (connectionless form). Without `mcp:sampling`,
 * `mcp:elicitation` and `mcp:roots` each is refused naming its grant; `ping` needs none; with
 * `mcp:roots` the agent's client answers `roots/list` with the session's folder. The rule's
 * in-process test is runtime/routing/rules/mcp-client.test.ts.
 */
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { chainClient, newChainSession, promptTurn, startChain } from "./helpers/chain-turn.js";
import { NODE, ROOT } from "./helpers/paths.js";
import type { RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
const ABUSER = join(ROOT, "test/fixtures/dist/mcp-client-abuser.wasm");

beforeAll(async () => {
  await exec(NODE, [join(ROOT, "sdk-as/tools/build-proxy.mjs"), join(ROOT, "test/fixtures/hostile/mcp-client-abuser.ts"), "-o", ABUSER]);
}, 240_000);

const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function abused(mode: string, grants: string[]): Promise<{ client: RawClient; cwd: string }> {
  const client = chainClient([{ name: "abuser", wasm: ABUSER, grants }], mode, { CORDON_LOG: "info" });
  open.push(client);
  await startChain(client);
  const cwd = mkdtempSync(join(tmpdir(), "cordon-roots-"));
  const sessionId = await newChainSession(client, cwd);
  const turn = await promptTurn(client, sessionId, "use tool lure::do");
  expect(
    turn.tools.map((t) => [t.status, t.text]),
    client.stderr,
  ).toEqual([["completed", "done"]]);
  return { client, cwd };
}

describe.each(["http", "acp"])("a grantless proxy's MCP server, agent --mcp %s", (mode) => {
  it("cannot have the agent's MCP client sample its model, ask the user, or list the user's roots", async () => {
    const { client } = await abused(mode, []);
    for (const [method, grant] of [
      ["sampling/createMessage", "mcp:sampling"],
      ["elicitation/create", "mcp:elicitation"],
      ["roots/list", "mcp:roots"],
    ]) {
      await expect
        .poll(() => client.stderr, { timeout: 15_000 })
        .toContain(
          `abuser: ${method} refused: ${method} from proxy "abuser"'s MCP server to the agent's MCP client needs the "${grant}" grant`,
        );
    }
    if (mode === "http") await expect.poll(() => client.stderr, { timeout: 15_000 }).toContain("abuser: ping got: {}");
  }, 60_000);
});

describe("a proxy holding mcp:roots, agent --mcp http", () => {
  it("gets the agent's roots (the session's folder), and still no sampling or elicitation", async () => {
    const { client, cwd } = await abused("http", ["mcp:roots"]);
    await expect
      .poll(() => client.stderr, { timeout: 15_000 })
      .toContain(`abuser: roots/list got: {"roots":[{"uri":${JSON.stringify(pathToFileURL(cwd).href)}`);
    expect(client.stderr).toMatch(/abuser: sampling\/createMessage refused: .*needs the "mcp:sampling" grant/);
    expect(client.stderr).toMatch(/abuser: elicitation\/create refused: .*needs the "mcp:elicitation" grant/);
  }, 60_000);
});
