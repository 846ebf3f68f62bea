/**
 * The security suite's sandbox ring (issue 8, holes 3, 5, 7 and 8): a hostile proxy attacks the
 * host from inside its sandbox in a real `cordon run`, with a raw client on its stdio and the
 * scripted agent behind it. The attacker (test/fixtures/hostile/sandbox-attacker.ts) is the real
 * pass-through with WAT spliced in, so it behaves until a prompt carries its marker. For each
 * attack: Cordon's process survives, the attacker is named in the error and in a `_cordon/notice`,
 * other sessions keep answering, and the process tree's memory stays under a stated bound.
 * The routing attacks are in hostile-routing.test.ts; the sandbox unit tests in runtime/sandbox/.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { treeRssMiB } from "../bench/process-tree.js";
import { coreModules } from "../runtime/sandbox/component-loader.js";
import { buildAttacker } from "./fixtures/hostile/sandbox-attacker.js";
import { prompt, session, useConfigChains } from "./helpers/config-chain.js";
import { peakRss, survivedAndServes } from "./helpers/hostile-chain.js";
import { CORDON, NODE, proxyWasm, ROOT } from "./helpers/paths.js";
import type { Json, RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
const dist = join(ROOT, "test/fixtures/dist");
const ATTACKER_UTF16 = join(dist, "sandbox-attacker-utf16.wasm");
const ATTACKER_UTF8 = join(dist, "sandbox-attacker-utf8.wasm");
const Mi = 2 ** 20;

/**
 * The process tree (Cordon, its workers, the agent) stays under this while it is attacked.
 * Measured peaks: 190–300 MiB. Before the bounds: the table and UTF-8 attacks ended the process
 * with SIGABRT, and the UTF-16 one peaked at ~1,180 MiB.
 */
const RSS_BOUND_MIB = 500;

beforeAll(async () => {
  mkdirSync(dist, { recursive: true });
  writeFileSync(ATTACKER_UTF16, await buildAttacker({ encoding: "utf16", burnIterations: 50_000_000 }));
  writeFileSync(ATTACKER_UTF8, await buildAttacker({ encoding: "utf8" }));
}, 120_000);

const chain = useConfigChains();

const attacker = (extra: Json = {}) => ({ name: "attacker", wasm: ATTACKER_UTF16, ...extra });
const pass = { wasm: proxyWasm("passthrough") };

describe("hole 3: nothing a guest does can abort Cordon or make it allocate without bound", () => {
  it("a table grown by 10 M entries: the grow fails inside the guest (cap 65 536), it traps, Cordon lives", async () => {
    const client = await chain([attacker(), pass]);
    const other = await session(client);
    const victim = await session(client);
    const { result, peakMiB } = await peakRss(client, prompt(client, victim, "#TB#"));
    expect(result.error.message).toMatch(/^proxy "attacker" failed \(trap\): unreachable/);
    await survivedAndServes(client, /proxy "attacker" failed \(trap\)/);
    expect((await prompt(client, other, "hello")).result).toEqual({ stopReason: "end_turn" });
    expect(peakMiB).toBeLessThan(RSS_BOUND_MIB);
  });

  it("~48 MiB UTF-8 messages (within the old per-message cap) are refused before they are decoded", async () => {
    const client = await chain([{ ...attacker(), wasm: ATTACKER_UTF8 }, pass]);
    const other = await session(client);
    const victim = await session(client);
    // The UTF-8 attacker is a working pass-through until it sees its marker.
    expect((await prompt(client, victim, "ünïcödé 😀 passes")).result).toEqual({ stopReason: "end_turn" });
    const echoed = await client.waitFor((m) => m.method === "session/update" && m.params.sessionId === victim);
    expect(echoed.params.update.content.text).toBe("echo: ünïcödé 😀 passes");
    const { result, peakMiB } = await peakRss(client, prompt(client, victim, "#U8#"));
    expect(result.error.message).toBe(`proxy "attacker" failed (fault): guest sent a message of ${48 * Mi - 1} bytes (limit ${16 * Mi})`);
    await survivedAndServes(client, /guest sent a message of \d+ bytes/);
    expect((await prompt(client, other, "hello")).result).toEqual({ stopReason: "end_turn" });
    expect(peakMiB).toBeLessThan(RSS_BOUND_MIB);
  });

  it("400 UTF-16 sends of 1 Mi code units stop at the per-delivery budget instead of piling up 800 MiB outside the heap", async () => {
    const client = await chain([attacker(), pass]);
    const s = await session(client);
    const { result, peakMiB } = await peakRss(client, prompt(client, s, "#BS#"));
    expect(result.error.message).toBe(
      `proxy "attacker" failed (fault): guest sent ${33 * Mi} code units of output for one input (limit ${32 * Mi} per delivery)`,
    );
    await survivedAndServes(client, /of output for one input/);
    expect(peakMiB).toBeLessThan(RSS_BOUND_MIB);
  });

  it("legit traffic still passes: a prompt with a 10 MiB embedded resource goes through two pass-through proxies intact", async () => {
    const client = await chain([pass, pass], { SCRIPTED_CAPS: JSON.stringify({ promptCapabilities: { embeddedContext: true } }) });
    const s = await session(client);
    const blob = Buffer.alloc(10 * Mi, 0xab).toString("base64");
    const res = await client.request("session/prompt", {
      sessionId: s,
      prompt: [
        { type: "text", text: JSON.stringify([{ reflectPrompt: true }]) },
        { type: "resource", resource: { uri: "file:///work/big.bin", mimeType: "application/octet-stream", blob } },
      ],
    });
    expect(res.result, JSON.stringify(res).slice(0, 500)).toEqual({ stopReason: "end_turn" });
    const reflected = await client.waitFor((m) => m.method === "_test/prompt");
    expect(reflected.params.received.prompt[1].resource.blob === blob).toBe(true);
  }, 60_000);
});

describe("hole 5: a proxy's output has a budget over a window", () => {
  it("volume: 12 Mi code units per delivery, each message valid and under every per-message limit, trips a 20 Mi per 10 s budget", async () => {
    const client = await chain([attacker({ limits: { maxOutputUnitsPerWindow: 20 * Mi } }), pass]);
    const s = await session(client);
    let res: Json = {};
    for (let i = 0; i < 5 && !res.error; i++) res = await prompt(client, s, "#FL#");
    expect(res.error?.message).toMatch(
      /^proxy "attacker" was stopped: sent 24 Mi code units in the last 10 s, over its output budget of 20 Mi code units per 10 s \(limits\.maxOutputUnitsPerWindow\)$/,
    );
    await survivedAndServes(client, /over its output budget of 20 Mi code units per 10 s/);
    expect(treeRssMiB(client.child.pid!)).toBeLessThan(RSS_BOUND_MIB);
  });

  it("count: 1000 small notifications per delivery trip a 2500 messages per 10 s budget", async () => {
    const client = await chain([attacker({ limits: { maxOutputMessagesPerWindow: 2_500 } }), pass]);
    const s = await session(client);
    let res: Json = {};
    for (let i = 0; i < 5 && !res.error; i++) res = await prompt(client, s, "#FM#");
    expect(res.error?.message).toMatch(
      /^proxy "attacker" was stopped: sent \d+ messages in the last 10 s, over its output budget of 2500 messages per 10 s/,
    );
    await survivedAndServes(client, /over its output budget of 2500 messages per 10 s/);
    expect(client.received.filter((m) => m.method === "_flood").length).toBeLessThanOrEqual(2_500);
  });
});

describe("hole 7: a slow-but-legal proxy has a CPU budget over a window", () => {
  it("burning ~0.2 s on every delivery (far under its watchdog) is stopped by a 3 s per 30 s budget, named in the error and a notice", async () => {
    // Each prompt passes the attacker twice with the marker (the prompt, the agent's echo of it).
    const client = await chain([attacker({ limits: { cpuWindowMs: 30_000, maxCpuMsPerWindow: 3_000 } }), pass]);
    const other = await session(client);
    const s = await session(client);
    let res: Json = {};
    let prompts = 0;
    while (!res.error && prompts < 40) {
      res = await prompt(client, s, "#CP#");
      prompts++;
    }
    expect(prompts, res.error?.message).toBeGreaterThan(1); // each delivery passes; only the sum is over
    expect(res.error?.message).toMatch(
      /^proxy "attacker" was stopped: used \d+(\.\d+)? s of guest time in the last 30 s, over its CPU budget of 3 s per 30 s \(limits\.maxCpuMsPerWindow\)$/,
    );
    await survivedAndServes(client, /over its CPU budget of 3 s per 30 s/);
    expect((await prompt(client, other, "hello")).result).toEqual({ stopReason: "end_turn" });
  }, 90_000);
});

describe("hole 8: the sha256 pin covers the code that runs", () => {
  const sha = async (bytes: Uint8Array) => (await import("node:crypto")).createHash("sha256").update(bytes).digest("hex");
  const arrowSha = async () => sha(readFileSync(proxyWasm("arrow")));
  const chunkTexts = (client: RawClient) =>
    client.received.filter((m) => m.method === "session/update").map((m) => m.params.update.content.text);

  async function arrowRun(cache: string): Promise<RawClient> {
    const client = await chain([{ name: "arrow", wasm: proxyWasm("arrow"), sha256: await arrowSha() }], { CORDON_CACHE_DIR: cache });
    const s = await session(client);
    expect((await prompt(client, s, "hi")).result).toEqual({ stopReason: "end_turn" });
    return client;
  }

  it("a tampered cache entry cannot run other code under the pinned hash, nor change what inspect shows", async () => {
    const cache = join(mkdtempSync(join(tmpdir(), "cordon-cache-")), "components");
    const first = await arrowRun(cache);
    expect(chunkTexts(first)).toEqual([">echo: hi"]);
    await first.close();
    const pinned = await arrowSha();
    expect(readdirSync(cache)).toContain(`${pinned}.json`);
    // The attacker swaps in the pass-through's code (valid guest code, importing nothing
    // forbidden) and an entry claiming it, in the old layout and in the new one.
    const evilCore = coreModules(readFileSync(proxyWasm("passthrough")))[0];
    const entry = JSON.parse(readFileSync(join(cache, `${pinned}.json`), "utf8"));
    for (const forged of [
      {
        sha256: pinned,
        encodings: { receive: "utf16", send: "utf16" },
        imports: ["cordon:proxy/channel@0.1.0"],
        exports: ["cordon:proxy/handler@0.1.0"],
        manifest: { name: "arrow-but-evil" },
      },
      { ...entry, core: { index: entry.core.index, sha256: await sha(evilCore) }, manifest: { name: "arrow-but-evil" } },
    ]) {
      writeFileSync(join(cache, `${pinned}.core.wasm`), evilCore);
      writeFileSync(join(cache, `${pinned}.json`), JSON.stringify(forged));
      const again = await arrowRun(cache);
      expect(chunkTexts(again)).toEqual([">echo: hi"]); // the arrow is the pinned code's doing
      await again.close();
      writeFileSync(join(cache, `${pinned}.json`), JSON.stringify(forged));
      const { stdout } = await exec(NODE, [CORDON, "inspect", proxyWasm("arrow"), "--json"], {
        env: { ...process.env, CORDON_CACHE_DIR: cache },
      });
      expect(JSON.parse(stdout).manifest.name).toBe("arrow");
    }
  });

  it("a cache directory others can write is refused with a warning; the proxy still runs, nothing is cached", async () => {
    const cache = mkdtempSync(join(tmpdir(), "cordon-cache-shared-"));
    chmodSync(cache, 0o777);
    const client = await arrowRun(cache);
    expect(chunkTexts(client)).toEqual([">echo: hi"]);
    expect(client.stderr).toMatch(/component cache .* is writable by others \(mode 0777\); not using it/);
    expect(readdirSync(cache)).toEqual([]);
  });
});
