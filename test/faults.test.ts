/**
 * The fault suite: hostile proxies built from AssemblyScript in `test/fixtures/hostile/`, each
 * misbehaving on purpose inside a real chain. For each: the conductor stays up, the client gets a
 * clear error (or the proxy is bypassed / restarted per its policy), other sessions complete, and
 * the conductor's memory stays bounded.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { treeRssMiB } from "../bench/process-tree.js";
import { FUEL_PER_MS } from "../runtime/sandbox/thread-sandbox.js";
import { buildComponent, ECHO_BODY } from "./fixtures/wat-components.js";
import { prompt, session, useConfigChains } from "./helpers/config-chain.js";
import { CORDON, NODE, proxyWasm, ROOT, SCRIPTED_AGENT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
const dist = join(ROOT, "test/fixtures/dist");
const SABOTEUR = join(dist, "saboteur.wasm");
const START_LOOP = join(dist, "start-loop.wasm");

beforeAll(async () => {
  for (const name of ["saboteur", "start-loop", "trap-tool"]) {
    await exec(NODE, [
      join(ROOT, "sdk-as/tools/build-proxy.mjs"),
      join(ROOT, `test/fixtures/hostile/${name}.ts`),
      "-o",
      join(dist, `${name}.wasm`),
    ]);
  }
}, 120_000);

const chain = useConfigChains();
/** Clients a test starts by hand (not through `chain`), closed after each test. */
const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const saboteur = (extra: Json = {}) => ({ name: "saboteur", wasm: SABOTEUR, ...extra });
const pass = { wasm: proxyWasm("passthrough") };

/** After a failure: a fresh session still gets its prompt answered (once the proxy is back). */
async function stillServes(client: RawClient): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const s = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
    if (s.result) {
      const res = await prompt(client, s.result.sessionId, "still alive?");
      if (res.result) {
        expect(res.result).toEqual({ stopReason: "end_turn" });
        return;
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the chain did not recover; stderr: ${client.stderr}`);
}

describe("hostile proxies are contained", () => {
  it("a trap answers the request with an error naming the proxy; it restarts and other sessions go on", async () => {
    const client = await chain([pass, saboteur(), pass]);
    const other = await session(client);
    const victim = await session(client);
    const res = await prompt(client, victim, "crash");
    expect(res.error.code).toBe(-32603);
    expect(res.error.message).toMatch(/^proxy "saboteur" failed \(trap\): unreachable/);
    expect(res.error.data).toEqual({ cordon: { component: "saboteur", failure: "trap" } });
    const notice = await client.waitFor((m) => m.method === "_cordon/notice");
    expect(notice.params.message).toMatch(/restarting it in \d+ ms \(attempt 1 of 5\); state it kept per session is lost/);
    await stillServes(client);
    expect((await prompt(client, other, "hello")).result).toEqual({ stopReason: "end_turn" });
  });

  it("an infinite loop in receive is stopped by the watchdog", async () => {
    const client = await chain([saboteur({ limits: { receiveTimeoutMs: 400 } })]);
    const s = await session(client);
    const t = Date.now();
    const res = await prompt(client, s, "loop");
    // worker: the wall-clock watchdog; thread: the fuel the same limit stands for.
    expect(res.error.message).toMatch(
      new RegExp(
        `proxy "saboteur" was stopped: receive (did not return within 400 ms|used its fuel budget of ${400 * FUEL_PER_MS} units on one message)`,
      ),
    );
    expect(Date.now() - t).toBeLessThan(10_000);
    await stillServes(client);
  });

  it("memory growth stops at the cap (the guest traps), and the conductor's memory stays bounded", async () => {
    const client = await chain([saboteur({ limits: { maxMemoryMiB: 32 } })]);
    const s = await session(client);
    const res = await prompt(client, s, "hog");
    expect(res.error.message).toMatch(/proxy "saboteur" failed \(trap\)/);
    expect(treeRssMiB(client.child.pid!)).toBeLessThan(600);
    await stillServes(client);
  });

  it("a flood of outputs for one input is stopped, not buffered", async () => {
    const client = await chain([saboteur({ limits: { maxSendsPerReceive: 1000 } })]);
    const s = await session(client);
    const res = await prompt(client, s, "flood");
    expect(res.error.message).toMatch(/failed \(fault\): guest sent more than 1000 messages for one input/);
    expect(client.received.filter((m) => m.method === "_flood/n")).toEqual([]);
    expect(treeRssMiB(client.child.pid!)).toBeLessThan(600);
    await stillServes(client);
  });

  it("a 64 MiB message is refused before it is copied out of the guest", async () => {
    // Building the 64 MiB string takes the guest a while on a loaded machine: give it time, so the cap (not the watchdog) stops it.
    const client = await chain([saboteur({ limits: { maxMessageUnits: 1024 * 1024, maxMemoryMiB: 512, receiveTimeoutMs: 60_000 } })]);
    const s = await session(client);
    const res = await prompt(client, s, "huge");
    expect(res.error.message).toMatch(/guest sent a message of \d+ code units \(limit 1048576\)/);
    expect(treeRssMiB(client.child.pid!)).toBeLessThan(1200);
    await stillServes(client);
  });

  it("output that is not JSON stops the proxy", async () => {
    const client = await chain([saboteur()]);
    const s = await session(client);
    const res = await prompt(client, s, "garbage");
    expect(res.error.message).toMatch(/proxy "saboteur" sent output that is not JSON: this is not JSON \{/);
    await stillServes(client);
  });

  it("a response with a forged id is dropped and logged; the turn goes on", async () => {
    const client = await chain([saboteur()]);
    const s = await session(client);
    const res = await prompt(client, s, "forge");
    expect(res.result).toEqual({ stopReason: "end_turn" });
    expect(client.received.some((m) => m.result?.forged)).toBe(false);
    await expect.poll(() => client.stderr).toMatch(/proxy "saboteur" answered a request it was never sent \(id 424242\); dropped/);
  });

  it("a proxy cannot initialize anything itself", async () => {
    const client = await chain([saboteur()]);
    const s = await session(client);
    const res = await prompt(client, s, "init");
    expect(res.result).toEqual({ stopReason: "end_turn" });
    expect(client.received.some((m) => m.method === "initialize" || m.method === "proxy/initialize")).toBe(false);
    const seen = client.received.filter((m) => m.method === "_test/seen").map((m) => m.params.message.method);
    expect(seen).not.toContain("initialize");
  });

  it("fs requests a proxy originates need a grant; the client never sees a refused one", async () => {
    const refused = await chain([saboteur()], { CORDON_LOG: "info" }); // the proxy logs the answer it got at info
    await prompt(refused, await session(refused), "readfile");
    await expect
      .poll(() => refused.stderr)
      .toMatch(/grant: fs\/read_text_file needs the "fs:read" grant, which proxy "saboteur" does not have; request refused/);
    await expect.poll(() => refused.stderr).toMatch(/read: error fs\/read_text_file needs the "fs:read" grant/);
    expect(refused.received.some((m) => m.method === "fs/read_text_file")).toBe(false);

    const granted = await chain([saboteur({ grants: ["fs:read"] })]);
    granted.onRequest = (m) => ({ result: { content: `contents of ${m.params.path}` } });
    await prompt(granted, await session(granted), "readfile");
    expect(granted.received.filter((m) => m.method === "fs/read_text_file").map((m) => m.params.path)).toEqual(["/etc/passwd"]);
    // A grant for reading is not one for writing.
    await prompt(granted, await session(granted), "write");
    await expect.poll(() => granted.stderr).toMatch(/needs the "fs:write" grant, which proxy "saboteur" does not have/);
  });

  it("forwarding the agent's own fs request needs no grant", async () => {
    const client = await chain([saboteur(), pass]);
    client.onRequest = (m) => ({ result: { content: `read ${m.params.path}` } });
    const s = await session(client);
    const ask = { ask: { method: "fs/read_text_file", params: { sessionId: s, path: "/work/a.ts" } } };
    const res = await client.request("session/prompt", {
      sessionId: s,
      prompt: [{ type: "text", text: JSON.stringify([ask, { report: true }]) }],
    });
    expect(res.result).toEqual({ stopReason: "end_turn" });
    const report = await client.waitFor((m) => m.method === "_test/answers");
    expect(report.params.answers[0].result).toEqual({ content: "read /work/a.ts" });
  });

  it("an infinite loop at instantiation fails the chain's start with a clear error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-fault-"));
    const config = join(dir, "chain.json");
    writeFileSync(config, JSON.stringify({ proxies: [{ wasm: START_LOOP, limits: { startTimeoutMs: 1000 } }] }));
    const client = new RawClient(NODE, [CORDON, "run", "--config", config, "--", ...SCRIPTED_AGENT]);
    open.push(client);
    const res = await client.request("initialize", { protocolVersion: 1 });
    expect(res.error.message).toMatch(
      new RegExp(
        `proxy "start-loop" .* failed to start: instantiation (did not finish within 1000 ms|used its fuel budget of ${1000 * FUEL_PER_MS} units)`,
      ),
    );
    expect((await client.exited).code).toBe(1);
  });

  it("a component importing wasi:filesystem is refused at load", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-fault-"));
    const path = join(dir, "fs-reader.wasm");
    writeFileSync(
      path,
      await buildComponent({
        wat: `(module (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))
          (import "wasi:filesystem/preopens@0.2.0" "get-directories" (func (param i32))) ${ECHO_BODY})`,
        wit: `package wasi:filesystem@0.2.0 { interface preopens { get-directories: func() -> list<string>; } }
          world guest { import wasi:filesystem/preopens@0.2.0; import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`,
      }),
    );
    const client = new RawClient(NODE, [CORDON, "run", "--proxy", path, "--", ...SCRIPTED_AGENT]);
    open.push(client);
    const res = await client.request("initialize", { protocolVersion: 1 });
    expect(res.error.message).toMatch(
      /fs-reader\.wasm cannot run as a Cordon proxy: it imports the WASI interface wasi:filesystem\/preopens@0\.2\.0/,
    );
  });

  it("a SHA-256 mismatch refuses to start, naming the file and both hashes", async () => {
    const wrong = "0".repeat(64);
    const dir = mkdtempSync(join(tmpdir(), "cordon-fault-"));
    const config = join(dir, "chain.json");
    writeFileSync(config, JSON.stringify({ proxies: [{ wasm: proxyWasm("passthrough"), sha256: wrong }] }));
    const client = new RawClient(NODE, [CORDON, "run", "--config", config, "--", ...SCRIPTED_AGENT]);
    open.push(client);
    const res = await client.request("initialize", { protocolVersion: 1 });
    const actual = (await import("node:crypto"))
      .createHash("sha256")
      .update(readFileSync(proxyWasm("passthrough")))
      .digest("hex");
    expect(res.error.message).toContain(`passthrough.wasm) does not match its pin: the config says sha256 ${wrong}, the file is ${actual}`);
  });
});

describe("MCP tools in a hostile proxy", () => {
  it("a tool that traps: the turn it was called in is answered with an error naming the proxy; the proxy restarts and the session goes on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-fault-"));
    const config = join(dir, "chain.json");
    writeFileSync(config, JSON.stringify({ proxies: [pass, { name: "trap-tool", wasm: join(dist, "trap-tool.wasm") }, pass] }));
    const client = new RawClient(NODE, [CORDON, "run", "--config", config, "--", NODE, CORDON, "reference-agent", "--mcp", "acp"]);
    open.push(client);
    await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const s = await session(client);
    const toolText = (from: number) =>
      client.received
        .slice(from)
        .filter(
          (m) =>
            m.method === "session/update" &&
            m.params.update.sessionUpdate === "tool_call_update" &&
            m.params.update.status !== "in_progress",
        )
        .map((m) => `${m.params.update.status}: ${(m.params.update.content ?? []).map((c: Json) => c.content?.text).join(" ")}`);
    let from = client.received.length;
    // The prompt passed through the proxy that died, so its answer cannot come back through it.
    const crashed = await prompt(client, s, "use tool traps::boom {}");
    expect(crashed.error.message).toMatch(/proxy "trap-tool" failed \(trap\): unreachable/);
    // The proxy restarts (its MCP state is new): the session goes on, and a fresh session gets its tools again.
    for (let attempt = 0; attempt < 50; attempt++) {
      const again = await prompt(client, s, "hello again");
      if (again.error) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      expect(again.result).toEqual({ stopReason: "end_turn" });
      break;
    }
    for (let attempt = 0; attempt < 50; attempt++) {
      const fresh = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
      if (fresh.result) {
        from = client.received.length;
        await prompt(client, fresh.result.sessionId, "use tool traps::fine {}");
        expect(toolText(from)).toEqual([`completed: fine, in session ${fresh.result.sessionId}`]);
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no recovery: ${client.stderr}`);
  });
});

describe("backpressure", () => {
  it("a slow proxy pauses the client's input instead of queueing without bound; every message arrives, in order", async () => {
    // It is slow on purpose (~2–5 ms a tick, 3000 ticks): the CPU budget, tested on its own, is opened up here.
    const client = await chain([saboteur({ limits: { maxCpuMsPerWindow: 30_000 } }), pass], { CORDON_LOG: "debug" });
    const N = 3000;
    const lines: string[] = [];
    for (let i = 0; i < N; i++) lines.push(JSON.stringify({ jsonrpc: "2.0", method: "_slow/tick", params: { i } }));
    client.child.stdin!.write(lines.join("\n") + "\n");
    await expect.poll(() => client.received.filter((m) => m.method === "_test/seen").length, { timeout: 60_000 }).toBe(N);
    const seen = client.received.filter((m) => m.method === "_test/seen").map((m) => m.params.message.params.i);
    expect(seen).toEqual(Array.from({ length: N }, (_, i) => i));
    expect(client.stderr).toMatch(/proxy "saboteur" is congested: pausing input/);
    expect(client.stderr).toMatch(/congestion cleared: resuming input/);
  }, 90_000);
});

describe("failure policies", () => {
  it("bypass: after a failure, messages skip the proxy", async () => {
    const client = await chain([pass, saboteur({ onFailure: "bypass" }), pass]);
    const s = await session(client);
    const res = await prompt(client, s, "crash");
    expect(res.error.message).toMatch(/proxy "saboteur" failed \(trap\)/);
    const notice = await client.waitFor((m) => m.method === "_cordon/notice");
    expect(notice.params.message).toMatch(/it is bypassed from now on/);
    // "crash" no longer reaches the saboteur: the agent answers it.
    expect((await prompt(client, s, "crash")).result).toEqual({ stopReason: "end_turn" });
  });

  it("restart: messages sent while it restarts wait for it instead of failing", async () => {
    const client = await chain([saboteur({ onFailure: "restart" })]);
    const s = await session(client);
    expect((await prompt(client, s, "crash")).error.message).toMatch(/failed \(trap\)/);
    // Sent while it is down (the first restart waits 100 ms): held, then delivered, not failed.
    expect((await prompt(client, s, "after the crash")).result).toEqual({ stopReason: "end_turn" });
  });

  it("fail-closed gives up after the restart cap and says so", async () => {
    const client = await chain([saboteur()]);
    /** Waits until the proxy is up again (a session can be opened through it), then makes it crash. */
    const crashOnceUp = async () => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const s = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
        if (s.result) return prompt(client, s.result.sessionId, "crash");
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error("the proxy never came back");
    };
    for (let failure = 1; failure <= 6; failure++) {
      expect((await crashOnceUp()).error.message).toMatch(/proxy "saboteur" failed \(trap\)/);
    }
    const gaveUp = await client.waitFor((m) => m.method === "_cordon/notice" && /stopped restarting/.test(m.params.message));
    expect(gaveUp.params).toMatchObject({ level: "error", component: 'proxy "saboteur"' });
    expect(gaveUp.params.message).toMatch(/failed 6 times, so Cordon stopped restarting it; restart the session to try again/);
    const refused = await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
    expect(refused.error.message).toMatch(/proxy "saboteur" is not running: .*stopped restarting it/);
  }, 90_000);
});
