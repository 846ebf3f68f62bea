/**
 * Per-message cost of the SDK, measured through the runtime's CanonicalHost (host copies included).
 * Timing is machine-dependent, so this only runs on request:
 *
 *   CORDON_BENCH=1 npx vitest run sdk-as/test/message-cost.test.ts
 *
 * Each row is µs per message: one `receive` and whatever the proxy sends for it. Requests are
 * measured as a round trip (request in, forwarded; answer in, relayed) and reported per message.
 */
import { describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { agentUpdate, loadExampleProxy, loadFixture, ProxyUnderTest, proxyUnderTest, textChunk } from "./harness.js";

const BIG_ASCII = "The quick brown fox jumps over the lazy dog. ".repeat(2_250); // ~100 KB
const BIG_MIXED = 'ünïcödé "quotes" \\ 😀\n'.repeat(4_500); // ~100 KB, escapes and non-ASCII

/** Best of 7 rounds (the machine is shared; the minimum is the least disturbed round). */
function time(label: string, size: number, n: number, once: () => void): string {
  for (let i = 0; i < Math.min(500, n); i++) once();
  const round = Math.max(1, Math.floor(n / 7));
  let best = Infinity;
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    for (let i = 0; i < round; i++) once();
    best = Math.min(best, ((performance.now() - t0) * 1000) / round);
  }
  return `${label.padEnd(52)} ${String(size).padStart(8)} ${best.toFixed(2).padStart(9)}`;
}

function updateLoop(p: ProxyUnderTest, text: string): [number, () => void] {
  const msg = JSON.stringify(agentUpdate(textChunk(text)));
  return [msg.length, () => void p.host.receive(msg)];
}

/** A request forwarded and its answer relayed: two messages per call. */
function promptLoop(p: ProxyUnderTest, text: string): [number, () => void] {
  const msg = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "session/prompt",
    params: { sessionId: "s", prompt: [{ type: "text", text }] },
  });
  return [
    msg.length,
    () => {
      const [fwd] = p.host.receive(msg);
      const id = fwd.slice(fwd.indexOf('"id":') + 5, fwd.indexOf(",", fwd.indexOf('"id":')));
      p.host.receive(`{"jsonrpc":"2.0","id":${id},"result":{"stopReason":"end_turn"}}`);
    },
  ];
}

describe.skipIf(!process.env.CORDON_BENCH)("message cost (µs/message through CanonicalHost)", () => {
  it("measures", async () => {
    const rows: string[] = [`${"case".padEnd(52)} ${"chars".padStart(8)} ${"µs/msg".padStart(9)}`];
    const echo = new ProxyUnderTest(await loadFixture("echo"));
    for (const [label, text, n] of [
      ["echo (raw ABI floor), small", "Hello world", 100_000],
      ["echo (raw ABI floor), 100 KB ASCII", BIG_ASCII, 2_000],
      ["echo (raw ABI floor), 100 KB non-ASCII+escapes", BIG_MIXED, 1_000],
    ] as const) {
      const [size, once] = updateLoop(echo, text);
      rows.push(time(label, size, n, once));
    }
    const cases: [string, string, Record<string, unknown>][] = [
      ["passthrough", "passthrough", {}],
      ["arrow (edits every chunk)", "arrow", {}],
      ["redact (scans every chunk)", "redact", {}],
    ];
    for (const [label, name, config] of cases) {
      const component: LoadedComponent = await loadExampleProxy(name);
      const p = await proxyUnderTest(component, config);
      for (const [what, text, n] of [
        ["update, small", "Hello world", 100_000],
        ["update, 100 KB ASCII", BIG_ASCII, 2_000],
        ["update, 100 KB non-ASCII+escapes", BIG_MIXED, 1_000],
      ] as const) {
        const [size, once] = updateLoop(p, text);
        rows.push(time(`${label}: ${what}`, size, n, once));
      }
    }
    for (const [label, name, config] of [
      ["passthrough", "passthrough", {}],
      ["context (prepends a block)", "context", { text: "House rules: be brief." }],
    ] as const) {
      const p = await proxyUnderTest(await loadExampleProxy(name), config);
      for (const [what, text, n] of [
        ["prompt round trip, small", "Hello world", 50_000],
        ["prompt round trip, 100 KB ASCII", BIG_ASCII, 1_000],
      ] as const) {
        const [size, once] = promptLoop(p, text);
        const row = time(`${label}: ${what}`, size, n, once);
        // two messages per round trip
        const us = Number(row.slice(-9));
        rows.push(`${row.slice(0, -9)}${(us / 2).toFixed(2).padStart(9)}`);
      }
      expect(p.host.memoryBytes).toBeLessThan(64 * 1024 * 1024);
    }
    console.log(`\n${rows.join("\n")}\n`);
  }, 600_000);
});
