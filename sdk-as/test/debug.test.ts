/**
 * Debug mode (the host's CORDON_LOG=debug, passed in `_cordon/configure` as `debug: true`): a hook
 * that returns without forwarding, answering or holding its request is reported by name and id —
 * the request's sender would otherwise wait for ever, silently.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { INIT_PARAMS, INIT_RESULT, ProxyUnderTest } from "../testing/proxy-under-test.js";
import { loadFixture } from "./harness.js";

let hooks: LoadedComponent;
beforeAll(async () => {
  hooks = await loadFixture("hooks");
}, 180_000);

function start(debug: boolean): ProxyUnderTest {
  const p = new ProxyUnderTest(hooks);
  p.deliver({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "hooks", config: {}, debug } });
  p.initialize(INIT_PARAMS, INIT_RESULT);
  return p;
}

const request = (id: number, method: string) => ({ jsonrpc: "2.0", id, method, params: {} });
const warnings = (p: ProxyUnderTest) => p.logs.filter((l) => l.level === "warn").map((l) => l.message);

describe("debug mode", () => {
  it("reports a request a hook returned without forwarding, answering or holding", () => {
    const p = start(true);
    expect(p.deliver(request(7, "_test/forget"))).toEqual([]);
    expect(warnings(p)).toEqual([
      "a hook returned without forwarding, answering or holding _test/forget (id 7); its sender waits for ever",
    ]);
  });

  it("is quiet for requests forwarded, answered or held on purpose, and when not in debug mode", () => {
    const p = start(true);
    p.deliver(request(1, "_test/forwarded-by-default"));
    p.deliver(request(2, "_test/stats"));
    p.deliver(request(3, "_test/hold"));
    expect(warnings(p)).toEqual([]);
    const quiet = start(false);
    quiet.deliver(request(4, "_test/forget"));
    expect(warnings(quiet)).toEqual([]);
  });
});
