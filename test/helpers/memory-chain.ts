/**
 * A whole chain in memory for rule tests: a client, proxies with the given scripts and grants, and
 * the memory agent (memory-peer.ts), initialized. `request` sends from the client and resolves
 * with its answer; `lines` holds what Cordon logged.
 */
import { expect } from "vitest";
import { createLogger } from "../../runtime/log.js";
import { Conductor } from "../../runtime/routing/conductor.js";
import type { Grant } from "../../runtime/routing/grants.js";
import { agentScript, type Json, MemoryPeer, type Script } from "./memory-peer.js";

export async function memoryChain(scripts: Script[], grants: Grant[][] = [], agent: Script = agentScript) {
  const client = new MemoryPeer("client");
  const proxies = scripts.map((script, i) => new MemoryPeer(`proxy "p${i}"`, script));
  const agentPeer = new MemoryPeer('agent "memory"', agent);
  const lines: string[] = [];
  const conductor = new Conductor({
    client,
    proxies,
    agent: agentPeer,
    log: createLogger("info", (line) => lines.push(line)),
    onExit: () => {},
    proxySettings: grants.map((g) => ({ grants: g })),
  });
  await conductor.start();
  let nextId = 1;
  const request = (method: string, params?: unknown, id: string | number = `c${nextId++}`): Promise<Json> => {
    client.emit({ jsonrpc: "2.0", id, method, params });
    return client.waitFor((m) => m.id === id && !("method" in m));
  };
  const init = await request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } });
  expect(init.result?.agentInfo?.name, JSON.stringify(init)).toBe("memory-agent");
  return { client, proxies, agent: agentPeer, lines, request };
}

/** The answer `peer` got to its request `id`. */
export const answerTo = (peer: MemoryPeer, id: unknown): Promise<Json> => peer.waitFor((m) => m.id === id && !("method" in m));
