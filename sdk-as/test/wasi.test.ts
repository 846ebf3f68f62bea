// The SDK's proxy-wasi world: Clock and Random through the granted WASI imports, the build tool
// choosing the world, and the conductor's loader refusing the proxy without the grants.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { componentWit } from "@bytecodealliance/jco-transpile/wasm-tools";
import { beforeAll, describe, expect, it } from "vitest";
import { CanonicalHost } from "../../runtime/sandbox/canonical-host.js";
import { type LoadedComponent, loadComponent } from "../../runtime/sandbox/component-loader.js";
import { loadFixture, ProxyUnderTest, proxyUnderTest, ROOT } from "./harness.js";

const run = promisify(execFile);
const GRANTS = ["wasi:clocks", "wasi:random"];
const fixtureOut = join(ROOT, "sdk-as", "test", "fixtures", "dist", "wasi-clock.wasm");

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadFixture("wasi-clock", { grants: GRANTS });
});

describe("the proxy-wasi world", () => {
  it("gives a granted proxy the wall clock and real randomness", async () => {
    const p = await proxyUnderTest(component, {}, { grants: GRANTS });
    const before = Date.now();
    const [answer] = p.deliver({ jsonrpc: "2.0", id: 1, method: "_x/now", params: {} });
    const r = answer.result;
    expect(Math.abs(Number(r.millis) - before)).toBeLessThan(5_000);
    expect(Number(r.seconds)).toBe(Math.floor(Number(r.millis) / 1000));
    expect(r.nanoseconds).toBeGreaterThanOrEqual(0);
    expect(r.nanoseconds).toBeLessThan(1e9);
    expect(new Date(r.iso).getTime()).toBe(Number(r.seconds) * 1000 + Math.floor(r.nanoseconds / 1e6));
    expect(Number(r.resolutionNs)).toBeGreaterThan(0);
    expect(r.u64differ).toBe(true);
    expect([r.bytes, r.empty]).toEqual([32, 0]);
    expect(r.nonzero).toBeGreaterThan(20); // 32 random bytes: ~0.1 are zero
    expect(r.hex).toMatch(/^[0-9a-f]{16}$/);
    expect(r.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(r.float >= 0 && r.float < 1).toBe(true);
    const [again] = p.deliver({ jsonrpc: "2.0", id: 2, method: "_x/now", params: {} });
    expect(again.result.uuid).not.toBe(r.uuid);
    // and inside a real hook: every prompt stamped with time and a fresh id
    const [fwd] = p.deliver({
      jsonrpc: "2.0",
      id: 3,
      method: "session/prompt",
      params: { sessionId: "s", prompt: [{ type: "text", text: "hi" }] },
    });
    expect(fwd.params.params.prompt[0].text).toMatch(/^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z [0-9a-f-]{36}\]$/);
  });

  it("many random buffers do not leak guest memory (the host's buffers are released)", async () => {
    const p = new ProxyUnderTest(component, { grants: GRANTS });
    p.configure({});
    p.initialize();
    for (let i = 0; i < 5000; i++) p.deliver({ jsonrpc: "2.0", id: i, method: "_x/now" }); // the heap settles
    const start = p.host.memoryBytes;
    // 20 000 more calls, three random buffers each: left pinned they would grow the heap by MBs
    for (let i = 0; i < 20000; i++) p.deliver({ jsonrpc: "2.0", id: i, method: "_x/now" });
    expect(p.host.memoryBytes - start).toBeLessThanOrEqual(2 * 65536);
  });

  it("is a component of the proxy-wasi world: cordon:proxy plus wall-clock and random, refused without the grants", async () => {
    const wit = await componentWit(readFileSync(fixtureOut));
    for (const line of [
      "import wasi:clocks/wall-clock@0.2.0;",
      "import wasi:random/random@0.2.0;",
      "import cordon:proxy/channel@0.1.0;",
      "export cordon:proxy/handler@0.1.0;",
    ]) {
      expect(wit).toContain(line);
    }
    const cacheDir = mkdtempSync(join(tmpdir(), "cordon-wasi-sdk-"));
    await expect(loadComponent(fixtureOut, { cacheDir })).rejects.toThrow(/needs the "wasi:clocks" grant/);
    await expect(loadComponent(fixtureOut, { cacheDir, grants: ["wasi:clocks"] })).rejects.toThrow(/needs the "wasi:random" grant/);
    expect(() => new CanonicalHost(component.module, { encodings: component.encodings })).toThrow(/wasi:/);
    expect(component.encodings).toEqual({ receive: "utf16", send: "utf16" });
  });

  it("the build tool refuses --world proxy for a proxy that uses Clock/Random, naming the fix", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "cordon-wasi-build-")), "x.wasm");
    const tool = join(ROOT, "sdk-as", "tools", "build-proxy.mjs");
    const failed = await run(process.execPath, [
      tool,
      join(ROOT, "sdk-as", "test", "fixtures", "wasi-clock.ts"),
      "-o",
      out,
      "--world",
      "proxy",
    ]).catch((e) => e);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("which the proxy world does not have; build it for the proxy-wasi world");
    const bad = await run(process.execPath, [tool, "x.ts", "--world", "wasi"]).catch((e) => e);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--world takes one of proxy, proxy-wasi");
  }, 120_000); // a real asc compile, alongside the other test files on two cores
});
