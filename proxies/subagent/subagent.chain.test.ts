/**
 * `subagent.wasm` in a real chain (needs `make build`: dist/ and proxies/dist/): the official ACP SDK
 * client → `cordon run --config … --trace …` → subagent.wasm → the reference agent. `/review`
 * opens a second session at the agent, whose answer comes back as the turn's result; the client
 * never reads a message of that session; a cancel of the user's turn reaches the subagent's session
 * at the agent (seen in the trace, which records every hop); without the grants the user is told
 * which to give and normal prompts keep working.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterEach, describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm } from "../../test/helpers/paths.js";
import { type Json, TappedSdkClient } from "../../test/helpers/tapped-sdk-client.js";

const DIR = mkdtempSync(join(tmpdir(), "cordon-subagent-chain-"));

const open: TappedSdkClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

interface Chain {
  client: TappedSdkClient;
  trace: string;
  sessionId: string;
}

/** `cordon run` with subagent.wasm (these grants, this config) in front of the reference agent; initialized, one session open. */
async function chain(grants: string[], proxyConfig: Json = {}): Promise<Chain> {
  const tag = Math.random().toString(36).slice(2);
  const config = join(DIR, `chain-${tag}.json`);
  const trace = join(DIR, `trace-${tag}.jsonl`);
  const agent = { command: NODE, args: [CORDON, "reference-agent", "--store", join(DIR, `store-${tag}`)] };
  writeFileSync(
    config,
    JSON.stringify({ proxies: [{ name: "subagent", wasm: proxyWasm("subagent"), grants, config: proxyConfig }], agent }),
  );
  const client = new TappedSdkClient(NODE, [CORDON, "run", "--config", config, "--trace", trace]);
  open.push(client);
  await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await client.agent.request(acp.methods.agent.session.new, { cwd: DIR, mcpServers: [] });
  return { client, trace, sessionId };
}

/** One prompt: its stop reason and the text of the user session's agent_message_chunks the client read before the answer. */
async function prompt(c: Chain, text: string): Promise<{ stopReason: string; text: string }> {
  const from = c.client.raw.read.length;
  const { stopReason } = await c.client.agent.request(acp.methods.agent.session.prompt, {
    sessionId: c.sessionId,
    prompt: [{ type: "text", text }],
  });
  return { stopReason, text: updates(c.client.raw.read.slice(from), c.sessionId, "agent_message_chunk").join("") };
}

/** The texts of the `kind` updates of `session` among lines the client read (in wire order). */
function updates(lines: string[], session: string, kind: string): string[] {
  return lines
    .map((l) => JSON.parse(l) as Json)
    .filter((m) => m.method === "session/update" && m.params.sessionId === session && m.params.update.sessionUpdate === kind)
    .map((m) => m.params.update.content.text);
}

/** Every session id in a message the client read. */
function sessionsSeen(client: TappedSdkClient): Set<string> {
  const seen = new Set<string>();
  for (const line of client.raw.read) {
    const m = JSON.parse(line) as Json;
    const id = m.params?.sessionId ?? m.result?.sessionId;
    if (typeof id === "string") seen.add(id);
  }
  return seen;
}

const traceEvents = (file: string): Json[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

describe("subagent in a real chain", () => {
  it("/review runs at the agent in a session of the proxy's own and answers the turn; the client never sees that session", async () => {
    const c = await chain(["agent:sessions", "agent:prompt"]);
    // /review is advertised, merged into the agent's own commands
    await expect
      .poll(() =>
        c.client.calls.find((m) => m.method === "session/update" && m.params.update.sessionUpdate === "available_commands_update"),
      )
      .toBeTruthy();
    const commands = c.client.calls.find((m) => m.params?.update?.sessionUpdate === "available_commands_update")!.params.update
      .availableCommands;
    expect(commands.map((x: Json) => x.name)).toEqual(expect.arrayContaining(["help", "echo", "review"]));

    const from = c.client.raw.read.length;
    const turn = await prompt(c, "/review the quick brown fox\nthink hard");
    expect(turn.stopReason).toBe("end_turn");
    // the reference agent echoes each line of the review prompt it got: that is the answer
    expect(turn.text).toMatch(/^echo: You are reviewing text for the user\..*\necho: The text to review:\necho: the quick brown fox\n$/s);
    expect(updates(c.client.raw.read.slice(from), c.sessionId, "agent_thought_chunk")).toEqual(["Reviewing in a subagent session…\n"]);

    // the subagent's permission request is answered by the proxy (rejected), never by the client
    const asked = await prompt(c, "/review permission rm -rf build");
    expect(asked.text).toContain("echo: The text to review:\npermission rejected: rm -rf build (option reject)\n");
    expect(c.client.calls.filter((m) => m.method === "session/request_permission")).toEqual([]);

    expect([...sessionsSeen(c.client)]).toEqual([c.sessionId]);
    // the agent did see the subagent sessions: opened and closed by the proxy
    await c.client.close();
    // (toward the agent, through the MCP bridge Cordon puts in front of an agent without MCP-over-ACP)
    const own = traceEvents(c.trace).filter((e) => e.from === "subagent" && e.type === "request" && e.to !== "client");
    const subs = own.filter((e) => e.method === "session/close").map((e) => e.params.sessionId);
    expect(subs).toHaveLength(2);
    expect(subs).not.toContain(c.sessionId);
  }, 60_000);

  it("cancelling the user's turn mid-review cancels the subagent's session at the agent; the turn ends cancelled", async () => {
    const c = await chain(["agent:sessions", "agent:prompt"]);
    const turn = prompt(c, "/review wait");
    // the subagent is waiting at the agent (the reference agent's `wait` holds its turn)
    let sub = "";
    await expect
      .poll(
        () => {
          const waiting = traceEvents(c.trace).find(
            (e) => e.type === "notification" && e.from === "agent" && e.params?.update?.content?.text === "waiting for session/cancel\n",
          );
          sub = waiting?.params.sessionId ?? "";
          return sub;
        },
        { timeout: 20_000 },
      )
      .not.toBe("");
    expect(sub).not.toBe(c.sessionId);
    await c.client.agent.notify(acp.methods.agent.session.cancel, { sessionId: c.sessionId });
    expect((await turn).stopReason).toBe("cancelled");
    expect([...sessionsSeen(c.client)]).toEqual([c.sessionId]);

    // the chain goes on: a normal prompt right after
    expect(await prompt(c, "hello")).toEqual({ stopReason: "end_turn", text: "echo: hello\n" });
    await c.client.close();
    const events = traceEvents(c.trace);
    expect(
      events.some((e) => e.type === "notification" && e.method === "session/cancel" && e.to === "agent" && e.params.sessionId === sub),
    ).toBe(true);
    const subPrompt = events.find(
      (e) => e.type === "request" && e.method === "session/prompt" && e.to === "agent" && e.params.sessionId === sub,
    );
    const answered = events.find((e) => e.type === "response" && e.from === "agent" && e.to === "subagent" && e.id === subPrompt?.id);
    expect(answered?.payload).toEqual({ stopReason: "cancelled" });
  }, 60_000);

  it("without the grants the user is told which to give, and normal prompts keep working", async () => {
    const none = await chain([]);
    const refused = await prompt(none, "/review x");
    expect(refused).toEqual({
      stopReason: "end_turn",
      text: '/review cannot run: grant agent:sessions to this proxy to let it start subagents (in the chain config: "grants": ["agent:sessions", "agent:prompt"]).',
    });
    expect(await prompt(none, "hello")).toEqual({ stopReason: "end_turn", text: "echo: hello\n" });
    expect(none.client.stderr).toMatch(/agent-authority: session\/new from proxy "subagent" is its own .*"agent:sessions" grant/);

    const sessionsOnly = await chain(["agent:sessions"]);
    const noPrompt = await prompt(sessionsOnly, "/review x");
    expect(noPrompt.text).toContain("grant agent:prompt to this proxy to let it prompt its subagents");
    expect(await prompt(sessionsOnly, "hello")).toEqual({ stopReason: "end_turn", text: "echo: hello\n" });
    expect([...sessionsSeen(sessionsOnly.client)]).toEqual([sessionsOnly.sessionId]);
  }, 60_000);

  it('"permissions": "allow" approves the subagent\'s tool calls only with the permission:allow grant', async () => {
    const allowed = await chain(["agent:sessions", "agent:prompt", "permission:allow"], { permissions: "allow" });
    expect((await prompt(allowed, "/review permission touch x")).text).toContain("permission allowed: touch x (option allow)\n");

    const ungranted = await chain(["agent:sessions", "agent:prompt"], { permissions: "allow" });
    const turn = await prompt(ungranted, "/review permission touch x");
    expect(turn.text).not.toContain("permission allowed");
    expect(turn.text).toMatch(/permission (rejected|cancelled): touch x/);
    expect(ungranted.client.stderr).toMatch(/permission:allow/);
  }, 60_000);
});
