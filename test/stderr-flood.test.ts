/**
 * Cordon's stderr under a reader that stops reading (issue 17, hole 4), through a real `cordon run`:
 * an agent floods its stderr (which Cordon passes on to its own), and nobody reads Cordon's stderr
 * for a while. Cordon's memory stays flat, ACP on stdout goes on, and once stderr is read again one
 * line says how much was dropped.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CORDON, NODE } from "./helpers/paths.js";

/** An agent that answers initialize, writes `mib` MiB to its stderr (respecting its pipe), then tells the client on stdout; other requests get `{pong: true}`. */
const floodingAgent = (mib: number) => `
  const line = "e".repeat(4095) + "\\n";
  const out = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
  let buffered = "";
  process.stdin.on("data", async (chunk) => {
    buffered += chunk;
    const lines = buffered.split("\\n");
    buffered = lines.pop();
    for (const l of lines) {
      const m = JSON.parse(l);
      if (m.method !== "initialize") {
        if ("id" in m) out({ jsonrpc: "2.0", id: m.id, result: { pong: true } });
        continue;
      }
      out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
      for (let i = 0; i < ${mib} * 256; i++)
        if (!process.stderr.write(line)) await new Promise((r) => process.stderr.once("drain", r));
      out({ jsonrpc: "2.0", method: "_test/flooded", params: {} });
    }
  });`;

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

describe("Cordon's stderr against a reader that stops", () => {
  it.skipIf(process.platform !== "linux")(
    "an agent writing 64 MiB to stderr while nobody reads Cordon's: memory stays flat, ACP goes on, the drop is reported",
    async () => {
      const cordon = spawn(NODE, [CORDON, "run", "--", NODE, "-e", floodingAgent(64)], { stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      const seen = (pattern: RegExp) =>
        new Promise<void>((resolve) => {
          const check = () => pattern.test(stdout) && resolve();
          cordon.stdout.on("data", check);
          check();
        });
      cordon.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
      const exited = new Promise((resolve) => cordon.once("exit", resolve));
      // Nobody reads Cordon's stderr until the flood is over.
      cordon.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } })}\n`);
      await seen(/"id":1,"result"/);
      const before = rssMiB(cordon.pid!);
      await seen(/_test\/flooded/);
      const grown = rssMiB(cordon.pid!) - before;
      // Without the bound, Cordon held most of the 64 MiB it could not write.
      expect(grown).toBeLessThan(32);
      let stderr = "";
      cordon.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
      // ACP still flows both ways.
      cordon.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "_x/ping", params: {} })}\n`);
      await seen(/"id":2,"result":\{"pong":true\}/);
      await expect.poll(() => stderr, { timeout: 20_000 }).toMatch(/\[cordon\] warn: \d+ log lines dropped while stderr was congested/);
      const dropped = Number(/(\d+) log lines dropped/.exec(stderr)![1]);
      expect(dropped).toBeGreaterThan(0);
      cordon.stdin.end();
      await exited;
    },
    60_000,
  );
});
