/**
 * What the sandbox ring checks after each attack through a real `cordon run`: the tree's peak
 * memory while it ran, and that Cordon lived, named the attacker, and serves a fresh session.
 */
import { expect } from "vitest";
import { treeRssMiB } from "../../bench/process-tree.js";
import { prompt } from "./config-chain.js";
import type { RawClient } from "./raw-client.js";

/** Samples the tree's RSS every 25 ms until `work` settles; returns its result and the peak. */
export async function peakRss<T>(client: RawClient, work: Promise<T>): Promise<{ result: T; peakMiB: number }> {
  let peak = treeRssMiB(client.child.pid!);
  const timer = setInterval(() => (peak = Math.max(peak, treeRssMiB(client.child.pid!))), 25);
  try {
    const result = await work;
    peak = Math.max(peak, treeRssMiB(client.child.pid!));
    return { result, peakMiB: peak };
  } finally {
    clearInterval(timer);
  }
}

/** After the attacker was stopped: Cordon is alive, says who it was, and a fresh session gets its prompt answered (once the attacker has restarted). */
export async function survivedAndServes(client: RawClient, named: RegExp, name = "attacker"): Promise<void> {
  expect(client.child.exitCode).toBeNull();
  const notice = await client.waitFor((m) => m.method === "_cordon/notice");
  expect(notice.params.component).toBe(`proxy "${name}"`);
  expect(notice.params.message).toMatch(named);
  for (let attempt = 0; attempt < 100; attempt++) {
    const s = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
    if (s.result) {
      const res = await prompt(client, s.result.sessionId, "still alive?");
      if (res.result) {
        expect(res.result).toEqual({ stopReason: "end_turn" });
        expect(client.child.exitCode).toBeNull();
        return;
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the chain did not recover; stderr: ${client.stderr}`);
}
