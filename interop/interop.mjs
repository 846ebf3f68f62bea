#!/usr/bin/env node
/**
 * `make interop`: Cordon against real ACP agents from npm that nobody here wrote.
 *
 * Installs the agents pinned in interop/agents.json into a cache folder outside the repository
 * ($CORDON_INTEROP_CACHE, default $XDG_CACHE_HOME/cordon-interop or ~/.cache/cordon-interop), then
 * runs one scripted conversation against each — directly, and through `cordon run` with 0 and 3
 * pass-through proxies — and compares:
 *  - messages: every answer and every notification, up to ids, session ids, temp paths, UUIDs
 *    and times, and Cordon's one documented change (`agentCapabilities.mcpCapabilities.acp`);
 *  - exit: after stdin EOF Cordon must exit 0 within a bound, whatever the agent does;
 *  - leftovers: no process the run started (the agent, its launchers and children) may survive.
 * One line per agent and mode, then `N passed, M failed`. The direct run is the baseline: it
 * passes when the agent answered `initialize`; its own exit and leftovers are reported, not judged.
 *
 * No API keys: the agents get dummy ones (API-key variables of the environment are dropped), and
 * there is no network to reach. Each run gets a fresh HOME and working folder.
 *
 *   node interop/interop.mjs [--agents codex-acp,gemini-cli] [--modes direct,cordon-0,cordon-3] [--install-only]
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CACHE = process.env.CORDON_INTEROP_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "cordon-interop");
const AGENTS_DIR = join(CACHE, "agents");
const RUNS_DIR = join(CACHE, "runs");
const WORK_DIR = join(CACHE, "work");
const PASSTHROUGH = join(ROOT, "proxies/dist/passthrough.wasm");
const CORDON = join(ROOT, "bin/cordon.js");

/** Time limits: one request, the cancelled prompt, the agent's exit after EOF (direct), Cordon's. */
const REQUEST_MS = 15_000;
const PROMPT_MS = 20_000;
const DIRECT_EXIT_MS = 5_000;
const CORDON_EXIT_MS = 8_000;
/** Past this, a run sends no further request (an agent that answers nothing cannot stall the whole run). */
const RUN_BUDGET_MS = 90_000;

const { values: opts } = parseArgs({
  options: { agents: { type: "string" }, modes: { type: "string" }, "install-only": { type: "boolean" } },
});
const catalog = JSON.parse(readFileSync(join(ROOT, "interop/agents.json"), "utf8")).agents;
const wanted = opts.agents ? opts.agents.split(",") : catalog.map((a) => a.name);
const agents = catalog.filter((a) => wanted.includes(a.name));
const MODES = opts.modes ? opts.modes.split(",") : ["direct", "cordon-0", "cordon-3"];

// ---- install --------------------------------------------------------------------------------

function installedVersion(name) {
  try {
    return JSON.parse(readFileSync(join(AGENTS_DIR, "node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return null;
  }
}

function install() {
  mkdirSync(AGENTS_DIR, { recursive: true });
  if (!existsSync(join(AGENTS_DIR, "package.json"))) {
    writeFileSync(join(AGENTS_DIR, "package.json"), JSON.stringify({ name: "cordon-interop-agents", private: true }) + "\n");
  }
  const specs = agents.flatMap((a) => [a.package, ...(a.extra ?? [])]);
  const missing = specs.filter((spec) => {
    const at = spec.lastIndexOf("@");
    return installedVersion(spec.slice(0, at)) !== spec.slice(at + 1);
  });
  if (missing.length === 0) return;
  process.stderr.write(`==> installing into ${AGENTS_DIR}: ${missing.join(" ")}\n`);
  const r = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--prefix", AGENTS_DIR, ...missing], { stdio: ["ignore", 2, 2] });
  if (r.status !== 0) {
    process.stderr.write("npm install failed\n");
    process.exit(2);
  }
}

// ---- processes ------------------------------------------------------------------------------

function procStat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const comm = text.slice(text.indexOf("(") + 1, text.lastIndexOf(")"));
    const [state, ppid, pgrp] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid, comm, state, ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return null;
  }
}

function allProcs() {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .map((e) => procStat(Number(e)))
    .filter(Boolean);
}

/** The live (non-zombie) processes below `root`, and those of its process group. */
function descendants(root) {
  const procs = allProcs();
  const found = new Map();
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift();
    for (const p of procs) {
      if ((p.ppid === pid || p.pgrp === root) && !found.has(p.pid) && p.pid !== root) {
        found.set(p.pid, p);
        queue.push(p.pid);
      }
    }
  }
  return [...found.values()].filter((p) => p.state !== "Z");
}

function aliveProc(p) {
  const now = procStat(p.pid);
  return now !== null && now.state !== "Z" && now.comm === p.comm;
}

function killAll(procs, signal) {
  for (const p of procs) {
    try {
      process.kill(p.pid, signal);
    } catch {
      // gone
    }
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- one run --------------------------------------------------------------------------------

/** The environment an agent gets: ours without API keys or tokens, a fresh HOME, dummy keys. */
function agentEnv(agent, home) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/(API_KEY|TOKEN|SECRET|AUTH)/i.test(k)));
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local/share"),
    XDG_STATE_HOME: join(home, ".local/state"),
    PATH: `${join(AGENTS_DIR, "node_modules/.bin")}:${process.env.PATH}`,
    CORDON_LOG: "error",
    ...agent.env,
  };
}

function commandFor(agent, mode) {
  const bin = join(AGENTS_DIR, "node_modules/.bin", agent.bin);
  if (mode === "direct") return [bin, ...agent.args];
  const n = Number(mode.split("-")[1]);
  return [process.execPath, CORDON, "run", ...Array.from({ length: n }, () => ["--proxy", PASSTHROUGH]).flat(), "--", bin, ...agent.args];
}

async function runOnce(agent, mode) {
  // Not under the system temp dir: some agents refuse to set up their home there.
  mkdirSync(WORK_DIR, { recursive: true });
  const home = mkdtempSync(join(WORK_DIR, "home-"));
  const cwd = mkdtempSync(join(WORK_DIR, "cwd-"));
  const [command, ...args] = commandFor(agent, mode);
  const child = spawn(command, args, { cwd, env: agentEnv(agent, home), stdio: ["pipe", "pipe", "pipe"], detached: true });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })));
  child.on("error", () => {});
  child.stdin.on("error", () => {});
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (c) => (stderr = (stderr + c).slice(-8000)));

  const transcript = { steps: [], notifications: [], agentRequests: [] };
  const waiting = new Map();
  let nextId = 1;
  let buffer = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.trim()) continue;
      let m;
      try {
        m = JSON.parse(line);
      } catch {
        transcript.notifications.push({ malformed: line.slice(0, 200) });
        continue;
      }
      if (m.method !== undefined && m.id !== undefined) {
        // The agent asks the client: permission is cancelled, everything else is not offered.
        transcript.agentRequests.push({ method: m.method, params: m.params });
        const reply =
          m.method === "session/request_permission"
            ? { jsonrpc: "2.0", id: m.id, result: { outcome: { outcome: "cancelled" } } }
            : { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } };
        send(reply);
      } else if (m.method !== undefined) {
        transcript.notifications.push({ method: m.method, params: m.params });
      } else if (waiting.has(m.id)) {
        waiting.get(m.id)(m);
        waiting.delete(m.id);
      } else {
        transcript.notifications.push({ unmatched: m });
      }
    }
  });
  function send(message) {
    if (child.stdin.writable) child.stdin.write(JSON.stringify(message) + "\n");
  }
  function request(method, params, timeoutMs = REQUEST_MS) {
    const id = nextId++;
    send({ jsonrpc: "2.0", id, method, params });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve({ timeout: true });
      }, timeoutMs);
      waiting.set(id, (m) => {
        clearTimeout(timer);
        resolve(m.error !== undefined ? { error: m.error } : { result: m.result });
      });
    });
  }
  const deadline = Date.now() + RUN_BUDGET_MS;
  async function step(name, method, params, timeoutMs) {
    if (Date.now() > deadline) {
      transcript.steps.push({ name, method, skipped: "run budget spent" });
      return {};
    }
    const outcome = await Promise.race([request(method, params, timeoutMs), exited.then(() => ({ exited: true }))]);
    transcript.steps.push({ name, method, ...outcome });
    return outcome;
  }

  // The scripted conversation.
  const init = await step("initialize", "initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "cordon-interop", version: "1.0.0" },
  });
  if (init.result) {
    const methods = init.result.authMethods ?? [];
    if (methods.length > 0) {
      const method = methods.find((m) => /key/i.test(m.id)) ?? methods[0];
      await step(`authenticate ${method.id}`, "authenticate", { methodId: method.id });
    }
    const created = await step("session/new", "session/new", { cwd, mcpServers: [] });
    const sessionId = created.result?.sessionId;
    if (sessionId) {
      const modes = created.result.modes;
      if (modes?.availableModes?.length) {
        const mode = modes.availableModes.find((m) => m.id !== modes.currentModeId) ?? modes.availableModes[0];
        await step(`set_mode ${mode.id}`, "session/set_mode", { sessionId, modeId: mode.id });
      }
      // A config option other than the mode (set_mode covers that), if there is one.
      const options = created.result.configOptions ?? [];
      const option = options.find((o) => o.category !== "mode") ?? options[0];
      if (option) {
        let value;
        if (option.type === "boolean") value = !option.currentValue;
        else {
          const values = (option.options ?? []).flatMap((o) => (o.options ? o.options : [o])).map((o) => o.value);
          value = values.find((v) => v !== option.currentValue) ?? values[0];
        }
        await step(`set_config_option ${option.id}`, "session/set_config_option", { sessionId, configId: option.id, value });
      }
      const models = created.result.models;
      if (models?.availableModels?.length) {
        const model = models.availableModels.find((m) => m.modelId !== models.currentModelId) ?? models.availableModels[0];
        await step(`set_model ${model.modelId}`, "session/set_model", { sessionId, modelId: model.modelId });
      }
    }
    await step("session/list", "session/list", {});
    await step("session/load unknown", "session/load", { sessionId: "interop-unknown-session", cwd, mcpServers: [] });
    await step("unknown method", "interop/unknown", {});
    await step("extension method", "_interop/extension", { hello: "world" });
    send({ jsonrpc: "2.0", method: "_interop/notification", params: { hello: "world" } });
    if (sessionId) {
      const prompt = step(
        "prompt + cancel",
        "session/prompt",
        { sessionId, prompt: [{ type: "text", text: "Say hello in one word." }] },
        PROMPT_MS,
      );
      await sleep(300);
      send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
      await prompt;
    }
    await sleep(500); // trailing notifications
  }

  // EOF, and what it leaves behind.
  const root = procStat(child.pid);
  const before = [...(root && root.state !== "Z" ? [root] : []), ...descendants(child.pid)];
  const eofAt = Date.now();
  child.stdin.end();
  const limit = mode === "direct" ? DIRECT_EXIT_MS : CORDON_EXIT_MS;
  const exit = await Promise.race([exited, sleep(limit).then(() => null)]);
  await sleep(mode === "direct" ? 300 : 1000);
  const leftovers = [...before.filter(aliveProc), ...descendants(child.pid)].filter(
    (p, i, all) => all.findIndex((q) => q.pid === p.pid) === i,
  );
  // Clean up whatever is left, ours or not: the group of what we started, then every straggler.
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    // gone
  }
  killAll(leftovers, "SIGTERM");
  await sleep(500);
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // gone
  }
  killAll(leftovers.filter(aliveProc), "SIGKILL");
  for (const dir of [home, cwd]) rmSync(dir, { recursive: true, force: true });
  return {
    transcript,
    paths: { home, cwd },
    exit: exit ? { code: exit.code, signal: exit.signal, ms: exit.at - eofAt } : null,
    leftovers: leftovers.map((p) => `${p.comm}(${p.pid})`),
    processes: before.length,
    stderr,
  };
}

// ---- comparison -----------------------------------------------------------------------------

/** The transcript with everything that legitimately differs between runs replaced. */
function normalize(run) {
  const t = structuredClone(run.transcript);
  for (const s of t.steps) {
    const mcp = s.method === "initialize" ? s.result?.agentCapabilities?.mcpCapabilities : undefined;
    if (mcp) {
      delete mcp.acp; // Cordon's documented change: it bridges MCP-over-ACP, so it advertises acp
      if (Object.keys(mcp).length === 0) delete s.result.agentCapabilities.mcpCapabilities;
    }
  }
  // A response to nothing (codex-acp answers a notification with an id-less error) is not valid
  // JSON-RPC; Cordon drops it with a warning (and records it in --trace), so it is not compared.
  t.notifications = t.notifications.filter((n) => n.unmatched === undefined);
  let text = JSON.stringify(t);
  for (const [name, path] of Object.entries(run.paths)) text = text.split(path).join(`<${name}>`);
  const sessions = [];
  for (const s of t.steps) if (s.method === "session/new" && typeof s.result?.sessionId === "string") sessions.push(s.result.sessionId);
  for (const [i, id] of sessions.entries()) text = text.split(id).join(`<session ${i}>`);
  text = text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>");
  text = text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?/g, "<time>");
  return JSON.parse(text);
}

/** The first place two values differ, as a path and both sides (null if equal). */
function firstDifference(a, b, path = "") {
  if (JSON.stringify(a) === JSON.stringify(b)) return null;
  if (a && b && typeof a === "object" && typeof b === "object") {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const k of keys) {
      const d = firstDifference(a[k], b[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return { path: path || ".", direct: JSON.stringify(a)?.slice(0, 160), cordon: JSON.stringify(b)?.slice(0, 160) };
}

function summary(run) {
  const steps = run.transcript.steps;
  const answered = steps.filter((s) => s.result !== undefined).length;
  const errors = steps.filter((s) => s.error !== undefined).length;
  const silent = steps.filter((s) => s.timeout || s.exited).length;
  return `${steps.length} steps (${answered} results, ${errors} errors${silent ? `, ${silent} unanswered` : ""}), ${run.transcript.notifications.length} notifications`;
}

function exitText(run) {
  if (!run.exit) return "no exit after EOF";
  const how = run.exit.signal ? `killed by ${run.exit.signal}` : `exit ${run.exit.code}`;
  return `EOF → ${how} in ${run.exit.ms} ms`;
}

/** The agent's last stderr line that says something (ANSI colours removed). */
function lastLine(stderr) {
  const lines = stderr
    .replace(/\x1b\[[0-9;]*m/g, "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /error|ENOENT|not found|cannot/i.test(l));
  return lines.length ? `stderr: ${lines[lines.length - 1].slice(0, 120)}` : "";
}

// ---- main -----------------------------------------------------------------------------------

install();
if (opts["install-only"]) process.exit(0);
if (!existsSync(CORDON) || !existsSync(PASSTHROUGH)) {
  process.stderr.write("interop: build first (make build)\n");
  process.exit(2);
}
mkdirSync(RUNS_DIR, { recursive: true });
let passed = 0;
let failed = 0;
let skipped = 0;
const started = Date.now();
for (const agent of agents) {
  let direct = null;
  for (const mode of MODES) {
    const run = await runOnce(agent, mode);
    writeFileSync(join(RUNS_DIR, `${agent.name}.${mode}.json`), JSON.stringify(run, null, 2));
    const problems = [];
    let detail;
    if (mode === "direct") {
      direct = run;
      if (!run.transcript.steps[0]?.result) problems.push("initialize not answered");
      detail = `${summary(run)}; ${exitText(run)}; leftovers ${run.leftovers.length ? run.leftovers.join(" ") : "none"}`;
    } else {
      if (direct) {
        const d = firstDifference(normalize(direct), normalize(run));
        if (d) problems.push(`messages differ at ${d.path}: direct ${d.direct} vs cordon ${d.cordon}`);
      }
      if (!run.exit) problems.push(`Cordon did not exit within ${CORDON_EXIT_MS} ms of EOF`);
      else if (run.exit.code !== 0) problems.push(`Cordon exited ${run.exit.code ?? run.exit.signal} (expected 0)`);
      if (run.leftovers.length) problems.push(`leftover processes: ${run.leftovers.join(" ")}`);
      const invalid = direct ? direct.transcript.notifications.filter((n) => n.unmatched !== undefined).length : 0;
      detail = `${direct ? "messages = direct" : "no direct run to compare"}${invalid ? ` (less ${invalid} invalid message${invalid > 1 ? "s" : ""} Cordon drops)` : ""}; ${summary(run)}; ${exitText(run)}; leftovers ${run.leftovers.length ? run.leftovers.length : "none"}`;
    }
    // An agent that needs what npm does not have cannot run here: its direct run is skipped, not failed.
    const skip = mode === "direct" && problems.length > 0 && agent.requires;
    const ok = problems.length === 0;
    if (skip) skipped++;
    else if (ok) passed++;
    else failed++;
    const verdict = skip ? "SKIP" : ok ? "PASS" : "FAIL";
    const text = skip ? `needs ${agent.requires}: ${problems.join("; ")}; ${lastLine(run.stderr)}` : ok ? detail : problems.join("; ");
    process.stdout.write(`${verdict}  ${agent.name.padEnd(17)} ${mode.padEnd(9)} ${text}\n`);
  }
}
process.stdout.write(
  `interop: ${agents.length} agents × ${MODES.length} modes in ${Math.round((Date.now() - started) / 1000)} s; transcripts in ${RUNS_DIR}\n`,
);
process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
process.exit(failed === 0 ? 0 : 1);
