/**
 * `WasmProxyPeer.passes` / `whenIdle` with a hand-driven sandbox: a message the guest does not
 * watch may be routed past it only while it owes nothing, and an answer waiting behind it goes on
 * in its turn — or at once when the guest dies, never left waiting.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { proxyWasm } from "../../test/helpers/paths.js";
import type { PeerSink } from "../routing/peer.js";
import type { Delivery, ProxySandbox, SandboxHandlers } from "../sandbox/sandbox.js";
import { INTEREST_FILTERS_ENV } from "./interest-filter.js";
import { WasmProxyPeer } from "./wasm-proxy.js";

const PASSTHROUGH = proxyWasm("passthrough");

/** A sandbox whose queue the test works through by hand. */
class HandSandbox implements ProxySandbox {
  handlers: SandboxHandlers | null = null;
  readonly queue: (string | object)[] = [];
  async start(handlers: SandboxHandlers): Promise<void> {
    this.handlers = handlers;
  }
  deliver(message: string | Delivery): void {
    this.queue.push(typeof message === "string" ? message : message.text);
  }
  passThrough(message: object): void {
    this.queue.push(message);
  }
  idle(): boolean {
    return this.queue.length === 0;
  }
  async stop(): Promise<void> {}
  /** Handles the next queued item: a delivery produces no output, a pass-through is handed back. */
  step(): void {
    const item = this.queue.shift();
    if (item !== undefined && typeof item !== "string") this.handlers!.passed?.(item);
  }
}

async function peer() {
  const sandbox = new HandSandbox();
  const proxy = new WasmProxyPeer({ name: "p", path: PASSTHROUGH, config: {} }, {}, () => sandbox);
  const closed: string[] = [];
  const sent: unknown[] = [];
  const sink: PeerSink = { message: (m) => sent.push(m), malformed: () => {}, closed: (reason) => closed.push(reason) };
  await proxy.open(sink);
  while (sandbox.queue.length > 0) sandbox.step(); // the configure notification
  return { proxy, sandbox, closed, sent };
}

const update = { jsonrpc: "2.0" as const, method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "plan" } } };

describe("a WASM proxy the conductor may route past", () => {
  // These are the filter's own tests: they hold it on even when the suite runs with filters off.
  let filters: string | undefined;
  beforeEach(() => {
    filters = process.env[INTEREST_FILTERS_ENV];
    delete process.env[INTEREST_FILTERS_ENV];
  });
  afterEach(() => {
    if (filters === undefined) delete process.env[INTEREST_FILTERS_ENV];
    else process.env[INTEREST_FILTERS_ENV] = filters;
  });

  it("passes what it does not watch only while its sandbox owes nothing", async () => {
    const { proxy, sandbox } = await peer();
    expect(proxy.passes(update)).toBe(true); // passthrough.wasm declares it watches nothing
    expect(proxy.passes({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} })).toBe(false);
    expect(proxy.passes({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 1 } })).toBe(false);
    proxy.send({ jsonrpc: "2.0", id: 2, method: "initialize", params: {} }); // a delivery: now it owes output
    expect(proxy.passes(update)).toBe(false);
    sandbox.step();
    expect(proxy.passes(update)).toBe(true);
  });

  it("delivers a message a rule chose it for (a session it opened itself) into the sandbox, watched or not", async () => {
    const { proxy, sandbox, sent } = await peer();
    const enveloped = { jsonrpc: "2.0" as const, method: "proxy/successor", params: { method: "session/update", params: update.params } };
    proxy.send({ jsonrpc: "2.0", id: 2, method: "initialize", params: {} }); // a delivery: now it owes output
    proxy.send(enveloped);
    expect(sandbox.queue.at(-1)).toEqual(update); // not watched: the filter passes it on unwrapped, behind the delivery
    sandbox.step();
    sandbox.step();
    expect(sent).toEqual([update]);
    proxy.send(enveloped, true);
    expect(sandbox.queue).toEqual([JSON.stringify(enveloped)]); // chosen: the guest gets it
  });

  it("hands what passes back from a microtask while its sandbox owes nothing, and lets nothing overtake it", async () => {
    const { proxy, sandbox, sent } = await peer();
    const enveloped = { jsonrpc: "2.0" as const, method: "proxy/successor", params: { method: "session/update", params: update.params } };
    proxy.send(enveloped);
    expect(sandbox.queue).toEqual([]); // not through the sandbox's queue
    expect(sent).toEqual([]); // nor from inside the router's call
    expect(proxy.passes(update)).toBe(false); // a later message may not be routed past it meanwhile
    const idle: number[] = [];
    proxy.whenIdle(() => idle.push(sent.length));
    expect(idle).toEqual([]);
    await Promise.resolve();
    expect(sent).toEqual([update]);
    expect(idle).toEqual([1]);
    expect(proxy.passes(update)).toBe(true);
  });

  it("runs whenIdle at once when idle, else in its turn behind the deliveries before it", async () => {
    const { proxy, sandbox } = await peer();
    const ran: string[] = [];
    proxy.whenIdle(() => ran.push("now"));
    expect(ran).toEqual(["now"]);
    proxy.send({ jsonrpc: "2.0", id: 2, method: "initialize", params: {} });
    proxy.whenIdle(() => ran.push("later"));
    expect(ran).toEqual(["now"]);
    sandbox.step(); // the delivery
    expect(ran).toEqual(["now"]);
    sandbox.step(); // the marker
    expect(ran).toEqual(["now", "later"]);
  });

  it("an answer waiting behind a guest that fails goes on", async () => {
    const { proxy, sandbox, closed } = await peer();
    proxy.send({ jsonrpc: "2.0", id: 2, method: "initialize", params: {} });
    let ran = false;
    proxy.whenIdle(() => (ran = true));
    sandbox.handlers!.failed({ kind: "trap", message: "unreachable" });
    expect(closed).toHaveLength(1);
    await Promise.resolve();
    expect(ran).toBe(true);
  });
});
