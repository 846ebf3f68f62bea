/**
 * `cordon run --config` with the proxies a test writes as objects, in front of the scripted agent,
 * driven by a raw client: the harness the hostile and fault suites share. `useConfigChains()`
 * registers the clean-up in the calling test file and returns the starter.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { CORDON, NODE, SCRIPTED_AGENT } from "./paths.js";
import { type Json, RawClient } from "./raw-client.js";

export type ChainStarter = (proxies: Json[], env?: Record<string, string>) => Promise<RawClient>;

export function useConfigChains(initialize: Json = { protocolVersion: 1 }): ChainStarter {
  const open: RawClient[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
  return async (proxies, env = {}) => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-chain-"));
    const config = join(dir, "chain.json");
    writeFileSync(config, JSON.stringify({ proxies, agent: { command: SCRIPTED_AGENT[0], args: SCRIPTED_AGENT.slice(1) } }));
    const client = new RawClient(NODE, [CORDON, "run", "--config", config], env);
    open.push(client);
    const init = await client.request("initialize", initialize);
    expect(init.result?.agentInfo?.name, JSON.stringify(init)).toBe("scripted-agent");
    return client;
  };
}

/** A new session's id. */
export async function session(client: RawClient): Promise<string> {
  return (await client.request("session/new", { cwd: "/tmp", mcpServers: [] })).result.sessionId;
}

/** A one-text-block prompt, answered (result or error); `timeoutMs` as `RawClient.waitFor`'s. */
export const prompt = (client: RawClient, sessionId: string, text: string, timeoutMs?: number) =>
  client.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }, undefined, timeoutMs);
