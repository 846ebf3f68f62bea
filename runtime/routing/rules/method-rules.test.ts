/**
 * The rules run for a method are the ones that judge it, in table order; and each rule's `judges`
 * is held to its `call`: for every method it says it does not judge, from every kind of sender, as
 * a request and as a notification, its `call` passes the call on untouched and asks nothing of the
 * router, and its `forwarded` keeps no credit for such a notification and asks nothing either.
 */
import { describe, expect, it, vi } from "vitest";
import { Forwardable } from "../grants.js";
import { Hop } from "../hop.js";
import type { Peer } from "../peer.js";
import { ruleTable } from "./index.js";
import { MethodRules } from "./method-rules.js";
import { PASS, type RouteContext, type Rule } from "./rule.js";

const peer = (label: string): Peer => ({ label, open: async () => {}, send: () => {}, close: async () => {} }) as unknown as Peer;

function context(): { cx: RouteContext; client: Hop; agent: Hop; proxies: Hop[] } {
  const client = new Hop(peer("client"), { role: "client" });
  const proxies = [0, 1].map((index) => new Hop(peer(`p${index}`), { role: "proxy", index }));
  const agent = new Hop(peer("agent"), { role: "agent" });
  const all = [client, ...proxies, agent];
  const cx = {
    client,
    agent,
    proxies,
    indexOf: (hop: Hop) => all.indexOf(hop) - 1,
    traceName: (hop: Hop) => hop.label,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    trace() {},
    send: vi.fn(),
    notice: vi.fn(),
    answerInstead: vi.fn(),
    forwardAgain: vi.fn(),
    exit: vi.fn(),
    request: vi.fn(),
    dropped: vi.fn(),
  } as unknown as RouteContext;
  return { cx, client, agent, proxies };
}

/** Every method a peer might send that some rule judges, and some no rule does. */
const METHODS = [
  "initialize",
  "proxy/initialize",
  "_proxy/initialize",
  "proxy/successor",
  "_proxy/successor",
  "session/new",
  "session/load",
  "session/resume",
  "session/fork",
  "session/prompt",
  "session/cancel",
  "session/close",
  "session/update",
  "session/request_permission",
  "elicitation/create",
  "fs/read_text_file",
  "fs/write_text_file",
  "terminal/create",
  "mcp/connect",
  "mcp/message",
  "_mcp/message",
  "mcp/disconnect",
  "_cordon/log",
  "_cordon/configure",
  "_x/custom",
];

const params = {
  sessionId: "s",
  cwd: "/",
  mcpServers: [{ name: "sh", command: "/bin/sh", args: [], env: [] }],
  prompt: [{ type: "text", text: "hi" }],
  method: "tools/call",
  connectionId: "c",
  requestId: 1,
  path: "/etc/passwd",
  level: "info",
  message: "x",
};

describe("MethodRules", () => {
  const rule = (name: string, judges?: (m: string) => boolean): Rule => ({ name, judges, call: () => PASS });

  it("selects the rules that judge a method, in table order; a rule without `judges` judges every method, one without `call` none", () => {
    const a = rule("a", (m) => m === "x");
    const b = rule("b");
    const c = rule("c", (m) => m !== "y");
    const d: Rule = { name: "d", forwarded() {} };
    const rules = new MethodRules([a, b, c, d]);
    expect(rules.for("x").map((r) => r.name)).toEqual(["a", "b", "c"]);
    expect(rules.for("y").map((r) => r.name)).toEqual(["b"]);
    expect(rules.for("z")).toBe(rules.for("z")); // looked up once
  });

  it("keeps at most 256 selections, of names of at most 128 characters; past either, still selects right, asking again", () => {
    const judges = vi.fn((m: string) => m.endsWith("7"));
    const rules = new MethodRules([rule("a", judges), rule("b")]);
    const asked = (method: string) => {
      judges.mockClear();
      const names = rules.for(method).map((r) => r.name);
      return { names, asked: judges.mock.calls.length };
    };
    // A proxy's envelope may carry a method of any length: such a name is never kept.
    const long = `_x/${"m".repeat(100_000)}7`;
    expect(asked(long)).toEqual({ names: ["a", "b"], asked: 1 });
    expect(asked(long)).toEqual({ names: ["a", "b"], asked: 1 });
    for (let i = 0; i < 1000; i++) expect(rules.for(`_x/m${i}`).map((r) => r.name)).toEqual(i % 10 === 7 ? ["a", "b"] : ["b"]);
    expect(asked("_x/m7")).toEqual({ names: ["a", "b"], asked: 0 }); // among the first 256: kept
    expect(asked("_x/m997")).toEqual({ names: ["a", "b"], asked: 1 }); // past them: asked each time
    expect(asked("_x/m997")).toEqual({ names: ["a", "b"], asked: 1 });
  });

  it("every rule of every table that declares `judges` passes, untouched, each method it does not judge", () => {
    for (const mode of ["agent", "proxy"] as const) {
      const table = ruleTable(mode);
      const rules = [...new Set([...table.fromClient, ...table.fromAgent, ...table.proxyToPredecessor, ...table.proxyToSuccessor])];
      const declared = rules.filter((r) => r.judges !== undefined);
      expect(declared.length).toBeGreaterThanOrEqual(12);
      for (const r of declared) {
        const { cx, client, agent, proxies } = context();
        for (const method of METHODS) {
          if (r.judges!(method)) continue;
          for (const from of [client, proxies[0], proxies[1], agent]) {
            for (const call of [
              { jsonrpc: "2.0" as const, id: 1, method, params },
              { jsonrpc: "2.0" as const, method, params },
            ]) {
              expect(r.call!(cx, call, from), `${r.name} on ${method}`).toBe(PASS);
            }
          }
        }
        for (const hook of ["send", "notice", "answerInstead", "forwardAgain", "exit", "request", "dropped"] as const)
          expect(cx[hook], `${r.name}: ${hook}`).not.toHaveBeenCalled();
      }
    }
  });

  it("a rule that declares `judges` does nothing when told of a forwarded notification of a method it does not judge", () => {
    const add = vi.spyOn(Forwardable.prototype, "add");
    try {
      const table = ruleTable("agent");
      const told = table.hearing.forwarded.filter((r) => r.judges !== undefined);
      expect(told.map((r) => r.name).sort()).toEqual(
        [
          "agent-authority",
          "grant",
          "mcp-client",
          "mcp-origin",
          "mcp-servers",
          "permission-allow",
          "permission-cancel",
          "rust-dialect",
        ].sort(),
      );
      for (const r of told) {
        const { cx, client, agent, proxies } = context();
        const hops = [client, ...proxies, agent];
        for (const method of METHODS) {
          if (r.judges!(method)) continue;
          for (const from of hops)
            for (const to of hops) if (from !== to) r.forwarded!(cx, { from, to, key: null, call: { jsonrpc: "2.0", method, params } });
        }
        expect(add, r.name).not.toHaveBeenCalled();
        for (const hook of ["send", "notice", "answerInstead", "forwardAgain", "exit", "request", "dropped"] as const)
          expect(cx[hook], `${r.name}: ${hook}`).not.toHaveBeenCalled();
      }
      // A streamed update is told to no rule at all.
      expect(new MethodRules(table.hearing.forwarded, () => true).for("session/update")).toEqual([]);
      // The same notifications of the methods they do judge do earn credits: the spy sees them.
      const grant = told.find((r) => r.name === "grant")!;
      const { cx, proxies, agent } = context();
      grant.forwarded!(cx, { from: agent, to: proxies[1], key: null, call: { jsonrpc: "2.0", method: "fs/read_text_file", params } });
      expect(add).toHaveBeenCalledTimes(1);
    } finally {
      add.mockRestore();
    }
  });
});
