/**
 * The sandbox ring, issue 18: guests that try to hold Cordon's thread past their budget with work
 * the old fuel did not charge, each through a real `cordon run` (and again in the other isolation,
 * `hostile-sandbox-other-isolation.test.ts`). For each: the attacker is stopped and named within a
 * few seconds of its 2 s budget, a bystander session's prompt sent meanwhile is answered, the
 * process tree stays under a stated memory bound, and later prompts are answered.
 *
 * The issue measured these against the old build in `thread` isolation: bulk and loop-free loops
 * froze every session for minutes, the random-bytes loop was refilled by its own allocations, and
 * a 41 MiB component of small loops cost ~29 s and ~1.7 GB at every start. Each fuel rule also has
 * an in-process test that fails without it (`runtime/sandbox/fuel.test.ts`, `thread-sandbox.test.ts`).
 * Measured here (loaded 2-core machine, 1 s budget): `thread` 1.0–2.3 s per attack, `worker`
 * 2.8–8.7 s; the 64 MiB component (the cap) starts in 1.5–1.8 s at ≤ 451 MiB in either isolation.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { treeRssMiB } from "../bench/process-tree.js";
import { manyLoopsProxy } from "./fixtures/hostile/many-loops.js";
import { buildAttacker } from "./fixtures/hostile/sandbox-attacker.js";
import { startSpinner } from "./fixtures/hostile/sandbox-wat.js";
import { prompt, session, useConfigChains } from "./helpers/config-chain.js";
import { peakRss, survivedAndServes } from "./helpers/hostile-chain.js";
import { CORDON, NODE, proxyWasm, ROOT, SCRIPTED_AGENT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
const dist = join(ROOT, "test/fixtures/dist");
const ATTACKER = join(dist, "work-attacker.wasm");
const BURNER = join(dist, "wasi-burner.wasm");
const MANY_LOOPS = join(dist, "many-loops.wasm");
const SPINNER = join(dist, "start-spinner.wasm");
const Mi = 2 ** 20;
/** Size of the many-loops component: the largest the 64 MiB cap allows, less 64 KiB for the component's wrapping (~22 M loops). */
const MANY_LOOPS_BYTES = 64 * Mi - 64 * 1024;

/**
 * The attacker's per-delivery budget (`receiveTimeoutMs`: its fuel and its backstop) and how soon
 * after it its prompt must have its answer. With the default 2 s, in-process, the bulk attacks
 * stopped at 2.0–3.6 s; through a chain on the loaded 2-core machine, at 3.5–9.4 s (before the
 * fix: not within the test's minute). Fuel measures work, so on a loaded machine it lasts longer.
 */
const BUDGET_MS = 1_000;
const GRACE_MS = 8_000;
/**
 * The process tree stays under this during each attack. The bulk attacks grow the guest's memory
 * by 64 MiB (its cap is 128 MiB); measured peaks: ~250–400 MiB.
 */
const RSS_BOUND_MIB = 600;
/** The tree's peak while the many-loops component starts and answers (the issue measured 1.7 GB at 41 MiB, 2.3 GB at 57 MiB, in `thread` isolation). */
const LOAD_RSS_BOUND_MIB = 800;
/** Its start is bounded by this (the chain's `initialize` must be answered within it; the issue measured 50 s at 57 MiB). */
const LOAD_BOUND_MS = 60_000;

beforeAll(async () => {
  mkdirSync(dist, { recursive: true });
  writeFileSync(ATTACKER, await buildAttacker({ encoding: "utf16" }));
  await exec(NODE, [join(ROOT, "sdk-as/tools/build-proxy.mjs"), join(ROOT, "test/fixtures/hostile/wasi-burner.ts"), "-o", BURNER]);
  writeFileSync(MANY_LOOPS, await manyLoopsProxy(MANY_LOOPS_BYTES));
  writeFileSync(SPINNER, await startSpinner());
}, 240_000);

const chain = useConfigChains();
const pass = { wasm: proxyWasm("passthrough") };
const STOPPED = new RegExp(
  `^proxy "attacker" (failed \\(timeout\\)|was stopped): receive (used its fuel budget of \\d+ units on one message|did not return within ${BUDGET_MS} ms)`,
);
/** The notice for an attacker stopped by its budget. */
const BY_BUDGET = /receive (used its fuel budget|did not return within \d+ ms)/;
/**
 * An attacker whose loop allocates: the SDK collects only between deliveries
 * (sdk-as/assembly/collect.ts), so the loop fills the guest's 128 MiB, usually before its budget
 * ends (on a loaded machine, not always), and the trap says so. (That its realloc'd buffers do not
 * refill its fuel is `thread-sandbox.test.ts`'s.)
 */
const OUT_OF_MEMORY = /failed \(trap\): unreachable \(with its linear memory at \d+ of its 128 MiB cap: it may have run out of memory\)/;
const BY_BUDGET_OR_MEMORY = new RegExp(`${BY_BUDGET.source}|${OUT_OF_MEMORY.source}`);
const limits = { receiveTimeoutMs: BUDGET_MS };

/**
 * Sends the marker on one session and a bystander's prompt on another right behind it; both must
 * be answered — the marker's with the attacker's failure, within the budget and grace.
 */
async function attack(
  client: RawClient,
  marker: string,
  name = "attacker",
  named: { notice: RegExp; error: RegExp } = { notice: BY_BUDGET, error: STOPPED },
): Promise<{ error: Json; peakMiB: number }> {
  const victim = await session(client);
  const bystander = await session(client);
  const t = performance.now();
  let stoppedAfterMs = Infinity;
  const hitting = prompt(client, victim, marker).then((answer) => {
    stoppedAfterMs = performance.now() - t;
    return answer;
  });
  const { result, peakMiB } = await peakRss(client, Promise.all([hitting, prompt(client, bystander, "are you there?")]));
  const [hit, other] = result;
  expect(stoppedAfterMs).toBeLessThan(BUDGET_MS + GRACE_MS);
  expect(hit.error, JSON.stringify(hit)).toBeDefined();
  expect(other.result ?? other.error).toBeDefined(); // answered, one way or the other
  expect(hit.error.message).toMatch(named.error);
  await survivedAndServes(client, named.notice, name);
  expect((await prompt(client, bystander, "and now?")).result).toEqual({ stopReason: "end_turn" });
  return { error: hit.error, peakMiB };
}

describe("issue 18: bulk operations are charged by their length", () => {
  it.each([
    ["#MF#", "memory.fill of 64 MiB × 200 000"],
    ["#MC#", "memory.copy of 32 MiB × 200 000"],
    ["#MI#", "memory.init of 1 MiB × 10 M"],
    ["#TF#", "table.fill of 65 536 elements × 10 M"],
    ["#TC#", "table.copy of 32 768 elements × 10 M"],
    ["#TI#", "table.init of 65 536 elements × 10 M"],
  ])(
    "%s (%s) is stopped and named; the bystander is answered",
    async (marker) => {
      const client = await chain([{ name: "attacker", wasm: ATTACKER, limits }, pass]);
      const { peakMiB } = await attack(client, marker);
      expect(peakMiB).toBeLessThan(RSS_BOUND_MIB);
    },
    60_000,
  );
});

describe("issue 18: calls are charged", () => {
  it("50 M calls of a loop-free function of 4 096 stores are stopped and named", async () => {
    const client = await chain([{ name: "attacker", wasm: ATTACKER, limits }, pass]);
    const { peakMiB } = await attack(client, "#LF#");
    expect(peakMiB).toBeLessThan(RSS_BOUND_MIB);
  }, 60_000);

  it.each([
    ["#NOW#", "the wall clock (wasi:clocks) in a tight loop", { notice: BY_BUDGET, error: STOPPED }],
    [
      "#RND#",
      "Random.bytes(65536) in a loop (wasi:random), allocated through the guest's own realloc",
      { notice: BY_BUDGET_OR_MEMORY, error: new RegExp(`${STOPPED.source}|^proxy "attacker" ${OUT_OF_MEMORY.source}`) },
    ],
  ])(
    "%s: %s is stopped and named",
    async (marker, _what, named) => {
      const client = await chain([{ name: "attacker", wasm: BURNER, grants: ["wasi:clocks", "wasi:random"], limits }, pass]);
      const { peakMiB } = await attack(client, marker, "attacker", named);
      expect(peakMiB).toBeLessThan(RSS_BOUND_MIB);
    },
    60_000,
  );
});

describe("issue 18: the start function is metered and bounded", () => {
  it("a start function that spins fails the chain's start within seconds of its budget, naming the proxy", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-chain-"));
    const config = join(dir, "chain.json");
    const proxies = [{ name: "spinner", wasm: SPINNER, limits: { startTimeoutMs: BUDGET_MS } }, pass];
    writeFileSync(config, JSON.stringify({ proxies, agent: { command: SCRIPTED_AGENT[0], args: SCRIPTED_AGENT.slice(1) } }));
    const t = performance.now();
    const client = new RawClient(NODE, [CORDON, "run", "--config", config]);
    try {
      const res = await client.request("initialize", { protocolVersion: 1 });
      expect(performance.now() - t).toBeLessThan(BUDGET_MS + GRACE_MS);
      expect(res.error?.message).toMatch(
        new RegExp(
          `proxy "spinner" .* failed to start: instantiation (did not finish within ${BUDGET_MS} ms|used its fuel budget of \\d+ units)`,
        ),
      );
      expect((await client.exited).code).toBe(1);
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe("issue 18: a start function that spins on a restart, while the chain runs", () => {
  it("is stopped and named within seconds of its budget; a bystander is answered; once the file is good again, prompts are answered", async () => {
    // The chain reads the proxy's file again at each restart: swapped for the spinner, then restored.
    const file = join(mkdtempSync(join(tmpdir(), "cordon-restart-")), "attacker.wasm");
    const swap = (from: string) => {
      writeFileSync(`${file}.new`, readFileSync(from));
      renameSync(`${file}.new`, file);
    };
    swap(ATTACKER);
    const client = await chain([
      { name: "attacker", wasm: file, limits: { receiveTimeoutMs: BUDGET_MS, startTimeoutMs: BUDGET_MS } },
      pass,
    ]);
    const victim = await session(client);
    const bystander = await session(client);
    swap(SPINNER);
    const t = performance.now();
    const hit = prompt(client, victim, "#MF#"); // stopped by its fuel; its restart loads the spinner
    const restartFailed = client.waitFor(
      (m) => m.method === "_cordon/notice" && /could not be restarted/.test(m.params?.message ?? ""),
      BUDGET_MS + 2 * GRACE_MS,
    );
    const { result, peakMiB } = await peakRss(client, Promise.all([hit, restartFailed, prompt(client, bystander, "are you there?")]));
    const [answer, notice, other] = result;
    expect(answer.error, JSON.stringify(answer)).toBeDefined();
    expect(notice.params.component).toBe(`proxy "attacker"`);
    expect(notice.params.message).toMatch(
      new RegExp(`could not be restarted: .*instantiation (did not finish within ${BUDGET_MS} ms|used its fuel budget of \\d+ units)`),
    );
    // The spin on restart costs its budget (twice: the failed delivery's, then the start's) and grace.
    expect(performance.now() - t).toBeLessThan(2 * BUDGET_MS + GRACE_MS);
    expect(other.result ?? other.error).toBeDefined();
    expect(peakMiB).toBeLessThan(RSS_BOUND_MIB);
    swap(ATTACKER);
    await survivedAndServes(client, /could not be restarted|receive (used its fuel budget|did not return)/);
    expect((await prompt(client, bystander, "and now?")).result).toEqual({ stopReason: "end_turn" });
  }, 90_000);
});

describe("issue 18: the fuel pass is bounded at load", () => {
  it(`a component of the largest size (${Math.round(MANY_LOOPS_BYTES / Mi)} MiB) of ~22 M empty loops starts in bounded time and memory, and works`, async () => {
    const cache = join(mkdtempSync(join(tmpdir(), "cordon-loops-")), "components");
    const env = { ...process.env, CORDON_CACHE_DIR: cache };
    // Its first load validates it with jco (cached on disk); what is measured is a later start, as a restart or a new editor session pays.
    await exec(NODE, [CORDON, "inspect", MANY_LOOPS, "--json"], { env, maxBuffer: 64 * Mi });
    const dir = mkdtempSync(join(tmpdir(), "cordon-chain-"));
    const config = join(dir, "chain.json");
    writeFileSync(
      config,
      JSON.stringify({
        proxies: [{ name: "loops", wasm: MANY_LOOPS }, pass],
        agent: { command: SCRIPTED_AGENT[0], args: SCRIPTED_AGENT.slice(1) },
      }),
    );
    const t = performance.now();
    const client = new RawClient(NODE, [CORDON, "run", "--config", config], { CORDON_CACHE_DIR: cache });
    try {
      let peak = 0;
      const timer = setInterval(() => (peak = Math.max(peak, treeRssMiB(client.child.pid!))), 25);
      client.send({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: 1 } });
      const init = await client.waitFor((m) => m.id === "init", LOAD_BOUND_MS);
      const started = performance.now() - t;
      expect(init.result?.agentInfo?.name, JSON.stringify(init)).toBe("scripted-agent");
      const s = await session(client);
      expect((await prompt(client, s, "hello")).result).toEqual({ stopReason: "end_turn" });
      clearInterval(timer);
      // In thread isolation it is over the check cap and runs in a worker, with a warning.
      if ((process.env.CORDON_ISOLATION ?? "thread") === "thread") {
        expect(client.stderr).toMatch(
          /cannot be fuel-metered \(metering it would take more than \d+ checks\); running it in a worker thread/,
        );
      }
      console.log(
        `many-loops component (${process.env.CORDON_ISOLATION ?? "thread"}): started in ${Math.round(started)} ms, peak ${Math.round(peak)} MiB`,
      );
      expect(peak).toBeLessThan(LOAD_RSS_BOUND_MIB);
    } finally {
      await client.close();
    }
  }, 180_000);
});
