import { afterEach, describe, expect, it, vi } from "vitest";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import type { Peer, PeerSink } from "../routing/peer.js";
import { DEFAULT_INITIALIZE_TIMEOUT_MS, InitializeWatch, initializeTimeoutMs } from "./initialize-watch.js";

/** An agent peer the test drives: what it was sent, and its sink to answer through. */
class FakeAgent implements Peer {
  readonly label = 'agent "fake"';
  sink!: PeerSink;
  sent: JsonRpcMessage[] = [];
  closedCalls = 0;
  async open(sink: PeerSink) {
    this.sink = sink;
  }
  send(message: JsonRpcMessage) {
    this.sent.push(message);
  }
  async close() {
    this.closedCalls++;
  }
}

function setup(timeoutMs = 1000) {
  const inner = new FakeAgent();
  const watch = new InitializeWatch(inner, { timeoutMs, setBy: "--initialize-timeout <ms>" });
  const seen: unknown[] = [];
  const closed: string[] = [];
  return {
    inner,
    watch,
    seen,
    closed,
    open: () => watch.open({ message: (v) => seen.push(v), malformed: () => {}, closed: (r) => closed.push(r) }),
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("InitializeWatch", () => {
  it("reports an agent that does not answer initialize in time, naming the timeout, and drops its late answer", async () => {
    vi.useFakeTimers();
    const t = setup(1500);
    await t.open();
    t.watch.send({ jsonrpc: "2.0", id: 7, method: "initialize", params: {} } as JsonRpcMessage);
    expect(t.inner.sent).toHaveLength(1);
    vi.advanceTimersByTime(1499);
    expect(t.closed).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(t.closed).toHaveLength(1);
    expect(t.closed[0]).toMatch(/^did not answer initialize within 1500 ms \(change it with --initialize-timeout <ms>\)/);
    t.inner.sink.message({ jsonrpc: "2.0", id: 7, result: {} });
    expect(t.seen).toEqual([]);
  });

  it("passes an answer in time through and never fires", async () => {
    vi.useFakeTimers();
    const t = setup(1000);
    await t.open();
    t.watch.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} } as JsonRpcMessage);
    t.inner.sink.message({ jsonrpc: "2.0", method: "session/update", params: {} }); // not the answer
    vi.advanceTimersByTime(500);
    t.inner.sink.message({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 1 } });
    vi.advanceTimersByTime(10_000);
    expect(t.closed).toEqual([]);
    expect(t.seen).toHaveLength(2);
    // Other requests are not watched.
    t.watch.send({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: {} } as JsonRpcMessage);
    vi.advanceTimersByTime(10_000);
    expect(t.closed).toEqual([]);
  });

  it("stops watching when the agent closes first, and closes the wrapped peer", async () => {
    vi.useFakeTimers();
    const t = setup(1000);
    await t.open();
    t.watch.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} } as JsonRpcMessage);
    t.inner.sink.closed("exited with code 3");
    vi.advanceTimersByTime(5000);
    expect(t.closed).toEqual(["exited with code 3"]);
    await t.watch.close();
    expect(t.inner.closedCalls).toBe(1);
    expect(t.watch.label).toBe('agent "fake"');
  });

  it("ends the reason with what the agent wrote besides JSON-RPC, when the wrapped peer kept it", async () => {
    vi.useFakeTimers();
    const inner = Object.assign(new FakeAgent(), {
      output: () => ({ said: "; stdout (not JSON-RPC): Please log in:", detail: { stdout: ["Please log in:"] } }),
    });
    const watch = new InitializeWatch(inner, { timeoutMs: 100 });
    const closed: Array<[string, unknown]> = [];
    await watch.open({ message: () => {}, malformed: () => {}, closed: (r, d) => closed.push([r, d]) });
    watch.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} } as JsonRpcMessage);
    vi.advanceTimersByTime(100);
    expect(closed).toEqual([
      [expect.stringMatching(/within 100 ms; .*; stdout \(not JSON-RPC\): Please log in:$/), { stdout: ["Please log in:"] }],
    ]);
  });

  it("reads the timeout from the flag, else the environment, else 60 s", () => {
    expect(initializeTimeoutMs("2500", {})).toBe(2500);
    expect(initializeTimeoutMs(undefined, { CORDON_INITIALIZE_TIMEOUT_MS: "700" })).toBe(700);
    expect(initializeTimeoutMs(undefined, { CORDON_INITIALIZE_TIMEOUT_MS: "soon" })).toBe(DEFAULT_INITIALIZE_TIMEOUT_MS);
    expect(initializeTimeoutMs(undefined, {})).toBe(60_000);
    expect(() => initializeTimeoutMs("0", {})).toThrow(/positive whole number of milliseconds, not "0"/);
    expect(() => initializeTimeoutMs("1.5", {})).toThrow(/positive whole number/);
  });
});
