/**
 * Process lifecycle of what Cordon starts (issue 11, point 1): agents behind launchers (`npx …`,
 * npm wrappers that spawnSync a native binary) whose real process inherits the pipes, ignores EOF
 * and SIGTERM. Whatever ends Cordon — the client's EOF, a signal, a second signal, the agent's
 * death, even SIGKILL (the watchdog) — Cordon exits within a bounded time with a code that says
 * why, and no process of the agent's (or a native proxy's) group survives.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { procStat } from "../runtime/components/process-group.js";
import { CORDON, NODE, ROOT } from "./helpers/paths.js";
import { RawClient } from "./helpers/raw-client.js";

const LAUNCHER = `${ROOT}test/peers/launcher.mjs`;
const STUBBORN = [NODE, `${ROOT}test/peers/stubborn-agent.mjs`, "--ignore-eof", "--ignore-term"];
/** EOF grace + TERM grace + the last second, and slack for a loaded machine. */
const BOUND_MS = 7000;

/** Alive and not a zombie (orphans may stay zombies where init does not reap them). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = procStat(pid);
  return process.platform !== "linux" || (stat !== null && stat.state !== "Z" && stat.state !== "X");
}

function recorded(file: string): { role: string; pid: number }[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [role, pid] = line.split(" ");
      return { role, pid: Number(pid) };
    });
}

async function until<T>(get: () => T | undefined, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const started: { pid: number }[] = [];
const clients: RawClient[] = [];
afterEach(() => {
  // Whatever a failed test left behind.
  for (const { pid } of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  for (const c of clients.splice(0)) c.child.kill("SIGKILL");
});

/** Cordon in front of `agent`; resolves once `roles` have all recorded their pids and a prompt went through. */
async function start(agent: string[], roles: string[], extra: string[] = []) {
  const pids = join(mkdtempSync(join(tmpdir(), "cordon-lifecycle-")), "pids");
  const client = new RawClient(NODE, [CORDON, "run", ...extra, "--", ...agent], { LIFECYCLE_PIDS: pids });
  clients.push(client);
  const init = await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  expect(init.result?.protocolVersion, JSON.stringify(init)).toBe(1);
  const session = await client.request("session/new", { cwd: ROOT, mcpServers: [] });
  const sessionId = session.result.sessionId as string;
  const prompt = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
  expect(prompt.result).toEqual({ stopReason: "end_turn" });
  const procs = await until(
    () => {
      const list = recorded(pids);
      const want = [...roles].sort().join(",");
      return list
        .map((p) => p.role)
        .sort()
        .join(",") === want
        ? list
        : undefined;
    },
    5000,
    `pids of ${roles.join(", ")}`,
  );
  started.push(...procs);
  for (const p of procs) expect(alive(p.pid), `${p.role} ${p.pid} is running`).toBe(true);
  return { client, procs, sessionId };
}

function survivors(procs: { role: string; pid: number }[]): string[] {
  return procs.filter((p) => alive(p.pid)).map((p) => `${p.role} ${p.pid}`);
}

async function timedExit(client: RawClient) {
  const t0 = Date.now();
  const status = await client.exited;
  return { ...status, ms: Date.now() - t0 };
}

describe("agents behind launchers: no hang, no leftover process", () => {
  it("an agent that ends on EOF is not kept waiting for the grace: Cordon exits 0 at once", async () => {
    const { client, procs } = await start([NODE, LAUNCHER, NODE, `${ROOT}test/peers/stubborn-agent.mjs`], ["launcher", "agent"]);
    client.child.stdin!.end();
    const exit = await timedExit(client);
    expect(exit.code, client.stderr).toBe(0);
    expect(exit.ms).toBeLessThan(1000);
    expect(survivors(procs)).toEqual([]);
  });

  it("spawnSync launcher → agent ignoring EOF and SIGTERM: client EOF ends Cordon (exit 0) and the whole group", async () => {
    const { client, procs } = await start([NODE, LAUNCHER, "--sync", ...STUBBORN], ["launcher", "agent"]);
    client.child.stdin!.end();
    const exit = await timedExit(client);
    expect(exit.code, client.stderr).toBe(0);
    expect(exit.ms).toBeLessThan(BOUND_MS);
    expect(survivors(procs)).toEqual([]);
  });

  it("npx-style double launcher (launcher → launcher → agent) plus a grandchild holding the pipes: EOF ends them all", async () => {
    const { client, procs } = await start(
      [NODE, LAUNCHER, NODE, LAUNCHER, "--hold", ...STUBBORN],
      ["launcher", "launcher", "holder", "agent"],
    );
    client.child.stdin!.end();
    const exit = await timedExit(client);
    expect(exit.code, client.stderr).toBe(0);
    expect(exit.ms).toBeLessThan(BOUND_MS);
    expect(survivors(procs)).toEqual([]);
  });

  it("the agent dies while a grandchild holds its pipes: the pending prompt gets an error, exit 1, the group is ended", async () => {
    const { client, procs, sessionId } = await start(
      [NODE, LAUNCHER, "--hold", NODE, `${ROOT}test/peers/stubborn-agent.mjs`],
      ["launcher", "holder", "agent"],
    );
    const t0 = Date.now();
    const res = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "crash" }] });
    expect(res.error?.message).toMatch(/agent .* exited with code 3/);
    const exit = await client.exited;
    expect(exit.code, client.stderr).toBe(1);
    expect(Date.now() - t0).toBeLessThan(BOUND_MS);
    expect(survivors(procs)).toEqual([]);
  });

  it("a native proxy behind a launcher with a holder is in its own group and ended the same way", async () => {
    const proxyCmd = `${NODE} ${LAUNCHER} --hold ${NODE} ${CORDON} proxy`;
    const { client, procs } = await start(
      [NODE, LAUNCHER, "--sync", ...STUBBORN],
      ["launcher", "holder", "launcher", "agent"],
      ["--proxy-cmd", proxyCmd],
    );
    client.child.stdin!.end();
    const exit = await timedExit(client);
    expect(exit.code, client.stderr).toBe(0);
    expect(exit.ms).toBeLessThan(BOUND_MS);
    expect(survivors(procs)).toEqual([]);
  });
});

describe("signals to Cordon", () => {
  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
    ["SIGHUP", 129],
  ] as const)("%s: the group is ended, exit %i", async (signal, code) => {
    const { client, procs } = await start([NODE, LAUNCHER, "--sync", ...STUBBORN], ["launcher", "agent"]);
    client.child.kill(signal);
    const exit = await timedExit(client);
    expect(exit.code, client.stderr).toBe(code);
    expect(exit.ms).toBeLessThan(BOUND_MS);
    expect(survivors(procs)).toEqual([]);
  });

  it("a second signal while ending exits at once and SIGKILLs the group", async () => {
    const { client, procs } = await start([NODE, LAUNCHER, "--sync", ...STUBBORN], ["launcher", "agent"]);
    client.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300)); // inside the EOF grace: the agent ignores EOF
    client.child.kill("SIGINT");
    const exit = await timedExit(client);
    expect(exit.code, client.stderr).toBe(130);
    expect(exit.ms).toBeLessThan(1000);
    await until(() => (survivors(procs).length === 0 ? true : undefined), 1000, "the group to die").catch(() => undefined);
    expect(survivors(procs)).toEqual([]);
  });

  it("a signal after the client's EOF (Cordon already ending) exits at once too", async () => {
    const { client, procs } = await start([NODE, LAUNCHER, "--sync", ...STUBBORN], ["launcher", "agent"]);
    client.child.stdin!.end();
    await new Promise((r) => setTimeout(r, 300));
    client.child.kill("SIGTERM");
    const exit = await timedExit(client);
    expect(exit.code, client.stderr).toBe(143);
    expect(exit.ms).toBeLessThan(1000);
    await until(() => (survivors(procs).length === 0 ? true : undefined), 1000, "the group to die").catch(() => undefined);
    expect(survivors(procs)).toEqual([]);
  });

  it("SIGKILL of Cordon: the watchdog ends the agent's group within seconds", async () => {
    const { client, procs } = await start([NODE, LAUNCHER, "--sync", ...STUBBORN], ["launcher", "agent"]);
    client.child.kill("SIGKILL");
    const exit = await client.exited;
    expect(exit.signal).toBe("SIGKILL");
    await until(() => (survivors(procs).length === 0 ? true : undefined), 5000, "the watchdog to end the group").catch(() => undefined);
    expect(survivors(procs)).toEqual([]);
  });
});

describe("the agent after -- starts while Cordon loads", () => {
  it("a usage error found after it started (a missing config) exits 2 and ends it, stubborn as it is", async () => {
    const pids = join(mkdtempSync(join(tmpdir(), "cordon-lifecycle-")), "pids");
    // sh records its pid at once, then becomes a sleep that ignores SIGTERM (ignored signals survive exec).
    const agent = ["/bin/sh", "-c", `echo "agent $$" >> "$LIFECYCLE_PIDS"; trap "" TERM; exec sleep 30`];
    const client = new RawClient(NODE, [CORDON, "run", "--config", join(tmpdir(), "no-such-chain.json"), "--", ...agent], {
      LIFECYCLE_PIDS: pids,
    });
    clients.push(client);
    const exit = await timedExit(client);
    expect(exit.code).toBe(2);
    const procs = recorded(pids);
    started.push(...procs);
    expect(procs.map((p) => p.role)).toEqual(["agent"]);
    await until(() => (survivors(procs).length === 0 ? true : undefined), BOUND_MS, "the agent to be ended").catch(() => undefined);
    expect(survivors(procs)).toEqual([]);
  });
});
