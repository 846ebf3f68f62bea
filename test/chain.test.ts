/**
 * The core chain with real peers: the official `@agentclientprotocol/sdk` client → `cordon run`
 * (a real process on real stdio) → 0, 1 and 3 WASM proxies built from AssemblyScript → the
 * reference agent (a real child process).
 */
import { afterEach, describe, expect, it } from "vitest";
import { allowFirst, type PermissionResponder, rejectFirst, SpawnedAgent } from "../runtime/client/spawned-agent.js";
import { cordonRun, NODE, REFERENCE_AGENT } from "./helpers/paths.js";

const open: SpawnedAgent[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((a) => a.close()));
});

function through(proxies: string[], permission: PermissionResponder = allowFirst): SpawnedAgent {
  const agent = new SpawnedAgent({ command: NODE, args: cordonRun(proxies, REFERENCE_AGENT), permission, env: { CORDON_LOG: "warn" } });
  open.push(agent);
  return agent;
}

/** A turn waiting for `session/cancel` ends `cancelled` when the client sends it, and the session still works afterwards. */
async function cancelsAWaitingTurn(proxies: string[]): Promise<void> {
  const agent = through(proxies);
  await agent.initialize();
  const session = await agent.newSession();
  const turn = agent.prompt(session, "wait");
  await expect.poll(() => agent.messageText(session)).toContain("waiting for session/cancel");
  await agent.agent.notify("session/cancel", { sessionId: session });
  expect((await turn).stopReason).toBe("cancelled");
  expect((await agent.prompt(session, "again")).stopReason).toBe("end_turn");
}

const updatesOf = (agent: SpawnedAgent, from: number) =>
  agent.events.slice(from).flatMap((e) => (e.kind === "update" ? [e.notification.update] : []));

describe.each([0, 1, 3])("SDK client → cordon → %i pass-through proxies → reference agent", (n) => {
  const proxies = Array(n).fill("passthrough");

  it("initializes, opens a session and echoes a prompt, updates before the response", async () => {
    const agent = through(proxies);
    const init = await agent.initialize();
    expect(init.protocolVersion).toBe(1);
    expect(init.agentInfo?.name).toBe("cordon-reference-agent");
    const session = await agent.newSession();
    // The agent announces its commands right after session/new; the turn's updates come after that.
    await expect.poll(() => updatesOf(agent, 0).some((u) => u.sessionUpdate === "available_commands_update")).toBe(true);
    const before = agent.events.length;
    const res = await agent.prompt(session, "hello chain\nthink pondering\ntool Run tests");
    expect(res.stopReason).toBe("end_turn");
    // Every update of the turn was delivered before the prompt's response resolved.
    const kinds = updatesOf(agent, before).map((u) => u.sessionUpdate);
    expect(kinds).toEqual(["agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "tool_call_update"]);
    expect(agent.messageText(session, before)).toBe("echo: hello chain\n");
    const statuses = updatesOf(agent, before).flatMap((u) => (u.sessionUpdate === "tool_call_update" ? [u.status] : []));
    expect(statuses).toEqual(["in_progress", "completed"]);
  });

  it("round-trips a permission request through every proxy (allowed and rejected)", async () => {
    const allowing = through(proxies, allowFirst);
    await allowing.initialize();
    const s1 = await allowing.newSession();
    await allowing.prompt(s1, "permission Write notes.md");
    expect(allowing.events.filter((e) => e.kind === "permission").map((e) => e.kind === "permission" && e.request.toolCall.title)).toEqual([
      "Write notes.md",
    ]);
    expect(allowing.messageText(s1)).toContain("permission allowed: Write notes.md");

    const rejecting = through(proxies, rejectFirst);
    await rejecting.initialize();
    const s2 = await rejecting.newSession();
    await rejecting.prompt(s2, "permission Write notes.md");
    expect(rejecting.messageText(s2)).toContain("permission rejected: Write notes.md");
    const failed = updatesOf(rejecting, 0).filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    expect(failed).toHaveLength(1);
  });

  it("cancels a waiting turn with session/cancel: stopReason cancelled", () => cancelsAWaitingTurn(proxies));

  it("keeps concurrent sessions apart", async () => {
    const agent = through(proxies);
    await agent.initialize();
    const [a, b] = await Promise.all([agent.newSession(), agent.newSession()]);
    expect(a).not.toBe(b);
    await Promise.all([agent.prompt(a, "alpha\nsleep 30\nalpha2"), agent.prompt(b, "beta\nbeta2")]);
    expect(agent.messageText(a)).toBe("echo: alpha\necho: alpha2\n");
    expect(agent.messageText(b)).toBe("echo: beta\necho: beta2\n");
  });
});

describe("proxies that change things", () => {
  it("3 × arrow gives >>> on every agent message", async () => {
    const agent = through(["arrow", "arrow", "arrow"]);
    await agent.initialize();
    const session = await agent.newSession();
    await agent.prompt(session, "one\ntwo");
    const chunks = updatesOf(agent, 0).flatMap((u) =>
      u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
    );
    expect(chunks).toEqual([">>>echo: one\n", ">>>echo: two\n"]);
  });

  it("arrows mixed with pass-throughs count only the arrows", async () => {
    const agent = through(["arrow", "passthrough", "arrow"]);
    await agent.initialize();
    const session = await agent.newSession();
    await agent.prompt(session, "x");
    expect(agent.messageText(session)).toBe(">>echo: x\n");
  });
});

/**
 * context and tool-guard declare `watches.answers: []`: the answers to the prompts and permission
 * requests they forward, and cancellations of those, go past their guests (interest-filter.ts).
 * arrow, between them and the client, still edits every chunk: the answer that skipped the two
 * guests must still come after every update of its turn.
 */
describe("SDK client → cordon → arrow, context, tool-guard (answers passing the last two) → reference agent", () => {
  const chain = ["arrow", "context", "tool-guard"];

  it("answers a prompt after every update of its turn, and a permission request both ways", async () => {
    const agent = through(chain, allowFirst);
    await agent.initialize();
    const session = await agent.newSession();
    const before = agent.events.length;
    const res = await agent.prompt(session, "hello chain\nthink pondering\npermission Write notes.md\ntool Run tests");
    expect(res.stopReason).toBe("end_turn");
    const kinds = updatesOf(agent, before).map((u) => u.sessionUpdate);
    expect(kinds.filter((k) => k === "agent_message_chunk").length).toBeGreaterThanOrEqual(2);
    expect(kinds.slice(-2)).toEqual(["tool_call_update", "tool_call_update"]);
    expect(agent.messageText(session, before)).toContain(">echo: hello chain\n");
    expect(agent.messageText(session, before)).toContain("permission allowed: Write notes.md");
    const rejecting = through(chain, rejectFirst);
    await rejecting.initialize();
    const s2 = await rejecting.newSession();
    await rejecting.prompt(s2, "permission Write notes.md");
    expect(rejecting.messageText(s2)).toContain("permission rejected: Write notes.md");
  });

  it("cancels a waiting turn, and the session goes on", () => cancelsAWaitingTurn(chain));
});
