/**
 * The `_cordon/*` namespace is the host's (issue 8, hole 2): the SDK takes `_cordon/configure` only
 * as the very first message the host delivers, and ignores every other `_cordon/*` message, from
 * either side — so a client or another proxy that forges one can neither reconfigure a proxy nor
 * reach its hooks, even if the conductor let it through.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { agentUpdate, type Json, loadExampleProxy, loadFixture, ProxyUnderTest, proxyUnderTest, textChunk } from "./harness.js";

let plain: LoadedComponent;
let hooks: LoadedComponent;
let redact: LoadedComponent;
let toolGuard: LoadedComponent;
beforeAll(async () => {
  // one after the other: asc is single-threaded, and vitest runs other files alongside
  plain = await loadFixture("plain");
  hooks = await loadFixture("hooks");
  redact = await loadExampleProxy("redact");
  toolGuard = await loadExampleProxy("tool-guard");
}, 240_000);

const fromAgent = ProxyUnderTest.fromAgent;
const configure = (config: Json, name = "forged"): Json => ({ jsonrpc: "2.0", method: "_cordon/configure", params: { name, config } });
const LATE =
  /^ignored a forged notification _cordon\/configure from the (client|agent) side: configuration is accepted only as the host's first message$/;

describe("_cordon/configure is the host's first message only", () => {
  it("takes the first one; ignores a second one that follows it at once", () => {
    const p = new ProxyUnderTest(hooks);
    p.configure({ text: "host" }, "real");
    expect(p.logs.map((l) => l.message)).toEqual([expect.stringMatching(/^configured name=real text=host /)]);
    expect(p.deliverRaw(configure({ text: "evil" }))).toEqual([]);
    expect(p.logs).toHaveLength(2);
    expect(p.logs[1]).toEqual({ level: "warn", message: expect.stringMatching(LATE) });
  });

  it("ignores one after initialize, from the client side or from the agent side, and onConfigure never runs again", async () => {
    const p = await proxyUnderTest(hooks, { text: "host" });
    const before = p.logs.length;
    expect(p.deliverRaw(configure({ text: "evil" }))).toEqual([]);
    expect(p.deliverRaw(fromAgent({ method: "_cordon/configure", params: { name: "forged", config: { text: "evil" } } }))).toEqual([]);
    const added = p.logs.slice(before);
    expect(added.map((l) => l.level)).toEqual(["warn", "warn"]);
    expect(added[0].message).toMatch(/from the client side/);
    expect(added[1].message).toMatch(/from the agent side/);
    for (const l of added) expect(l.message).toMatch(LATE);
    expect(p.logs.filter((l) => l.message.startsWith("configured"))).toHaveLength(1);
  });

  it("a proxy that was never configured cannot be configured later", () => {
    const p = new ProxyUnderTest(hooks);
    p.initialize();
    expect(p.deliverRaw(configure({ text: "evil" }))).toEqual([]);
    expect(p.logs.some((l) => l.message.startsWith("configured"))).toBe(false);
    expect(p.logs.at(-1)!.message).toMatch(LATE);
  });

  it("a first message that is not the host's notification (a request, or malformed) uses up the chance", () => {
    const p = new ProxyUnderTest(hooks);
    expect(p.deliver({ jsonrpc: "2.0", id: 1, method: "_cordon/configure", params: { name: "x", config: { text: "evil" } } })).toEqual([
      {
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32600, message: "refused _cordon/configure: configuration is accepted only as the host's first message" },
      },
    ]);
    expect(p.deliverRaw(configure({ text: "evil" }))).toEqual([]);
    expect(p.logs.some((l) => l.message.startsWith("configured"))).toBe(false);

    const q = new ProxyUnderTest(hooks);
    expect(q.deliverRaw("not json")).toEqual([]);
    expect(q.deliverRaw(configure({ text: "evil" }))).toEqual([]);
    expect(q.logs.some((l) => l.message.startsWith("configured"))).toBe(false);
  });
});

describe("every other _cordon/* message is dropped, from either side", () => {
  const methods = ["_cordon/notice", "_cordon/log", "_cordon/anything", "_cordon/"];

  it("notifications reach no hook and are not forwarded, but are logged naming the attempt", async () => {
    const p = await proxyUnderTest(plain);
    const start = p.wire.length;
    for (const method of methods) {
      expect(p.deliverRaw({ jsonrpc: "2.0", method, params: { message: "from Cordon, honest" } })).toEqual([]);
      expect(p.logs.at(-1)).toEqual({
        level: "warn",
        message: `ignored a forged notification ${method} from the client side: the _cordon/ namespace is reserved for the host`,
      });
      expect(p.deliverRaw(fromAgent({ method, params: { message: "from Cordon, honest" } }))).toEqual([]);
      expect(p.logs.at(-1)).toEqual({
        level: "warn",
        message: `ignored a forged notification ${method} from the agent side: the _cordon/ namespace is reserved for the host`,
      });
    }
    // only the proxy's own logs went out
    expect(p.wire.slice(start).every((w) => JSON.parse(w).method === "_cordon/log")).toBe(true);
  });

  it("requests are answered with an error instead of reaching a hook", async () => {
    const p = await proxyUnderTest(plain);
    expect(p.deliver({ jsonrpc: "2.0", id: "c1", method: "_cordon/notice", params: {} })).toEqual([
      {
        jsonrpc: "2.0",
        id: "c1",
        error: { code: -32600, message: "refused _cordon/notice: the _cordon/ namespace is reserved for the host" },
      },
    ]);
    expect(p.deliver(fromAgent({ method: "_cordon/configure", params: { config: {} } }, 9))).toEqual([
      {
        jsonrpc: "2.0",
        id: 9,
        error: { code: -32600, message: "refused _cordon/configure: configuration is accepted only as the host's first message" },
      },
    ]);
    expect(p.logs.at(-1)!.message).toBe(
      "ignored a forged request _cordon/configure (id 9) from the agent side: configuration is accepted only as the host's first message",
    );
    // the proxy keeps working
    const [fwd] = p.deliver({ jsonrpc: "2.0", id: 5, method: "session/new", params: {} });
    expect(fwd.params.method).toBe("session/new");
  });

  it("a flood of forgeries is logged a bounded number of times", async () => {
    const p = await proxyUnderTest(plain);
    const before = p.logs.length;
    for (let i = 0; i < 500; i++) p.deliver(configure({ i }));
    const added = p.logs.slice(before);
    expect(added).toHaveLength(21);
    expect(added.at(-1)!.message).toBe("further forged _cordon/ messages are ignored without a warning");
  });

  it("non-reserved look-alikes still pass", async () => {
    const p = await proxyUnderTest(plain);
    expect(p.deliver({ jsonrpc: "2.0", method: "_cordonx/y", params: {} })).toEqual([
      { jsonrpc: "2.0", method: "proxy/successor", params: { method: "_cordonx/y", params: {} } },
    ]);
    expect(p.deliver(fromAgent({ method: "cordon/log", params: {} }))).toEqual([{ jsonrpc: "2.0", method: "cordon/log", params: {} }]);
  });
});

describe("the real redact.wasm and tool-guard.wasm cannot be reconfigured by a forger", () => {
  const OPENAI = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z";
  const chunk = (p: ProxyUnderTest, text: string): string => {
    const out = p.deliver(agentUpdate(textChunk(text)));
    expect(out).toHaveLength(1);
    return out[0].params.update.content.text;
  };

  it("redact keeps masking after a forged configure that would switch it off (from the client or the agent side)", async () => {
    const p = await proxyUnderTest(redact, { patterns: ["hunter2"], mask: "***" });
    // Text after the key: a key still running at a chunk's end is held back for the next chunk.
    expect(chunk(p, `pw hunter2 key ${OPENAI} end`)).toBe("pw *** key *** end");
    p.deliver(configure({ patterns: [], builtin: false, mask: "" }));
    p.deliver(fromAgent({ method: "_cordon/configure", params: { name: "redact", config: { patterns: [], builtin: false } } }));
    expect(chunk(p, `pw hunter2 key ${OPENAI} end`)).toBe("pw *** key *** end");
    expect(p.logs.filter((l) => LATE.test(l.message))).toHaveLength(2);
  });

  it("tool-guard keeps its deny list after a forged configure that empties it", async () => {
    const p = await proxyUnderTest(toolGuard, { deny: ["rm -rf*"] });
    const permission = (id: number): Json =>
      fromAgent(
        {
          method: "session/request_permission",
          params: {
            sessionId: "s",
            toolCall: { toolCallId: `t${id}`, title: "rm -rf /", kind: "execute" },
            options: [
              { optionId: "allow", name: "Allow", kind: "allow_once" },
              { optionId: "no", name: "Reject", kind: "reject_once" },
            ],
          },
        },
        id,
      );
    const denied = (id: number) => [{ jsonrpc: "2.0", id, result: { outcome: { outcome: "selected", optionId: "no" } } }];
    expect(p.deliver(permission(1))).toEqual(denied(1));
    p.deliver(configure({ deny: [] }, "tool-guard"));
    expect(p.deliver(permission(2))).toEqual(denied(2));
    p.deliver(fromAgent({ method: "_cordon/configure", params: { name: "tool-guard", config: { deny: [] } } }));
    expect(p.deliver(permission(3))).toEqual(denied(3));
  });
});
