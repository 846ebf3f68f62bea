/**
 * Trap diagnostics: AssemblyScript's `abort(message, file, line, column)` — a throw, a failed
 * assertion, `Map.get` of a missing key — reaches the failure text instead of a bare `unreachable`.
 * The SDK's abort handler sends `_cordon/abort` and traps; the host reads it from the last message
 * of the receive that trapped. A `_cordon/abort` that does not end in a trap is dropped.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { CanonicalHost, describe as describeError } from "../../runtime/sandbox/canonical-host.js";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { loadComponentBytes } from "../../runtime/sandbox/component-loader.js";
import { DEFAULT_LIMITS, type SandboxFailure } from "../../runtime/sandbox/sandbox.js";
import { ThreadSandbox } from "../../runtime/sandbox/thread-sandbox.js";
import { WorkerSandbox } from "../../runtime/sandbox/worker-sandbox.js";
import { buildComponent } from "../../test/fixtures/wat-components.js";
import { CORDON, NODE, SCRIPTED_AGENT } from "../../test/helpers/paths.js";
import { RawClient } from "../../test/helpers/raw-client.js";
import { loadFixture, proxyUnderTest, ROOT } from "./harness.js";

let aborts: LoadedComponent;
beforeAll(async () => {
  aborts = await loadFixture("aborts");
}, 120_000);

const prompt = (text: string) => ({
  jsonrpc: "2.0",
  id: 7,
  method: "session/prompt",
  params: { sessionId: "s", prompt: [{ type: "text", text }] },
});

function trapOf(text: string): unknown {
  return proxyUnderTest(aborts).then((p) => {
    try {
      p.deliver(prompt(text));
    } catch (error) {
      return error;
    }
    throw new Error(`"${text}" did not trap`);
  });
}

describe("a trap keeps AssemblyScript's abort message", () => {
  it("Map key not found, a throw and a failed assertion name the message and where it was raised", async () => {
    expect(describeError(await trapOf("map"))).toMatch(/^Key does not exist at ~lib\/map\.ts:\d+:\d+$/);
    expect(describeError(await trapOf("throw"))).toMatch(/^the proxy gave up at .*aborts\.ts:\d+:\d+$/);
    expect(describeError(await trapOf("assert"))).toMatch(/^prompt too short at .*aborts\.ts:\d+:\d+$/);
  });

  it("a bare unreachable stays `unreachable`, and the instance is dead either way", async () => {
    const p = await proxyUnderTest(aborts);
    expect(() => p.deliver(prompt("raw"))).toThrow(/^unreachable$/);
    expect(() => p.deliver(prompt("hello"))).toThrow(/dead after an earlier trap: unreachable/);
    const q = await proxyUnderTest(aborts);
    expect(() => q.deliver(prompt("map"))).toThrow();
    expect(() => q.deliver(prompt("hello"))).toThrow(/dead after an earlier trap: Key does not exist at ~lib\/map\.ts/);
  });

  for (const Sandbox of [ThreadSandbox, WorkerSandbox]) {
    it(`${Sandbox.name}: the failure reads the abort message`, async () => {
      const sandbox = new Sandbox(aborts, DEFAULT_LIMITS);
      let failure: SandboxFailure | null = null;
      await sandbox.start({ output: () => {}, failed: (f) => (failure = f) });
      sandbox.deliver(JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "aborts", config: {} } }));
      sandbox.deliver(JSON.stringify(prompt("map")));
      await expect.poll(() => failure, { timeout: 10_000 }).not.toBeNull();
      expect(failure).toEqual({ kind: "trap", message: expect.stringMatching(/^Key does not exist at ~lib\/map\.ts:\d+:\d+$/) });
      await sandbox.stop();
    });
  }
});

describe("_cordon/abort is only a trap's last word", () => {
  // A raw guest: sends `_cordon/abort` then returns (no trap), or sends it and then something else before trapping.
  const WORLD = `world guest { import cordon:proxy/channel@0.1.0; export cordon:proxy/handler@0.1.0; }`;
  const ABORT = `{"jsonrpc":"2.0","method":"_cordon/abort","params":{"message":"forged","file":"x.ts","line":1,"column":2}}`;
  const OTHER = `{"jsonrpc":"2.0","method":"_cordon/log","params":{"level":"info","message":"hi"}}`;
  const data = (s: string) => Buffer.from(s, "utf16le").toString("hex").replace(/../g, "\\$&");
  const guest = (body: string) =>
    buildComponent({
      wit: WORLD,
      encoding: "utf16",
      wat: `(module
        (import "cordon:proxy/channel@0.1.0" "send" (func $send (param i32 i32)))
        (memory (export "memory") 1)
        (data (i32.const 1024) "${data(ABORT)}")
        (data (i32.const 8192) "${data(OTHER)}")
        (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (i32.const 32768))
        (func (export "cordon:proxy/handler@0.1.0#receive") (param i32 i32) ${body}))`,
    });
  const cacheDir = mkdtempSync(join(tmpdir(), "cordon-abort-"));
  const host = async (body: string) => {
    const component = await loadComponentBytes("guest.wasm", await guest(body), { cacheDir });
    return new CanonicalHost(component.module, { encodings: component.encodings });
  };

  it("a _cordon/abort that does not end in a trap is dropped, the rest is delivered", async () => {
    const h = await host(
      `(call $send (i32.const 1024) (i32.const ${ABORT.length})) (call $send (i32.const 8192) (i32.const ${OTHER.length}))`,
    );
    expect(h.receive("{}")).toEqual([OTHER]);
  });

  it("a trap whose last message is not the abort keeps its own description", async () => {
    const h = await host(
      `(call $send (i32.const 1024) (i32.const ${ABORT.length})) (call $send (i32.const 8192) (i32.const ${OTHER.length})) unreachable`,
    );
    let error: unknown;
    try {
      h.receive("{}");
    } catch (e) {
      error = e;
    }
    expect(describeError(error)).toBe("unreachable");
  });
});

describe("in a real chain", () => {
  let client: RawClient | null = null;
  afterEach(async () => {
    await client?.close();
    client = null;
  });

  it('the client reads: proxy "aborts" failed (trap): Key does not exist at ~lib/map.ts:…', async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-abort-chain-"));
    const config = join(dir, "chain.json");
    const wasm = join(ROOT, "sdk-as", "test", "fixtures", "dist", "aborts.wasm");
    writeFileSync(
      config,
      JSON.stringify({ proxies: [{ name: "aborts", wasm }], agent: { command: SCRIPTED_AGENT[0], args: SCRIPTED_AGENT.slice(1) } }),
    );
    client = new RawClient(NODE, [CORDON, "run", "--config", config]);
    await client.request("initialize", { protocolVersion: 1 });
    const s = (await client.request("session/new", { cwd: "/tmp", mcpServers: [] })).result.sessionId;
    const res = await client.request("session/prompt", { sessionId: s, prompt: [{ type: "text", text: "map" }] });
    expect(res.error.message).toMatch(/^proxy "aborts" failed \(trap\): Key does not exist at ~lib\/map\.ts:\d+:\d+/);
  });
});
