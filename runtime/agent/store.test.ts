/** Unit tests of the reference agent's on-disk session store and session controls (no process). */
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { COMMANDS } from "./commands.js";
import { availableCommands, configOptions, currentMode, initialState, modeState, validateConfigChange, validateMode } from "./controls.js";
import { ActiveSessions, replayUpdates } from "./session.js";
import { defaultStoreDir, isSessionId, SessionStore, STORE_FORMAT, type StoredSession } from "./store.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cordon-store-test-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const ID = "sess-12345678-1234-4234-8234-123456789abc";
const record = (sessionId = ID): StoredSession => ({
  format: STORE_FORMAT,
  sessionId,
  cwd: "/project",
  additionalDirectories: [],
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  toolCalls: 0,
  state: initialState(),
});

describe("SessionStore", () => {
  it("keeps a record and an append-only history per session folder", () => {
    const store = new SessionStore(join(dir, "nested", "store"));
    store.create(record());
    expect(readdirSync(join(dir, "nested", "store", ID)).sort()).toStrictEqual(["history.jsonl", "session.json"]);
    expect(store.read(ID)).toStrictEqual(record());
    store.append(ID, { kind: "user", prompt: [{ type: "text", text: "hi" }] });
    store.append(ID, { kind: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "echo: hi\n" } } });
    expect(readFileSync(join(dir, "nested", "store", ID, "history.jsonl"), "utf8")).toBe(
      '{"kind":"user","prompt":[{"type":"text","text":"hi"}]}\n{"kind":"update","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"echo: hi\\n"}}}\n',
    );
    expect(replayUpdates(store.history(ID))).toStrictEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "echo: hi\n" } },
    ]);
    // Rewrites are atomic: no temporary files are left behind.
    store.write({ ...record(), toolCalls: 3 });
    expect(store.read(ID)?.toolCalls).toBe(3);
    expect(readdirSync(join(dir, "nested", "store", ID)).sort()).toStrictEqual(["history.jsonl", "session.json"]);
  });

  it("ignores a history line cut short, but reports a corrupt one", () => {
    const store = new SessionStore(dir);
    store.create(record());
    store.append(ID, { kind: "user", prompt: [] });
    appendFileSync(join(dir, ID, "history.jsonl"), '{"kind":"upd');
    expect(store.history(ID)).toStrictEqual([{ kind: "user", prompt: [] }]);
    writeFileSync(join(dir, ID, "history.jsonl"), 'garbage\n{"kind":"user","prompt":[]}\n');
    expect(() => store.history(ID)).toThrow(RequestError);
    writeFileSync(join(dir, ID, "history.jsonl"), '{"kind":"other"}\n');
    expect(() => store.history(ID)).toThrow(/no known kind/);
  });

  it("never touches paths that are not session ids", () => {
    const store = new SessionStore(join(dir, "store"));
    mkdirSync(join(dir, "victim"), { recursive: true });
    for (const id of ["../victim", "sess-../../x", "", ID.toUpperCase()]) {
      expect(isSessionId(id)).toBe(false);
      expect(store.has(id)).toBe(false);
      expect(store.read(id)).toBeUndefined();
      expect(store.delete(id)).toBe(false);
    }
    expect(readdirSync(dir)).toContain("victim");
  });

  it("lists readable records only; fork copies history and leaves the source alone; delete removes", () => {
    const store = new SessionStore(dir);
    store.create(record());
    store.append(ID, { kind: "user", prompt: [{ type: "text", text: "a" }] });
    mkdirSync(join(dir, "not-a-session"));
    mkdirSync(join(dir, "sess-00000000-0000-4000-8000-000000000001"));
    writeFileSync(join(dir, "sess-00000000-0000-4000-8000-000000000001", "session.json"), "{ torn");
    const forkId = "sess-00000000-0000-4000-8000-000000000002";
    store.fork(ID, { ...record(forkId), forkedFrom: ID });
    store.append(forkId, { kind: "user", prompt: [{ type: "text", text: "b" }] });
    expect(store.history(ID)).toHaveLength(1);
    expect(store.history(forkId)).toHaveLength(2);
    expect(
      store
        .list()
        .map((r) => r.sessionId)
        .sort(),
    ).toStrictEqual([forkId, ID].sort());
    expect(store.delete(forkId)).toBe(true);
    expect(store.delete(forkId)).toBe(false);
    expect(store.list().map((r) => r.sessionId)).toStrictEqual([ID]);
    expect(new SessionStore(join(dir, "missing")).list()).toStrictEqual([]);
  });

  it("defaults to $CORDON_AGENT_STORE, then $XDG_STATE_HOME, then the temp dir", () => {
    expect(defaultStoreDir({ CORDON_AGENT_STORE: "/a", XDG_STATE_HOME: "/b" })).toBe("/a");
    expect(defaultStoreDir({ XDG_STATE_HOME: "/b" })).toBe(join("/b", "cordon", "sessions"));
    expect(defaultStoreDir({})).toMatch(new RegExp(`^${tmpdir().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}.cordon-[^/]+.sessions$`));
  });
});

describe("ActiveSessions", () => {
  it("writes every change through, so a second view of the store sees it", () => {
    const store = new SessionStore(dir);
    const active = new ActiveSessions(store);
    const session = active.create({
      cwd: "/p",
      mcpServers: [{ name: "m", command: "x", args: [], env: [{ name: "TOKEN", value: "secret" }] }],
      additionalDirectories: [],
    });
    session.setMode("code");
    session.setConfig("verbosity", "low");
    session.setTitle("T");
    expect(session.nextToolCallId()).toBe("tool-1");
    session.record({ kind: "update", update: { sessionUpdate: "session_info_update", title: "T" } });
    session.record({ kind: "update", update: { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "x" } } });
    const other = new ActiveSessions(store).activate(session.id);
    expect(other.mode).toBe("code");
    expect(other.config("verbosity")).toBe("low");
    expect(other.title).toBe("T");
    expect(other.nextToolCallId()).toBe("tool-2");
    // Only replayable updates are history; MCP servers (with their env) are never stored.
    expect(store.history(session.id).map((e) => (e.kind === "update" ? e.update.sessionUpdate : e.kind))).toStrictEqual([
      "agent_thought_chunk",
    ]);
    expect(readFileSync(join(dir, session.id, "session.json"), "utf8")).not.toContain("secret");
    expect(() => active.activate("sess-00000000-0000-4000-8000-000000000009")).toThrow(expect.objectContaining({ code: -32002 }));
  });
});

describe("session controls", () => {
  it("validates modes and config changes against what was announced", () => {
    expect(validateMode("code")).toBe("code");
    expect(() => validateMode("Code")).toThrow(expect.objectContaining({ code: -32602 }));
    expect(validateConfigChange({ sessionId: "s", configId: "verbosity", value: "low" }, false)).toMatchObject({
      key: "acp:config:verbosity",
      value: "low",
    });
    expect(validateConfigChange({ sessionId: "s", configId: "tool_calls_enabled", type: "boolean", value: false }, true)).toMatchObject({
      value: false,
    });
    const rejected = [
      [{ sessionId: "s", configId: "verbosity", value: "loud" }, true],
      [{ sessionId: "s", configId: "verbosity", type: "boolean", value: true }, true],
      [{ sessionId: "s", configId: "tool_calls_enabled", value: "false" }, true],
      [{ sessionId: "s", configId: "tool_calls_enabled", type: "boolean", value: false }, false],
      [{ sessionId: "s", configId: "model", value: "x" }, true],
    ] as const;
    for (const [params, booleans] of rejected) {
      expect(() => validateConfigChange(params as Parameters<typeof validateConfigChange>[0], booleans)).toThrow(
        expect.objectContaining({ code: -32602 }),
      );
    }
  });

  it("announces options, modes and commands from their tables, with safe fallbacks", () => {
    expect(configOptions(initialState(), false).map((o) => o.id)).toStrictEqual(["verbosity"]);
    expect(configOptions(initialState(), true).map((o) => [o.id, o.currentValue])).toStrictEqual([
      ["verbosity", "normal"],
      ["tool_calls_enabled", true],
    ]);
    expect(
      configOptions({ "acp:config:verbosity": "bogus", "acp:config:tool_calls_enabled": "yes" }, true).map((o) => o.currentValue),
    ).toStrictEqual(["normal", true]);
    expect(currentMode({ "acp:mode": "gone" })).toBe("ask");
    expect(modeState(initialState()).availableModes.map((m) => m.id)).toStrictEqual(["ask", "code"]);
    expect(availableCommands().map((c) => c.name)).toStrictEqual(COMMANDS.map((c) => c.usage.split(" ")[0]));
    expect(availableCommands().find((c) => c.name === "edit")).toMatchObject({ input: { hint: "<path> <text>" } });
    expect(availableCommands().find((c) => c.name === "wait")).not.toHaveProperty("input");
  });
});
