/**
 * The guest's own work per message, counted rather than timed: fuel units (the thread sandbox's
 * meter, fuel.ts) one `receive` uses, per kind of message, for each component given — configured
 * as the SDK's test kit does, and as Cordon does (the `_cordon/forward` marker offered). Fuel is
 * deterministic, so two SDK builds compare exactly on a machine whose load makes timings useless.
 * Then µs per `receive` of a text chunk (the host's allocation and copy included), metered and
 * unmetered: every guest of every component given runs in each round, in turn, so load hits them
 * alike; the median and the best round of each (load only slows rounds), and fuel's share.
 * Also counted: the checks one `receive` executes (the pass's census mode), and the units a tight
 * loop burns per millisecond (what `FUEL_PER_MS` in thread-sandbox.ts stands for).
 * `node dist/bench/guest-fuel.js a.wasm [b.wasm …]` (components of the `proxy` world, UTF-16).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHANNEL_IMPORT, RECEIVE_EXPORT } from "../runtime/sandbox/canonical-host.js";
import { loadComponent } from "../runtime/sandbox/component-loader.js";
import { FUEL_EXPORT, instrumentFuel, START_EXPORT } from "../runtime/sandbox/fuel.js";

const FUEL = 10n ** 15n;
const envelope = (method: string, params: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", method: "proxy/successor", params: { method, params } });
const update = (u: unknown) => envelope("session/update", { sessionId: "s1", update: u });
const SAMPLES: Record<string, string> = {
  "text chunk": update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "chunk 12345" } }),
  "chunk with a key": update({
    sessionUpdate: "agent_message_chunk",
    content: { type: "text", text: "key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" },
  }),
  "tool call": update({ sessionUpdate: "tool_call", toolCallId: "t1", title: "ls", rawInput: { command: "ls -la" } }),
  prompt: JSON.stringify({
    jsonrpc: "2.0",
    id: 5,
    method: "session/prompt",
    params: { sessionId: "s1", prompt: [{ type: "text", text: "hello" }] },
  }),
};
/** The answer to the `prompt` sample, relayed back: its fuel is the second delivery's alone. */
const RESPONSE = "response (relayed)";
const CONFIGURE = JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "p", config: {} } });
/** As Cordon configures a guest: the `_cordon/forward` marker offered (what it hands on unchanged is not written out). */
const CONFIGURE_OFFERED = JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "p", config: {}, forward: true } });

interface Guest {
  memory: WebAssembly.Memory;
  cabi_realloc(a: number, b: number, c: number, d: number): number;
  receive(ptr: number, units: number): void;
  fuel: WebAssembly.Global;
}

/** The id the guest last sent a request under (read from what it sends). */
let lastSentId = 0;
function sent(memory: () => WebAssembly.Memory) {
  return (ptr: number, units: number) => {
    const text = Buffer.from(memory().buffer, ptr >>> 0, units * 2).toString("utf16le");
    const m = /^\{"jsonrpc":"2.0","id":(\d+),/.exec(text);
    if (m) lastSentId = Number(m[1]);
  };
}

/**
 * Deliveries a figure is the mean of, after one that is not counted (first-use allocations). The
 * SDK collects its heap at the end of a delivery every 32 or so (sdk-as/assembly/collect.ts), so
 * one delivery's fuel depends on where it falls; the mean over 64 includes the collections' share.
 */
const COUNTED = 64n;

/** Fuel the relay of an answer uses: a request forwarded, then its answer delivered (the answer's mean). */
function fuelOfResponse(guest: Guest): bigint {
  let used = 0n;
  for (let i = 0n; i <= COUNTED; i++) {
    receiveFuel(guest, SAMPLES.prompt);
    const answer = receiveFuel(guest, `{"jsonrpc":"2.0","id":${lastSentId},"result":{"stopReason":"end_turn"}}`);
    if (i > 0n) used += answer;
  }
  return used / COUNTED;
}

/** Fuel one delivery of `text` uses: the mean of `COUNTED` after a first one. */
function fuelOf(guest: Guest, text: string): bigint {
  receiveFuel(guest, text);
  let used = 0n;
  for (let i = 0n; i < COUNTED; i++) used += receiveFuel(guest, text);
  return used / COUNTED;
}

/** Fuel the guest's `receive` of `text` uses (the host's allocation and copy before it not counted). */
function receiveFuel(guest: Guest, text: string): bigint {
  guest.fuel.value = FUEL;
  const ptr = guest.cabi_realloc(0, 0, 2, text.length * 2) >>> 0;
  Buffer.from(guest.memory.buffer).write(text, ptr, text.length * 2, "utf16le");
  guest.fuel.value = FUEL; // the receive alone
  guest.receive(ptr, text.length);
  return FUEL - (guest.fuel.value as bigint);
}

/** One delivery of `text` (the allocation and copy the host makes, then the receive). */
function deliver(guest: Omit<Guest, "fuel">, text: string): void {
  const ptr = guest.cabi_realloc(0, 0, 2, text.length * 2) >>> 0;
  Buffer.from(guest.memory.buffer).write(text, ptr, text.length * 2, "utf16le");
  guest.receive(ptr, text.length);
}

/** µs per delivery, per round, of each guest: every round runs each guest in turn. */
function timeRounds(guests: (() => void)[], rounds = 15, perRound = 2_000): number[][] {
  const us = guests.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    guests.forEach((run, i) => {
      const t = performance.now();
      for (let n = 0; n < perRound; n++) run();
      us[i].push(((performance.now() - t) * 1000) / perRound);
    });
  }
  return us;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const cacheDir = mkdtempSync(join(tmpdir(), "cordon-fuel-"));
const kinds = [...Object.keys(SAMPLES), RESPONSE];
console.log(`| component | ${kinds.join(" | ")} |\n|---|${kinds.map(() => "---|").join("")}`);
const files = process.argv.slice(2);
const runs: (() => void)[] = [];
const chunk = SAMPLES["text chunk"];
const census: string[] = [];

/**
 * The component's core module metered (or counted, `censusMode`), instantiated, started and
 * configured. `reads`: its `send` reads what the guest sends (the answer's relay needs the id);
 * the timed one's does nothing, as the unmetered one's, so the two timings differ by fuel alone.
 */
function meteredGuest(core: Uint8Array, censusMode: boolean, configure = CONFIGURE, reads = true): Guest {
  const metered = instrumentFuel(core, { startFuel: FUEL, census: censusMode });
  let meteredMemory: WebAssembly.Memory | null = null;
  const instance = new WebAssembly.Instance(new WebAssembly.Module(metered.bytes as Uint8Array<ArrayBuffer>), {
    [CHANNEL_IMPORT]: { send: reads ? sent(() => meteredMemory as WebAssembly.Memory) : () => {} },
  });
  const ex = instance.exports as Record<string, unknown>;
  const guest: Guest = {
    memory: ex.memory as WebAssembly.Memory,
    cabi_realloc: ex.cabi_realloc as Guest["cabi_realloc"],
    receive: ex[RECEIVE_EXPORT] as Guest["receive"],
    fuel: ex[FUEL_EXPORT] as WebAssembly.Global,
  };
  meteredMemory = guest.memory;
  (ex[START_EXPORT] as (() => void) | undefined)?.(); // the deferred start function
  fuelOf(guest, configure);
  return guest;
}

for (const file of files) {
  const component = await loadComponent(file, { cacheDir });
  const guest = meteredGuest(component.coreBytes, false);
  const counted = meteredGuest(component.coreBytes, true);
  census.push(`| ${file} | ${[...Object.values(SAMPLES).map((text) => fuelOf(counted, text)), fuelOfResponse(counted)].join(" | ")} |`);
  const units = [...Object.values(SAMPLES).map((text) => fuelOf(guest, text)), fuelOfResponse(guest)];
  console.log(`| ${file} | ${units.join(" | ")} |`);
  const offered = meteredGuest(component.coreBytes, false, CONFIGURE_OFFERED);
  const marked = [...Object.values(SAMPLES).map((text) => fuelOf(offered, text)), fuelOfResponse(offered)];
  console.log(`| ${file}, \`_cordon/forward\` offered (as in Cordon) | ${marked.join(" | ")} |`);
  const plainEx = new WebAssembly.Instance(new WebAssembly.Module(component.coreBytes as Uint8Array<ArrayBuffer>), {
    [CHANNEL_IMPORT]: { send: () => {} },
  }).exports as Record<string, unknown>;
  const plain = {
    memory: plainEx.memory as WebAssembly.Memory,
    cabi_realloc: plainEx.cabi_realloc as Guest["cabi_realloc"],
    receive: plainEx[RECEIVE_EXPORT] as Guest["receive"],
  };
  deliver(plain, CONFIGURE);
  const timed = meteredGuest(component.coreBytes, false, CONFIGURE, false);
  runs.push(
    () => deliver(plain, chunk),
    () => {
      timed.fuel.value = FUEL;
      deliver(timed, chunk);
    },
  );
}
const us = timeRounds(runs);
const rows = files.map((file, i) => {
  const [plain, metered] = [us[2 * i], us[2 * i + 1]];
  const [p, m] = [median(plain), median(metered)];
  const best = `${Math.min(...plain).toFixed(2)} / ${Math.min(...metered).toFixed(2)}`;
  return `| ${file} | ${p.toFixed(2)} | ${m.toFixed(2)} | ${best} | ${(((m - p) / m) * 100).toFixed(0)} % |`;
});
console.log(
  "\n| component: text chunk | unmetered, median (µs) | metered, median (µs) | best rounds (µs) | fuel's share |\n" +
    `|---|---|---|---|---|\n${rows.join("\n")}`,
);
console.log(`\n| checks executed per receive | ${kinds.join(" | ")} |\n|---|${kinds.map(() => "---|").join("")}\n${census.join("\n")}`);

/**
 * `(loop (br_if 0 (local.tee 0 (i32.sub (local.get 0) (i32.const 1)))))`, metered, run to the end
 * of a budget: units per ms of CPU, best of 12 (the loop is the one that burns fuel fastest per
 * unit of real work, so a limit in ms turned into units at this rate stops it in about that time).
 */
function tightLoopRate(): number {
  const type = [0x01, 0x05, 0x01, 0x60, 0x01, 0x7f, 0x00]; // (func (param i32))
  const func = [0x03, 0x02, 0x01, 0x00];
  const exp = [0x07, 0x08, 0x01, 0x04, ...new TextEncoder().encode("spin"), 0x00, 0x00];
  const body = [0x00, 0x03, 0x40, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, 0x0b, 0x0b];
  const code = [0x0a, body.length + 2, 0x01, body.length, ...body];
  const wasm = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...type, ...func, ...exp, ...code]);
  const metered = instrumentFuel(wasm, { startFuel: 0n });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(metered.bytes as Uint8Array<ArrayBuffer>)).exports;
  const spin = ex.spin as (n: number) => void;
  const fuel = ex[FUEL_EXPORT] as WebAssembly.Global;
  const budget = 500_000_000n;
  let best = 0;
  for (let round = 0; round < 13; round++) {
    fuel.value = budget;
    const cpu = process.cpuUsage();
    try {
      spin(-1); // ~4 G iterations: runs until the fuel is spent
    } catch {}
    const { user, system } = process.cpuUsage(cpu);
    if (round > 0) best = Math.max(best, Number(budget - (fuel.value as bigint)) / ((user + system) / 1000));
  }
  return best;
}
console.log(`\ntight loop: ${(tightLoopRate() / 1e6).toFixed(1)} M units per ms of CPU (FUEL_PER_MS: thread-sandbox.ts)`);
