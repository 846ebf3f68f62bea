import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readChainConfig } from "./chain-config.js";
import { earlyAgentSpec, sameProcess, startAgentFromCommandLine } from "./early-agent.js";

const runtime = fileURLToPath(new URL("..", import.meta.url));

/** The runtime files a module loads (value imports only: `import type` is erased), itself included. */
function closure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  for (const [, spec] of text.matchAll(/^(?:import|export) (?!type )[^;]*? from "(\.{1,2}\/[^"]+)\.js";/gms)) {
    closure(resolve(dirname(file), `${spec}.ts`), seen);
  }
  return seen;
}

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

  it("the entry starts it having loaded only what spawning needs (no framing, routing, sandbox or logging modules)", () => {
    const loaded = [...closure(join(runtime, "cli/early-agent.ts"))].map((f) => relative(runtime, f)).sort();
    expect(loaded).toEqual(["cli/early-agent.ts", "cli/run-options.ts", "components/early-process.ts", "components/process-group.ts"]);
    const entry = readFileSync(new URL("../../bin/cordon.js", import.meta.url), "utf8");
    expect(entry.indexOf("early-agent.js")).toBeGreaterThan(-1);
    expect(entry.indexOf("early-agent.js")).toBeLessThan(entry.indexOf("await import(main.href)"));
  });

  it("the entry reads the run command line as main does: the agent after --, else the config's; none on help or a bad flag", async () => {
    const agent = ["-e", "setTimeout(() => {}, 10000)"];
    const started = startAgentFromCommandLine(["--proxy", "p.wasm", "--isolation", "worker", "--", process.execPath, ...agent]).agent;
    expect(started?.spec).toEqual({ command: process.execPath, args: agent, env: {} });
    expect(started?.child.pid).toBeGreaterThan(0);
    await started?.discard();
    const path = config({ agent: { command: process.execPath, args: agent } });
    const fromConfig = startAgentFromCommandLine(["-c", path]).agent;
    expect(fromConfig?.spec).toEqual({ command: process.execPath, args: agent, env: {}, cwd: undefined });
    await fromConfig?.discard();
    for (const argv of [["--help", "--", "node"], ["--bogus", "--", "node"], ["stray", "--", "node"], ["--proxy"], []]) {
      expect(startAgentFromCommandLine(argv).agent, JSON.stringify(argv)).toBeUndefined();
    }
  });
});
