/**
 * acpx 0.19.1 — a real ACP client nobody here wrote — keeping a persistent session through Cordon,
 * exactly as a user types it (from the repository root):
 *
 *   acpx --agent "node <abs>/bin/cordon.js run --proxy <abs>/proxies/dist/passthrough.wasm -- node <abs>/bin/cordon.js reference-agent" sessions new
 *   acpx --agent "…" "<prompt>"   (twice)   ·   acpx --agent "…" status   ·   acpx --agent "…" sessions close
 *
 * and one-shot `exec` with `--approve-all` / `--deny-all` on the reference agent's `permission <title>`.
 * A persistent session makes acpx start a detached queue owner that keeps the chain alive between
 * commands; every test runs with its own HOME (acpx keeps state in ~/.acpx) and its own reference
 * agent store, and every queue owner it started is gone when the file ends — `sessions close`
 * must end it, and anything left over is killed by its process group.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, ROOT } from "./helpers/paths.js";

const run = promisify(execFile);
const ACPX = join(ROOT, "node_modules/.bin/acpx");
const AGENT = `${NODE} ${CORDON} run --proxy ${JSON.stringify(proxyWasm("passthrough"))} -- ${NODE} ${CORDON} reference-agent`;

type Json = Record<string, any>;
interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

const scratch: string[] = [];
/** Queue-owner pids seen, so that whatever survives a failed test can still be ended. */
const owners = new Set<number>();
/**
 * The component cache Cordon would use with the real HOME (the tests change HOME for acpx), so the
 * pass-through proxy is not unpacked by jco again on every start. The cache is content-addressed
 * and checked on every load, so sharing it is safe.
 */
const cache = process.env.CORDON_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "cordon", "components");

afterAll(async () => {
  for (const pid of owners) killGroup(pid);
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** A fresh HOME (and reference-agent store) for one acpx user. */
function newHome(): string {
  const home = mkdtempSync(join(tmpdir(), "cordon-acpx-home-"));
  scratch.push(home);
  return home;
}

async function acpx(home: string, args: string[]): Promise<Result> {
  const env = {
    ...process.env,
    HOME: home,
    CORDON_AGENT_STORE: join(home, "agent-store"),
    CORDON_CACHE_DIR: cache,
    CORDON_LOG: "warn",
    npm_config_update_notifier: "false",
  };
  let result: Result;
  try {
    const { stdout, stderr } = await run(ACPX, ["--agent", AGENT, ...args], { cwd: ROOT, env, timeout: 45_000 });
    result = { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    result = { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
  for (const pid of queueOwners(home)) owners.add(pid);
  return result;
}

/** The pids in acpx's queue-owner lock files under this HOME. */
function queueOwners(home: string): number[] {
  const dir = join(home, ".acpx", "queues");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".lock"))
    .flatMap((f) => {
      try {
        const pid = JSON.parse(readFileSync(join(dir, f), "utf8")).pid;
        return typeof pid === "number" ? [pid] : [];
      } catch {
        return [];
      }
    });
}

/** Pids of the live processes in process group `pgid` (Linux /proc). */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // state ppid pgrp …
      if (fields[0] !== "Z" && Number(fields[2]) === pgid) members.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

/** Ends a queue owner we started and everything in its process group (it leads its own group). */
function killGroup(pid: number): void {
  try {
    if (groupMembers(pid).includes(pid)) process.kill(-pid, "SIGKILL");
    else process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Every stdout line of `--format json`, parsed. */
const jsonLines = (stdout: string): Json[] =>
  stdout
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Json);

/** The JSON-RPC answer (from `lines`) to the request with `method`. */
function answerTo(lines: Json[], method: string): Json | undefined {
  const request = lines.find((m) => m.method === method && "id" in m);
  if (!request) return undefined;
  return lines.slice(lines.indexOf(request) + 1).find((m) => !("method" in m) && m.id === request.id);
}

const texts = (lines: Json[]) =>
  lines.flatMap((m) =>
    m.method === "session/update" && m.params.update.sessionUpdate === "agent_message_chunk" ? [m.params.update.content.text] : [],
  );

describe("acpx persistent session through cordon run (pass-through proxy) → reference agent", () => {
  let home: string;
  let sessionId: string;
  let ownerPid: number;

  beforeAll(() => {
    home = newHome();
  });

  it("sessions new: creates a session through the chain", async () => {
    const r = await acpx(home, ["--format", "json", "sessions", "new"]);
    expect(r.code, r.stderr).toBe(0);
    const [ensured] = jsonLines(r.stdout);
    expect(ensured).toMatchObject({ action: "session_ensured", created: true });
    sessionId = ensured.acpxSessionId;
    // The id is the reference agent's, so session/new went through Cordon to the agent and back.
    expect(sessionId).toMatch(/^sess-[0-9a-f-]{36}$/);
    expect(ensured.acpxRecordId).toBe(sessionId);
  });

  it("a prompt: the queue owner starts the chain, reattaches the session and gets the echo", async () => {
    const r = await acpx(home, ["--format", "json", "--ttl", "60", "first persistent prompt"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines.filter((m) => m.method === "initialize")).toHaveLength(1);
    // acpx reattaches the stored session (resume, or load when resume is not offered), and it works.
    const reattach = lines.find((m) => (m.method === "session/resume" || m.method === "session/load") && "id" in m)!;
    expect(reattach.params.sessionId).toBe(sessionId);
    const reattached = answerTo(lines, reattach.method);
    expect(reattached?.result, JSON.stringify(reattached)).toBeDefined();
    expect(texts(lines)).toContain("echo: first persistent prompt\n");
    expect(answerTo(lines, "session/prompt")?.result).toEqual({ stopReason: "end_turn" });
    // The client sees plain ACP: no proxy envelopes or Cordon-internal methods leak out.
    expect(r.stdout).not.toMatch(/proxy\/successor|proxy\/initialize|_cordon\//);
    const pids = queueOwners(home);
    expect(pids).toHaveLength(1);
    ownerPid = pids[0];
    expect(groupMembers(ownerPid)).toContain(ownerPid);
  });

  it("a second prompt goes to the same live chain (no new initialize)", async () => {
    const r = await acpx(home, ["--ttl", "60", "second persistent prompt"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("echo: second persistent prompt\n");
    expect(r.stdout).toContain("[done] end_turn");
    expect(r.stdout + r.stderr).not.toContain("initialize");
    expect(queueOwners(home)).toEqual([ownerPid]);
  });

  it("status: the session is alive, owned by the running queue owner", async () => {
    const r = await acpx(home, ["--format", "json", "status"]);
    expect(r.code, r.stderr).toBe(0);
    const [status] = jsonLines(r.stdout);
    expect(status).toMatchObject({ action: "status_snapshot", status: "alive", acpxSessionId: sessionId });
    expect(typeof status.lastPromptTime).toBe("string");
    const text = await acpx(home, ["status"]);
    expect(text.stdout).toContain(`session: ${sessionId}`);
    expect(text.stdout).toContain("status: running");
  });

  it("sessions close: the session is closed and the queue owner and the whole chain are gone", async () => {
    const r = await acpx(home, ["--format", "json", "sessions", "close"]);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout)[0]).toMatchObject({ action: "session_closed", acpxSessionId: sessionId });
    await expect.poll(() => groupMembers(ownerPid), { timeout: 10_000, interval: 100 }).toEqual([]);
    const after = await acpx(home, ["--format", "json", "status"]);
    expect(jsonLines(after.stdout)[0]).toMatchObject({ action: "status_snapshot", status: "no-session" });
  });
});

// Independent one-shot runs (each with its own HOME), so they may run side by side.
describe.concurrent("acpx exec through cordon run (pass-through proxy) → reference agent", () => {
  it("--approve-all: the permission request crosses the chain and the allow answer comes back", async () => {
    const home = newHome();
    const r = await acpx(home, ["--format", "json", "--approve-all", "exec", "permission Write file"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonLines(r.stdout);
    const ask = lines.find((m) => m.method === "session/request_permission")!;
    expect(ask.params.toolCall.title).toBe("Write file");
    expect(answerTo(lines, "session/request_permission")?.result.outcome).toMatchObject({ outcome: "selected", optionId: "allow" });
    expect(texts(lines).join("")).toMatch(/^permission allowed: Write file/m);
    expect(answerTo(lines, "session/prompt")?.result).toEqual({ stopReason: "end_turn" });
    expect(queueOwners(home)).toEqual([]); // exec is one-shot: nothing is left running
  });

  it("--deny-all: the reject answer comes back and the tool does not run", async () => {
    const home = newHome();
    const r = await acpx(home, ["--deny-all", "exec", "permission Write file"]);
    // acpx exits 5 (its EXIT_CODES.PERMISSION_DENIED) when every permission request was denied.
    expect(r.code, r.stderr).toBe(5);
    expect(r.stdout).toContain("permission rejected: Write file");
    expect(r.stdout).not.toContain("ran Write file");
    expect(r.stdout).toContain("[done] end_turn");
    expect(queueOwners(home)).toEqual([]);
  });
});
