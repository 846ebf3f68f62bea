/** Route-event observers alone: the trace's event shapes, and the drop-warning limiter. */
import { describe, expect, it } from "vitest";
import { MemoryPeer } from "../../test/helpers/memory-peer.js";
import { createLogger } from "../log.js";
import { dropWarnings, routeObservers, traceObserver } from "./events.js";
import { Hop, MAX_DROP_WARNINGS } from "./hop.js";
import type { TraceEvent } from "./trace.js";

const client = new Hop(new MemoryPeer("client"), { role: "client" });
const proxy = new Hop(new MemoryPeer('proxy "p0"'), { role: "proxy", index: 0 });

describe("route events", () => {
  it("the trace sees a delivery as a request on the hop's id, an answer as a response, named by position", () => {
    const events: TraceEvent[] = [];
    const observe = traceObserver((e) => events.push(e));
    const call = { jsonrpc: "2.0" as const, id: "c1", method: "session/prompt", params: { sessionId: "s1" } };
    observe({ kind: "delivered", from: client, to: proxy, call, id: 7 });
    const answer = { jsonrpc: "2.0" as const, id: 7, result: { stopReason: "end_turn" } };
    observe({ kind: "answered", answerer: proxy, asker: client, id: 7, askerId: "c1", method: call.method, answer, stale: false });
    observe({ kind: "passedOn", hop: proxy, method: "x" }); // not the trace's business
    expect(events).toEqual([
      {
        type: "request",
        protocol: "acp",
        from: "client",
        to: "proxy:0",
        id: 7,
        method: "session/prompt",
        session: "s1",
        params: { sessionId: "s1" },
      },
      { type: "response", from: "proxy:0", to: "client", id: 7, is_error: false, payload: { stopReason: "end_turn" } },
    ]);
  });

  it("the trace names the proxies a message was routed past (between sender and receiver), and none for a neighbour", () => {
    const events: TraceEvent[] = [];
    const proxies = [0, 1, 2].map((index) => new Hop(new MemoryPeer(`p${index}`), { role: "proxy", index }));
    const agent = new Hop(new MemoryPeer("agent"), { role: "agent" });
    const observe = traceObserver((e) => events.push(e), proxies);
    const update = { jsonrpc: "2.0" as const, method: "session/update", params: { sessionId: "s1" } };
    observe({ kind: "notified", from: agent, to: proxies[0], call: update }); // p1 and p2 do not watch it
    observe({ kind: "notified", from: proxies[0], to: client, call: update }); // the neighbour
    const call = { jsonrpc: "2.0" as const, id: 3, method: "session/prompt", params: { sessionId: "s1" } };
    observe({ kind: "delivered", from: client, to: proxies[2], call, id: 9 });
    const answer = { jsonrpc: "2.0" as const, id: 9, result: {} };
    observe({ kind: "answered", answerer: proxies[2], asker: client, id: 9, askerId: 3, method: call.method, answer, stale: false });
    expect(events.map((e) => ("past" in e ? e.past : undefined))).toEqual([
      ["proxy:1", "proxy:2"],
      undefined,
      ["proxy:0", "proxy:1"],
      ["proxy:0", "proxy:1"],
    ]);
  });

  // The router makes a `notified` event (one per notification per hop) only for these observers.
  it("notifications are heard by the trace and the debug log alone, and by none without them", () => {
    const update = { jsonrpc: "2.0" as const, method: "session/update", params: { sessionId: "s1" } };
    const quiet = routeObservers(
      createLogger("warn", () => {}),
      {},
    );
    expect(quiet.notified).toEqual([]);
    expect(quiet.all).toHaveLength(2); // drop warnings and the stall watch
    const events: TraceEvent[] = [];
    const lines: string[] = [];
    const loud = routeObservers(
      createLogger("debug", (line) => lines.push(line)),
      { trace: (e) => events.push(e) },
    );
    expect(loud.notified).toHaveLength(2);
    expect(loud.all).toEqual(expect.arrayContaining(loud.notified));
    for (const observe of loud.notified) observe({ kind: "notified", from: proxy, to: client, call: update });
    expect(events.map((e) => e.type)).toEqual(["notification"]);
    expect(lines.some((line) => line.includes("proxy:0 → client: session/update"))).toBe(true);
  });

  it(`drop warnings: at most ${MAX_DROP_WARNINGS} per peer in 10 s, then one line says the rest are not logged`, () => {
    const lines: string[] = [];
    const observe = dropWarnings(createLogger("warn", (line) => lines.push(line)));
    for (let i = 0; i < 3 * MAX_DROP_WARNINGS; i++) observe({ kind: "dropped", hop: proxy, why: `dropped ${i}` });
    observe({ kind: "dropped", hop: client, why: "the client's own" });
    expect(lines.filter((l) => /dropped \d/.test(l))).toHaveLength(MAX_DROP_WARNINGS);
    expect(lines.filter((l) => l.includes("not logging further ones for now"))).toHaveLength(1);
    expect(lines.some((l) => l.includes("the client's own"))).toBe(true);
  });
});
