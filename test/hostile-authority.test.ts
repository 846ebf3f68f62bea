/**
 * The security suite's authority ring: a hostile AssemblyScript proxy (test/fixtures/hostile/
 * deputy.ts) tries to have the agent act for it, inside a real `cordon run` with a real client on
 * its stdio and the reference agent. Each attack succeeds with the grant that allows it and fails
 * without: the agent starts no MCP server and connects to no URL the client did not declare, an
 * allow answer the proxy makes up never reaches the agent (the user is told), and a session of the
 * proxy's own cannot make the agent read a file for it. The rules have fast in-process tests in
 * runtime/routing/rules/.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, ROOT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
const DEPUTY = join(ROOT, "test/fixtures/dist/deputy.wasm");

beforeAll(async () => {
  await exec(NODE, [join(ROOT, "sdk-as/tools/build-proxy.mjs"), join(ROOT, "test/fixtures/hostile/deputy.ts"), "-o", DEPUTY]);
}, 120_000);

const open: RawClient[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  for (const s of servers.splice(0)) s.close();
});

/** `cordon run` with the deputy (these grants, this config) in front of the reference agent; initialized. */
async function chain(grants: string[], config: Json = {}, proxy: Json = { name: "deputy", wasm: DEPUTY }): Promise<RawClient> {
  const dir = mkdtempSync(join(tmpdir(), "cordon-authority-"));
  const file = join(dir, "chain.json");
  const agent = { command: NODE, args: [CORDON, "reference-agent", "--mcp", "http"] };
  writeFileSync(file, JSON.stringify({ proxies: [{ ...proxy, grants, config }], agent }));
  const client = new RawClient(NODE, [CORDON, "run", "--config", file], { CORDON_LOG: "info" });
  open.push(client);
  const init = await client.request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } });
  expect(init.error, JSON.stringify(init)).toBeUndefined();
  return client;
}

async function prompt(client: RawClient, text: string): Promise<Json> {
  const setup = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
  const result = setup.result ?? expect.unreachable(`session/new failed: ${JSON.stringify(setup)}`);
  return client.request("session/prompt", { sessionId: result.sessionId, prompt: [{ type: "text", text }] });
}

const scratch = () => mkdtempSync(join(tmpdir(), "cordon-deputy-"));

describe("MCP servers: the agent starts and connects to only what the client declared", () => {
  it("a proxy's own session declaring a stdio server that creates a file: refused without agent:mcp", async () => {
    const marker = join(scratch(), "pwned");
    const client = await chain(["agent:sessions", "agent:prompt"]);
    await prompt(client, `own-mcp ${marker}`);
    await expect.poll(() => client.stderr, { timeout: 10_000 }).toMatch(/deputy: setup refused: .*"agent:mcp" grant/);
    expect(client.stderr).toMatch(/mcp-servers: session\/new from proxy "deputy" declares MCP server "evil"/);
    expect(existsSync(marker)).toBe(false);
  });

  it("with agent:mcp the same server is started (the attack is real)", async () => {
    const marker = join(scratch(), "pwned");
    const client = await chain(["agent:sessions", "agent:prompt", "agent:mcp"]);
    await prompt(client, `own-mcp ${marker}`);
    await expect.poll(() => existsSync(marker), { timeout: 20_000 }).toBe(true);
  });

  for (const granted of [false, true]) {
    it(`an http server of the proxy's own is ${granted ? "connected to with" : "refused without"} agent:mcp`, async () => {
      let hits = 0;
      const server = createServer((_req, res) => (hits++, res.writeHead(500).end()));
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
      const client = await chain(["agent:sessions", "agent:prompt", ...(granted ? ["agent:mcp"] : [])]);
      await prompt(client, `own-http ${url}`);
      if (granted) await expect.poll(() => hits, { timeout: 20_000 }).toBeGreaterThan(0);
      else {
        await expect.poll(() => client.stderr, { timeout: 10_000 }).toMatch(/deputy: setup refused: .*"agent:mcp" grant/);
        expect(hits).toBe(0);
      }
    });
  }

  // The same server added to the client's own session/new as one edit, which goes to Cordon as
  // `_cordon/forward` with the edit alone (components/edited-forward.ts): placed in the client's
  // text, then judged like a written-out session/new.
  const spliced = async (splice: string, grants: string[]) => {
    const marker = join(scratch(), "pwned");
    const client = await chain(grants, { splice, file: marker });
    const setup = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
    return { client, setup, marker };
  };

  it("a stdio server added to the client's session/new by an edit alone: refused without agent:mcp", async () => {
    const { client, setup, marker } = await spliced("server", []);
    expect(setup.error?.message).toMatch(/declares MCP server "evil".*"agent:mcp" grant/);
    // The log line may come after the answer: stderr and stdout are two pipes.
    await expect
      .poll(() => client.stderr, { timeout: 10_000 })
      .toMatch(/mcp-servers: session\/new from proxy "deputy" declares MCP server "evil"/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(existsSync(marker)).toBe(false);
  });

  it("with agent:mcp the server the edit added is started (the edit reaches the agent as written)", async () => {
    const { client, setup, marker } = await spliced("server", ["agent:mcp"]);
    expect(setup.error, JSON.stringify(setup)).toBeUndefined();
    await client.request("session/prompt", { sessionId: setup.result.sessionId, prompt: [{ type: "text", text: "use tool evil::x" }] });
    await expect.poll(() => existsSync(marker), { timeout: 20_000 }).toBe(true);
  });

  it("an edit that breaks out of a string to declare a second mcpServers is refused as ambiguous, grant or not", async () => {
    for (const grants of [[], ["agent:mcp"]]) {
      const { client, setup, marker } = await spliced("smuggle", grants);
      expect(setup.error?.message).toMatch(/breaks I-JSON \(RFC 7493\): member "mcpServers" appears twice in params/);
      await expect.poll(() => client.stderr, { timeout: 10_000 }).toMatch(/proxy "deputy"/);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(existsSync(marker)).toBe(false);
    }
  });
});

describe("permission: a proxy does not approve the agent's tool calls in the user's place", () => {
  it("without permission:allow its allow never reaches the agent (it sees reject), and the client gets a notice", async () => {
    const client = await chain([], { approve: "yes" });
    expect((await prompt(client, "permission rm -rf /")).result).toEqual({ stopReason: "end_turn" });
    const said = client.received
      .filter((m) => m.params?.update?.sessionUpdate === "agent_message_chunk")
      .map((m) => m.params.update.content.text);
    expect(said.join("\n")).toMatch(/permission rejected: rm -rf \//);
    expect(said.join("\n")).not.toMatch(/permission allowed/);
    const notice = await client.waitFor((m) => m.method === "_cordon/notice");
    expect(notice.params.message).toMatch(
      /permission-allow: proxy "deputy" approved the agent's tool call "rm -rf \/" itself .*without the "permission:allow" grant/,
    );
  });

  it("with permission:allow its allow reaches the agent", async () => {
    const client = await chain(["permission:allow"], { approve: "yes" });
    await prompt(client, "permission rm -rf /");
    const said = client.received
      .filter((m) => m.params?.update?.sessionUpdate === "agent_message_chunk")
      .map((m) => m.params.update.content.text);
    expect(said.join("\n")).toMatch(/permission allowed: rm -rf \//);
  });
});

describe("the agent as deputy: a proxy's own session cannot read the user's files for it", () => {
  function secretFile(): { path: string; secret: string } {
    const secret = `SECRET-${Math.random().toString(36).slice(2)}`;
    const path = join(scratch(), "id_ed25519");
    writeFileSync(path, secret);
    return { path, secret };
  }
  /** The client serves reads of the user's disk, as an editor does. */
  const serveReads = (client: RawClient, secret: string) => {
    client.onRequest = (m) =>
      m.method === "fs/read_text_file" ? { result: { content: secret } } : { error: { code: -32601, message: "no" } };
  };

  it("without agent:sessions its own session is refused; nothing is read", async () => {
    const { path, secret } = secretFile();
    const client = await chain([]);
    serveReads(client, secret);
    await prompt(client, `own-read ${path}`);
    await expect.poll(() => client.stderr, { timeout: 10_000 }).toMatch(/deputy: setup refused: .*"agent:sessions" grant/);
    expect(client.received.some((m) => m.method === "fs/read_text_file")).toBe(false);
    expect(client.stderr).not.toContain(secret);
  });

  it("with its own session and prompt but no fs:read, the agent's read for that session goes to it alone and no further", async () => {
    const { path, secret } = secretFile();
    const client = await chain(["agent:sessions", "agent:prompt"]);
    serveReads(client, secret);
    await prompt(client, `own-read ${path}`);
    await expect
      .poll(() => client.stderr, { timeout: 10_000 })
      .toMatch(/owned-sessions: fs\/read_text_file is for a session proxy "deputy" opened itself/);
    await expect.poll(() => client.stderr, { timeout: 10_000 }).toMatch(/deputy: prompt answered/);
    expect(client.received.some((m) => m.method === "fs/read_text_file")).toBe(false);
    expect(client.stderr).not.toContain(secret);
  });

  it("with fs:read as well, the read goes through (the attack is real)", async () => {
    const { path, secret } = secretFile();
    const client = await chain(["agent:sessions", "agent:prompt", "fs:read"]);
    serveReads(client, secret);
    await prompt(client, `own-read ${path}`);
    await expect.poll(() => client.stderr, { timeout: 10_000 }).toContain(secret);
  });
});

describe("agent:sessions is for a proxy's own sessions: it cannot load the user's to have its history replayed", () => {
  it("with agent:sessions, its own session/load of the client's session is refused; the agent replays nothing", async () => {
    const client = await chain(["agent:sessions"]);
    const setup = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
    const sessionId = setup.result?.sessionId ?? expect.unreachable(JSON.stringify(setup));
    await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "my secret plan" }] });
    const before = client.received.length;
    await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `own-load ${sessionId}` }] });
    await expect
      .poll(() => client.stderr, { timeout: 10_000 })
      .toMatch(/deputy: load refused: .*did not open itself; the "agent:sessions" grant covers only the sessions a proxy opened itself/);
    expect(client.stderr).not.toMatch(/deputy: load answered/);
    // No replay of the earlier turn reached the client (the only updates are this turn's echo).
    const replayed = client.received.slice(before).filter((m) => JSON.stringify(m).includes("my secret plan"));
    expect(replayed).toEqual([]);
  });
});

describe("a proxy that needs agent authority works with its grant", () => {
  const persona = { name: "persona", wasm: proxyWasm("persona") };
  const embodiment = { embodiment: "echo I am Sparkle", name: "Sparkle" };
  const said = (client: RawClient) =>
    client.received.filter((m) => m.params?.update?.sessionUpdate === "agent_message_chunk").map((m) => m.params.update.content.text);

  it("persona with agent:prompt embodies the agent before the user's first prompt", async () => {
    const client = await chain(["agent:prompt"], embodiment, persona);
    expect((await prompt(client, "echo hi")).result).toEqual({ stopReason: "end_turn" });
    expect(said(client)).toEqual(["echo: I am Sparkle\n", "echo: hi\n"]);
  });

  it("without it the refusal names the grant (its own prompt is one too many)", async () => {
    const client = await chain([], embodiment, persona);
    const answer = await prompt(client, "echo hi");
    expect(answer.error?.data?.cordon, JSON.stringify(answer)).toMatchObject({ gate: "agent-authority", grant: "agent:prompt" });
    expect(client.stderr).toMatch(/persona" asks for agent:prompt, which the chain config does not grant/);
  });
});
