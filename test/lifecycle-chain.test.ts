/**
 * The seed-000 lifecycle through Cordon: the official SDK client walks the whole session
 * lifecycle (initialize → new → prompts with every content type, tools, fs and terminal requests,
 * permission allow / deny / cancel, cancel mid-turn → close → list → load with replay → resume →
 * modes and config options, valid and invalid → fork → delete) against the reference agent —
 * once directly, once through pass-through WASM proxies and nested conductors. What the client
 * sees through the chain must equal what it sees directly, step by step, update by update.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { LifecycleObserver, type LifecycleTranscript, runLifecycle } from "./helpers/lifecycle.js";
import { CORDON, NODE, proxyWasm } from "./helpers/paths.js";

const cwd = mkdtempSync(join(tmpdir(), "cordon-lifecycle-cwd-"));

async function lifecycle(args: string[]): Promise<LifecycleTranscript> {
  const store = mkdtempSync(join(tmpdir(), "cordon-lifecycle-store-"));
  const child = spawn(NODE, args, {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, CORDON_AGENT_STORE: store, CORDON_LOG: "warn" },
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const observer = new LifecycleObserver();
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const connection = observer.install(acp.client({ name: "lifecycle-through-cordon" })).connect(observer.wrap(stream));
  try {
    return await runLifecycle(connection.agent, { observer, cwd, timeoutMs: 20_000 });
  } catch (error) {
    throw new Error(`${(error as Error).message}\nstderr: ${stderr}`);
  } finally {
    connection.close();
    child.stdin.end();
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

/** What must match between runs: everything but session ids and clock times. */
function normalize(t: LifecycleTranscript): unknown {
  let text = JSON.stringify(
    t.steps.map(({ name, method, params, result, error, updates, after, clientRequests }) => ({
      name,
      method,
      params,
      result,
      error,
      updates,
      after,
      clientRequests,
    })),
  );
  const ids = [...new Set(text.match(/sess-[0-9a-f-]{36}/g) ?? [])];
  for (const [i, id] of ids.entries()) text = text.split(id).join(`<session ${i}>`);
  text = text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>");
  return JSON.parse(text);
}

const pass = ["--proxy", proxyWasm("passthrough")];
const nested = (...inner: string[]) => ["--proxy-cmd", [NODE, CORDON, "proxy", ...inner].map((w) => JSON.stringify(w)).join(" ")];

describe("the seed-000 lifecycle through the chain", () => {
  it("is the same through 3 pass-through proxies and nested conductors as it is directly", async () => {
    const direct = await lifecycle([CORDON, "reference-agent"]);
    const chained = await lifecycle([
      CORDON,
      "run",
      ...pass,
      ...nested(...pass),
      ...pass,
      ...nested(),
      "--",
      NODE,
      CORDON,
      "reference-agent",
    ]);
    // The run itself is meaningful: it loaded with a replay, forked and deleted.
    const names = direct.steps.map((s) => s.name);
    for (const step of ["new", "close", "list", "load", "resume", "fork", "delete"])
      expect(names.some((n) => n.startsWith(step))).toBe(true);
    const load = direct.steps.find((s) => s.name.startsWith("load"))!;
    expect(load.updates.length).toBeGreaterThan(5);
    // The one intended difference: Cordon's MCP bridge advertises MCP-over-ACP for an agent that lacks it.
    const init = chained.steps.find((s) => s.method === "initialize")!.result as {
      agentCapabilities: { mcpCapabilities: Record<string, unknown> };
    };
    expect(init.agentCapabilities.mcpCapabilities.acp).toBe(true);
    delete init.agentCapabilities.mcpCapabilities.acp;
    expect(normalize(chained)).toEqual(normalize(direct));
  }, 120_000);
});
