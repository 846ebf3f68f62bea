/**
 * The security suite's routing ring: a hostile AssemblyScript proxy (test/fixtures/hostile/
 * escalator.ts) attacks the conductor's routing rules from inside a real `cordon run`, with a real
 * client on its stdio and a real agent process. For each attack: Cordon's process survives, the
 * attacker is named, the client never sees what the proxy had no right to send, the other proxies
 * keep their configuration, and other sessions keep answering. The same attacks have fast
 * in-process tests in runtime/routing/conductor.test.ts; the sandbox attacks (memory, tables,
 * CPU, output budgets, the cache pin) are in hostile-sandbox.test.ts.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { treeRssMiB } from "../bench/process-tree.js";
import { defaultIsolation } from "../runtime/sandbox/sandbox-factory.js";
import { prompt, session, useConfigChains } from "./helpers/config-chain.js";
import { NODE, proxyWasm, ROOT } from "./helpers/paths.js";
import type { Json, RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
const ESCALATOR = join(ROOT, "test/fixtures/dist/escalator.wasm");

beforeAll(async () => {
  await exec(NODE, [join(ROOT, "sdk-as/tools/build-proxy.mjs"), join(ROOT, "test/fixtures/hostile/escalator.ts"), "-o", ESCALATOR]);
}, 120_000);

const chain = useConfigChains({ protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } });

const escalator = { name: "escalator", wasm: ESCALATOR };
/** A prompt whose text the scripted agent runs as steps (see test/peers/scripted-agent.mjs). */
const steps = (client: RawClient, sessionId: string, list: Json[]) => prompt(client, sessionId, JSON.stringify(list));
const chunk = (sessionId: string, text: string) => ({
  send: {
    jsonrpc: "2.0",
    method: "session/update",
    params: { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
  },
});

/** The conductor is still up and serving a fresh session. */
async function stillServes(client: RawClient): Promise<void> {
  const s = await session(client);
  expect((await prompt(client, s, "are you there?")).result).toEqual({ stopReason: "end_turn" });
  expect(client.child.exitCode).toBeNull();
}

describe("a hostile proxy cannot escalate through the routing", () => {
  it("nested envelopes do not borrow the next proxy's fs grant; the client never sees the request", async () => {
    // The pass-through after it holds fs:read; the escalator holds nothing.
    const client = await chain([escalator, { name: "granted", wasm: proxyWasm("passthrough"), grants: ["fs:read"] }], {
      CORDON_LOG: "warn",
    });
    client.onRequest = (m) => ({ result: { content: `contents of ${m.params.path}` } });
    const s = await session(client);
    expect((await prompt(client, s, "borrow")).result).toEqual({ stopReason: "end_turn" });
    await expect
      .poll(() => client.stderr)
      .toMatch(/single-envelope: proxy "escalator" sent an envelope inside an envelope \(proxy\/successor\)/);
    expect(client.stderr).toMatch(/proxy "escalator" sent an envelope inside an envelope \(_proxy\/successor\)/);
    expect(client.received.some((m) => m.method === "fs/read_text_file")).toBe(false);
    await stillServes(client);
  });

  it("forged _cordon/configure in both directions leaves redact and tool-guard configured", async () => {
    const redact = { name: "redact", wasm: proxyWasm("redact"), config: { patterns: ["hunter2"] } };
    const guard = { name: "tool-guard", wasm: proxyWasm("tool-guard"), config: { deny: ["rm -rf*"] } };
    // The escalator sits between them: redact is its predecessor, tool-guard its successor.
    const client = await chain([redact, escalator, guard]);
    let asked = 0;
    client.onRequest = () => (asked++, { result: { outcome: { outcome: "selected", optionId: "allow" } } });
    const s = await session(client);
    expect((await prompt(client, s, "configure")).result).toEqual({ stopReason: "end_turn" });
    await expect
      .poll(() => client.stderr)
      .toMatch(/reserved-method: _cordon\/configure is reserved for Cordon itself .* proxy "escalator" may not send it/);
    const permission = {
      ask: {
        method: "session/request_permission",
        params: {
          sessionId: s,
          toolCall: { toolCallId: "t1", title: "rm -rf /" },
          options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
        },
      },
    };
    await steps(client, s, [chunk(s, "the password is hunter2"), permission, { report: true }]);
    const texts = client.received
      .filter((m) => m.params?.update?.content?.text?.startsWith("the password"))
      .map((m) => m.params.update.content.text);
    expect(texts).toEqual(["the password is [REDACTED]"]);
    const report = await client.waitFor((m) => m.method === "_test/answers");
    expect(report.params.answers[0].result.outcome.outcome).not.toBe("selected"); // tool-guard still denies
    expect(asked).toBe(0);
  });

  it("a forged _cordon/notice never reaches the client", async () => {
    const client = await chain([escalator]);
    const s = await session(client);
    await prompt(client, s, "notice");
    await expect.poll(() => client.stderr).toMatch(/_cordon\/notice is reserved for Cordon itself/);
    expect(client.received.some((m) => m.method === "_cordon/notice")).toBe(false);
  });

  it("a proxy initializes its successor once: forged client capabilities are refused", async () => {
    const client = await chain([escalator]);
    const s = await session(client);
    expect((await prompt(client, s, "reinit")).result).toEqual({ stopReason: "end_turn" });
    await expect.poll(() => client.stderr).toMatch(/successor-init: proxy "escalator" sent initialize to its successor twice/);
    await steps(client, s, [{ report: true }]);
    // The agent saw exactly one initialize (its _test/seen echoes only notifications; a second initialize would have been answered to the proxy).
    expect(client.received.filter((m) => m.result?.agentInfo)).toHaveLength(1);
  });
});

describe("nothing a proxy or the client sends crashes Cordon", () => {
  it("20,000-deep nesting from a proxy (notification, fs params, _cordon/log) is refused; Cordon stays up", async () => {
    const client = await chain([{ ...escalator, grants: ["fs:read"] }]);
    const s = await session(client);
    expect((await prompt(client, s, "deep")).result).toEqual({ stopReason: "end_turn" });
    await expect.poll(() => client.stderr).toMatch(/proxy "escalator" sent a session\/update that nests deeper than 128 levels/);
    expect(client.stderr).not.toMatch(/Maximum call stack/);
    expect(client.received.some((m) => m.method === "fs/read_text_file")).toBe(false);
    await stillServes(client);
  });

  it("a deeply nested message from the client is answered with an error naming the limit", async () => {
    const client = await chain([escalator]);
    const s = await session(client);
    const deep = "[".repeat(10_000) + "]".repeat(10_000);
    client.send(
      `{"jsonrpc":"2.0","id":"deep","method":"session/prompt","params":{"sessionId":"${s}","prompt":[{"type":"text","text":"x","_meta":${deep}}]}}`,
    );
    const res = await client.waitFor((m) => m.id === "deep");
    expect(res.error).toEqual({
      code: -32600,
      message: "Invalid request: the message nests deeper than 128 levels (Cordon's limit for any message)",
    });
    await stillServes(client);
  });

  it("a notification from the client nested past the limit is dropped, one at it passes (its params are checked, not parsed, when read)", async () => {
    const client = await chain([escalator]);
    await session(client);
    // The message is level 1, its params level 2: n arrays in params make it n + 2 deep.
    const line = (n: number) => `{"jsonrpc":"2.0","method":"_x/deep","params":{"_meta":${"[".repeat(n)}${"]".repeat(n)}}}`;
    client.send(line(127)); // 129 deep
    client.send(line(20_000)); // past the check's own stack
    const refused = /client sent a _x\/deep that nests deeper than 128 levels \(Cordon's limit for any message\); refused/g;
    await expect.poll(() => client.stderr.match(refused)?.length ?? 0).toBe(2);
    // 126 deep: the agent echoes it back inside two more levels (`_test/seen` {message}), 128 in all.
    client.send(line(124));
    const seen = await client.waitFor((m) => m.method === "_test/seen" && m.params?.message?.method === "_x/deep");
    expect(JSON.stringify(seen.params.message)).toBe(line(124));
    expect(client.received.filter((m) => m.method === "_test/seen" && m.params?.message?.method === "_x/deep")).toHaveLength(1);
    await stillServes(client);
  });

  it("_cordon/log with a prototype-key level and escape sequences is one escaped line", async () => {
    const client = await chain([escalator], { CORDON_LOG: "info" });
    const s = await session(client);
    expect((await prompt(client, s, "logjunk")).result).toEqual({ stopReason: "end_turn" });
    await expect.poll(() => client.stderr).toMatch(/proxy "escalator": two/);
    const line = client.stderr.split("\n").find((l) => l.includes('proxy "escalator": one'));
    expect(line).toContain("FORGED LINE");
    expect(line).not.toContain("\u001b");
    expect(client.stderr).not.toMatch(/^\[cordon\] error: FORGED LINE/m);
    await stillServes(client);
  });

  for (const [step, markers] of [
    ["copies", "99 more markers"],
    ["editcopies", "99 more markers carrying an edit"],
  ]) {
    it(`_cordon/forward hands a delivery on once: ${markers} for one update are refused, the client gets it once, unedited`, async () => {
      const client = await chain([escalator], { CORDON_LOG: "warn" });
      const s = await session(client);
      const from = client.received.length;
      expect((await prompt(client, s, step)).result).toEqual({ stopReason: "end_turn" });
      await expect.poll(() => client.stderr).toMatch(/_cordon\/forward is reserved for Cordon itself/);
      await new Promise((resolve) => setTimeout(resolve, 300)); // what more copies would have brought back
      const chunks = client.received.slice(from).filter((m) => m.method === "session/update" && m.params.sessionId === s);
      expect(chunks).toHaveLength(1);
      expect(chunks[0].params.update.content.text).not.toBe("copy");
      await stillServes(client);
    });
  }

  it("a proxy flooding a client that reads slowly is paused: Cordon's memory stays bounded and nothing is lost", async () => {
    // Its output budget (tested on its own in hostile-sandbox) is opened up: this is about backpressure.
    const client = await chain([{ ...escalator, limits: { maxOutputUnitsPerWindow: 2 ** 31 } }], { CORDON_LOG: "debug" });
    const sessions = await Promise.all(Array.from({ length: 100 }, () => session(client)));
    const before = treeRssMiB(client.child.pid!);
    // The client stops reading; each prompt makes the proxy send 4 MB to it: 400 MB unbounded.
    client.child.stdout!.pause();
    // Answered once the client reads again: 400 MB to drain, which takes more than the default wait on a loaded machine.
    const answers = sessions.map((s) => prompt(client, s, "spray", 90_000));
    let peak = before;
    for (let i = 0; i < 30; i++) {
      await new Promise((r) => setTimeout(r, 100));
      peak = Math.max(peak, treeRssMiB(client.child.pid!));
    }
    // 400 MB unbounded. In a worker the guest's outputs already posted to the main thread (up to 16
    // deliveries in flight) and the worker's own heap come on top of the conductor's buffers.
    const bound = defaultIsolation() === "worker" ? 200 : 150;
    expect(peak - before, `RSS before ${before} MiB, peak ${peak} MiB`).toBeLessThan(bound);
    expect(client.stderr).toMatch(/client is congested: pausing input/);
    client.child.stdout!.resume();
    for (const answer of await Promise.all(answers)) expect(answer.result, JSON.stringify(answer)).toEqual({ stopReason: "end_turn" });
    for (const s of sessions) {
      const chunks = client.received.filter((m) => m.method === "session/update" && m.params.sessionId === s);
      expect(chunks.length).toBeGreaterThanOrEqual(500); // its 500, then the agent's echo
    }
    expect(client.child.exitCode).toBeNull();
  }, 120_000);
});
