import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readChainConfig } from "./chain-config.js";
import { earlyAgentSpec, sameProcess } from "./early-agent.js";

function config(value: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), "cordon-early-"));
  const path = join(dir, "chain.json");
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

describe("the agent cordon run starts before the chain is built", () => {
  it("the one after -- wins, as it does in the chain", () => {
    const path = config({ agent: { command: "other" } });
    expect(earlyAgentSpec(["node", "agent.js", "-v"], path)).toEqual({ command: "node", args: ["agent.js", "-v"], env: {} });
  });

  it("is, for a config's agent, the very process the validated config names (defaults, env, cwd relative to the config)", async () => {
    for (const agent of [
      { command: "node" },
      { command: "node", args: ["a.js"], env: { B: "2", A: "1" }, cwd: "sub" },
      { command: "node", cwd: "/abs" },
    ]) {
      const path = config({ proxies: [], agent });
      const early = earlyAgentSpec([], path)!;
      const { agent: validated } = await readChainConfig(path);
      expect(sameProcess(early, validated!), JSON.stringify({ early, validated })).toBe(true);
    }
  });

  it("starts nothing from a config it cannot read or whose agent has the wrong shape (validation reports those)", () => {
    expect(earlyAgentSpec([], join(tmpdir(), "no-such-chain.json"))).toBeUndefined();
    expect(earlyAgentSpec([], config("{ not json"))).toBeUndefined();
    expect(earlyAgentSpec([], config({ proxies: [] }))).toBeUndefined();
    expect(earlyAgentSpec([], "/dev/null")).toBeUndefined(); // not a regular file: never read synchronously
    expect(earlyAgentSpec([], config({ agent: { command: "node" }, pad: "x".repeat(2 * 1024 * 1024) }))).toBeUndefined();
    for (const agent of [
      { command: "" },
      { command: 1 },
      { command: "x", args: "a" },
      { command: "x", env: { A: 1 } },
      { command: "x", cwd: 3 },
    ]) {
      expect(earlyAgentSpec([], config({ agent })), JSON.stringify(agent)).toBeUndefined();
    }
  });

  it("a different process is not the same: the early one is then ended and the validated one started", () => {
    const base = { command: "node", args: ["a.js"], env: { A: "1" } };
    expect(sameProcess(base, { ...base, env: { A: "1" } })).toBe(true);
    expect(sameProcess(base, { ...base, args: ["b.js"] })).toBe(false);
    expect(sameProcess(base, { ...base, env: { A: "2" } })).toBe(false);
    expect(sameProcess(base, { ...base, cwd: "/" })).toBe(false);
  });
});
