/**
 * Chains that are more than a line of WASM proxies: conductors nested inside conductors, native
 * proxies (trusted, outside the sandbox) beside WASM ones, a proxy that speaks the Rust SDK's
 * `_proxy/*` dialect, and the `--trace` file that records all of it.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SpawnedAgent } from "../runtime/client/spawned-agent.js";
import { CORDON, NODE, proxyWasm, REFERENCE_AGENT, ROOT, SCRIPTED_AGENT } from "./helpers/paths.js";
import { RawClient } from "./helpers/raw-client.js";

const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const q = (words: string[]) => words.map((w) => JSON.stringify(w)).join(" ");
const arrow = ["--proxy", proxyWasm("arrow")];
const nested = (...inner: string[]) => ["--proxy-cmd", q([NODE, CORDON, "proxy", ...inner])];
const rustProxy = ["--proxy-cmd", q([NODE, `${ROOT}test/peers/rust-dialect-proxy.mjs`])];

async function say(flags: string[], text: string): Promise<string> {
  const agent = new SpawnedAgent({ command: NODE, args: [CORDON, "run", ...flags, "--", ...REFERENCE_AGENT], env: { CORDON_LOG: "warn" } });
  open.push(agent);
  await agent.initialize();
  const session = await agent.newSession();
  const res = await agent.prompt(session, text);
  expect(res.stopReason).toBe("end_turn");
  return agent.messageText(session);
}

describe("topologies", () => {
  it("nested conductors with arrows at both levels give one > per arrow", async () => {
    // outer: arrow, [inner: arrow, arrow], arrow  → 4 arrows
    expect(await say([...arrow, ...nested(...arrow, ...arrow), ...arrow], "x")).toBe(">>>>echo: x\n");
  });

  it("a conductor nested two deep, with an empty one inside, stays transparent around its arrows", async () => {
    // outer: [middle: [inner: arrow], [empty]], arrow  → 2 arrows
    const middle = nested(...nested(...arrow), ...nested());
    expect(await say([...middle, ...arrow], "deep")).toBe(">>echo: deep\n");
  });

  it("a Rust SDK-style proxy that forwards proxy/initialize instead of answering it is switched to _proxy/* and joins", async () => {
    const sacp = ["--proxy-cmd", q([NODE, `${ROOT}test/peers/rust-dialect-proxy.mjs`, "--forward-unknown"])];
    expect(await say([...arrow, ...sacp, "--proxy", proxyWasm("passthrough")], "hi")).toBe(">»echo: hi\n");
  });

  it('a native proxy declared "dialect": "rust" is spoken to in _proxy/* from the start', async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-dialect-"));
    const config = join(dir, "chain.json");
    // --strict: the proxy exits if it is ever sent proxy/initialize.
    const proxy = { command: NODE, args: [`${ROOT}test/peers/rust-dialect-proxy.mjs`, "--strict"], trusted: true, dialect: "rust" };
    writeFileSync(config, JSON.stringify({ proxies: [proxy] }));
    expect(await say(["--config", config], "hi")).toBe("»echo: hi\n");
  });

  it("a native proxy that speaks only _proxy/* joins a chain of WASM proxies", async () => {
    // Agent messages travel right to left: the » proxy marks them first, then the arrow.
    expect(await say([...arrow, ...rustProxy, "--proxy", proxyWasm("passthrough")], "hi")).toBe(">»echo: hi\n");
  });

  it("refuses a native proxy in a config that is not marked trusted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-topo-"));
    const config = join(dir, "chain.json");
    writeFileSync(config, JSON.stringify({ proxies: [{ command: "node", args: ["p.js"] }], agent: { command: "node" } }));
    const client = new RawClient(NODE, [CORDON, "run", "--config", config]);
    open.push(client);
    const { code } = await client.exited;
    expect(code).toBe(2);
    expect(client.stderr).toMatch(
      /proxies\[0\]\.trusted: a native proxy runs outside the sandbox with your privileges; set "trusted": true/,
    );
  });

  it("a conductor in proxy mode refuses plain initialize from its parent", async () => {
    const client = new RawClient(NODE, [CORDON, "proxy", ...arrow]);
    open.push(client);
    const res = await client.request("initialize", { protocolVersion: 1 });
    expect(res.error.code).toBe(-32600);
    expect(res.error.message).toMatch(/expects "proxy\/initialize" from its parent/);
  });
});

describe("--trace", () => {
  it("records every hop in the reference conductor's event format, envelopes unwrapped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-trace-"));
    const trace = join(dir, "trace.jsonl");
    await say(["--trace", trace, ...arrow, ...arrow], "traced");
    await new Promise((r) => setTimeout(r, 100));
    const events = readFileSync(trace, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const e of events) {
      expect(typeof e.ts).toBe("number");
      expect(["request", "response", "notification", "trace"]).toContain(e.type);
    }
    const hops = (method: string) => events.filter((e) => e.type === "request" && e.method === method).map((e) => `${e.from}→${e.to}`);
    // Cordon's MCP bridge, always the last component before the agent, has a swimlane of its own.
    // Proxies are named as in the chain (a repeated name gets #2, #3…). The trace shows the route
    // each message really took: every component takes part in initialize; a message a proxy does
    // not watch (arrow watches agent_message_chunk updates) and the idle bridge are routed past.
    expect(hops("initialize")).toEqual(["client→arrow", "arrow→arrow#2", "arrow#2→mcp-bridge", "mcp-bridge→agent"]);
    // With interest filters off (CORDON_INTEREST_FILTERS=off, as `make test` runs the chain suites once) every proxy sees it.
    const filtered = process.env.CORDON_INTEREST_FILTERS !== "off";
    expect(hops("session/prompt")).toEqual(filtered ? ["client→agent"] : ["client→arrow", "arrow→arrow#2", "arrow#2→agent"]);
    expect(events.some((e) => String(e.method).includes("successor"))).toBe(false);
    const updates = events.filter(
      (e) => e.type === "notification" && e.method === "session/update" && e.params.update.sessionUpdate === "agent_message_chunk",
    );
    expect(updates.map((e) => `${e.from}→${e.to}`)).toEqual(["agent→arrow#2", "arrow#2→arrow", "arrow→client"]);
    expect(updates.map((e) => e.params.update.content.text)).toEqual(["echo: traced\n", ">echo: traced\n", ">>echo: traced\n"]);
    // Every request has its response, on the same hop id.
    for (const r of events.filter((e) => e.type === "request")) {
      expect(events.some((e) => e.type === "response" && e.id === r.id && e.from === r.to && e.to === r.from)).toBe(true);
    }
  });

  it("records every message it dropped or refused, with the reason", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-trace-"));
    const trace = join(dir, "trace.jsonl");
    const client = new RawClient(NODE, [CORDON, "run", "--trace", trace, ...arrow, "--", ...SCRIPTED_AGENT]);
    open.push(client);
    await client.request("initialize", { protocolVersion: 1 });
    const sessionId = (await client.request("session/new", { cwd: "/tmp", mcpServers: [] })).result.sessionId;
    // An error answer without an id (as codex-acp answers some notifications), and a forged _cordon/notice.
    const junk = [
      { send: { jsonrpc: "2.0", error: { code: -32601, message: "no such notification" } } },
      { send: { jsonrpc: "2.0", method: "_cordon/notice", params: {} } },
    ];
    await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: JSON.stringify(junk) }] });
    await client.close();
    const events = readFileSync(trace, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const dropped = events.filter((e) => e.type === "trace" && e.dropped !== undefined);
    expect(dropped.map((e) => [e.component, e.message])).toEqual([
      ["agent", 'agent "' + SCRIPTED_AGENT.join(" ") + '" sent an invalid message (response without a valid id); dropped'],
      ["agent", expect.stringMatching(/^reserved-method: _cordon\/notice is reserved for Cordon itself/)],
    ]);
    expect(dropped[0].dropped).toEqual(junk[0].send);
  });
});
