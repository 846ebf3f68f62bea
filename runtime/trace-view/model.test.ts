import { describe, expect, it } from "vitest";
import { buildTraceModel, MAX_LABEL_CHARS } from "./model.js";

const line = (e: object) => JSON.stringify(e);
const req = (from: string, to: string, id: number, method: string, params: unknown = {}, session: string | null = null) =>
  line({ ts: 0.1, type: "request", protocol: "acp", from, to, id, method, session, params });
const res = (from: string, to: string, id: number, payload: unknown, isError = false) =>
  line({ ts: 0.2, type: "response", from, to, id, is_error: isError, payload });
const note = (from: string, to: string, method: string, params: unknown, session: string | null) =>
  line({ ts: 0.3, type: "notification", protocol: "acp", from, to, method, session, params });

describe("trace viewer model", () => {
  it("puts lanes in chain order: client, proxies by index, the bridge, the agent", () => {
    const text = [
      req("mcp-bridge", "agent", 1, "initialize"),
      req("proxy:1", "mcp-bridge", 1, "initialize"),
      req("proxy:0", "proxy:1", 1, "initialize"),
      req("client", "proxy:0", 1, "initialize"),
    ].join("\n");
    expect(buildTraceModel(text).lanes).toEqual([
      { name: "client", role: "client" },
      { name: "proxy:0", role: "proxy" },
      { name: "proxy:1", role: "proxy" },
      { name: "mcp-bridge", role: "bridge" },
      { name: "agent", role: "agent" },
    ]);
  });

  it("marks the lanes a message was routed past: from the trace's past record, else the proxies between the hop's ends", () => {
    const text = [
      req("client", "proxy:0", 1, "initialize"),
      req("proxy:0", "proxy:1", 1, "initialize"),
      req("proxy:1", "proxy:2", 1, "initialize"),
      req("proxy:2", "agent", 1, "initialize"),
      line({
        ts: 1,
        type: "notification",
        protocol: "acp",
        from: "agent",
        to: "proxy:0",
        method: "session/update",
        session: "s",
        params: {},
        past: ["proxy:2", "proxy:1", "nobody"],
      }),
      note("proxy:0", "client", "session/update", {}, "s"),
      note("agent", "client", "session/update", {}, "s"), // an older trace: no record
    ].join("\n");
    const messages = buildTraceModel(text).messages;
    expect(messages.slice(0, 4).map((m) => m.past)).toEqual([[], [], [], []]);
    expect(messages.slice(4).map((m) => m.past)).toEqual([[2, 3], [], [1, 2, 3]]);
  });

  it("names proxy:N lanes from the chain config and keeps proxies already named in first-appearance order", () => {
    const text = [
      req("client", "proxy:0", 1, "initialize"),
      req("proxy:0", "proxy:1", 1, "initialize"),
      req("proxy:1", "agent", 1, "initialize"),
    ].join("\n");
    expect(buildTraceModel(text, { proxyNames: ["context", "arrow"] }).lanes.map((l) => l.name)).toEqual([
      "client",
      "context",
      "arrow",
      "agent",
    ]);
    const named = [
      req("client", "redact", 1, "initialize"),
      req("redact", "guard", 1, "initialize"),
      req("guard", "agent", 1, "initialize"),
    ].join("\n");
    expect(buildTraceModel(named).lanes.map((l) => l.name)).toEqual(["client", "redact", "guard", "agent"]);
  });

  it("pairs responses with their requests, gives kinds, labels and sessions (a session/new request joins the session it created)", () => {
    const text = [
      req("client", "agent", 1, "session/new"),
      res("agent", "client", 1, { sessionId: "s1" }),
      req("client", "agent", 2, "session/prompt", { sessionId: "s1" }, "s1"),
      note("agent", "client", "session/update", { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk" } }, "s1"),
      res("agent", "client", 2, { code: -32603, message: "boom" }, true),
      req("client", "agent", 3, "session/prompt", { sessionId: "s2" }, "s2"),
    ].join("\n");
    const m = buildTraceModel(text);
    expect(m.messages.map((x) => x.kind)).toEqual(["request", "response", "request", "notification", "error", "request"]);
    expect(m.messages.map((x) => x.label)).toEqual([
      "session/new #1",
      "session/new #1 result",
      "session/prompt #2",
      "session/update agent_message_chunk",
      "session/prompt #2 error -32603: boom",
      "session/prompt #3",
    ]);
    expect(m.messages.map((x) => x.session)).toEqual(["s1", "s1", "s1", "s1", "s1", "s2"]);
    expect(m.sessions).toEqual(["s1", "s2"]);
    expect(m.messages[1].from).toBe(1);
    expect(m.messages[1].to).toBe(0);
  });

  it("shows messages Cordon dropped and log lines, and counts unreadable lines instead of failing", () => {
    const text = [
      req("client", "proxy:0", 1, "initialize"),
      "{not json",
      "[1,2]",
      line({ type: "mystery" }),
      line({
        ts: 1,
        type: "trace",
        component: "proxy:0",
        level: "warn",
        message: 'proxy "x" answered a request it was never sent',
        dropped: { jsonrpc: "2.0", id: 7, result: {} },
      }),
      line({ ts: 1, type: "trace", component: "proxy:0", level: "info", message: "hello from the proxy" }),
      '{"ts":2,"type":"request","from":"client","to":"agent","id":9,"method":"session/pro', // cut off
    ].join("\n");
    const m = buildTraceModel(text);
    expect(m.skipped).toBe(4);
    expect(m.messages.map((x) => [x.kind, x.to])).toEqual([
      ["request", 1],
      ["dropped", -1],
      ["log", -1],
    ]);
    expect(m.messages[1].label).toMatch(/^dropped: proxy "x" answered a request it was never sent$/);
    expect(m.messages[1].id).toBe(7);
  });

  it("treats hostile names as plain data: __proto__ and constructor are lanes, labels are one clipped line", () => {
    const long = "x".repeat(500);
    const text = [req("__proto__", "constructor", 1, `evil\nmethod\u2028${long}`), res("constructor", "__proto__", 1, {})].join("\n");
    const m = buildTraceModel(text);
    expect(m.lanes.map((l) => l.name)).toEqual(["__proto__", "constructor"]);
    expect([...m.messages[0].label].length).toBe(MAX_LABEL_CHARS);
    expect(m.messages[0].label).not.toMatch(/[\n\u2028]/);
    expect(m.messages[1].kind).toBe("response");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
