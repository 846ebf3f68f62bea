import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { describe, expect, it } from "vitest";
import { compareRecency, decodeCursor, encodeCursor, listSessions } from "./session-list.js";
import { STORE_FORMAT, type StoredSession } from "./store.js";

const record = (n: number, updatedAt: string, cwd = "/work/a", extra: Partial<StoredSession> = {}): StoredSession => ({
  format: STORE_FORMAT,
  sessionId: `sess-${String(n).padStart(8, "0")}-0000-0000-0000-000000000000`,
  cwd,
  additionalDirectories: [],
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt,
  toolCalls: 0,
  state: {},
  ...extra,
});
const storeOf = (records: StoredSession[]) => ({ list: () => records.map((r) => ({ ...r })) });

describe("session/list cursors", () => {
  it("round-trip the sort key as opaque base64url", () => {
    const key = { updatedAt: "2026-01-02T03:04:05.000Z", sessionId: "sess-x" };
    const cursor = encodeCursor(key);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toStrictEqual(key);
  });

  it("refuse a cursor this agent did not make with -32602", () => {
    for (const bad of ["", "nope", Buffer.from(JSON.stringify({ v: 2, u: "x", id: "y" })).toString("base64url")]) {
      const error = (() => {
        try {
          decodeCursor(bad);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(RequestError);
      expect((error as RequestError).code).toBe(-32602);
      expect((error as RequestError).data).toStrictEqual({ cursor: bad });
    }
  });

  it("order most recently updated first, ties by id", () => {
    const a = { updatedAt: "2026-01-02", sessionId: "a" };
    const b = { updatedAt: "2026-01-02", sessionId: "b" };
    const old = { updatedAt: "2026-01-01", sessionId: "a" };
    expect([old, b, a].sort(compareRecency)).toStrictEqual([a, b, old]);
    expect(compareRecency(a, a)).toBe(0);
  });
});

describe("listSessions", () => {
  const records = [
    record(1, "2026-01-01T00:00:00.000Z"),
    record(2, "2026-01-03T00:00:00.000Z", "/work/b", { state: { "acp:title": "Bee" } }),
    record(3, "2026-01-02T00:00:00.000Z", "/work/a", { additionalDirectories: ["/extra"] }),
    record(4, "2026-01-02T00:00:00.000Z"),
  ];

  it("pages through every session once, in order, with nextCursor while more follow", () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = listSessions(storeOf(records), { cursor }, 3);
      seen.push(...page.sessions.map((s) => s.sessionId));
      cursor = page.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(seen).toStrictEqual([2, 3, 4, 1].map((n) => records[n - 1].sessionId));
  });

  it("answers sessionId, cwd, updatedAt, and additionalDirectories and title only when present", () => {
    const { sessions, nextCursor } = listSessions(storeOf(records), {}, 50);
    expect(nextCursor).toBeUndefined();
    expect(sessions[0]).toStrictEqual({ sessionId: records[1].sessionId, cwd: "/work/b", title: "Bee", updatedAt: records[1].updatedAt });
    expect(sessions[1]).toStrictEqual({
      sessionId: records[2].sessionId,
      cwd: "/work/a",
      additionalDirectories: ["/extra"],
      updatedAt: records[2].updatedAt,
    });
  });

  it("filters on the exact cwd after normalising, and refuses a relative one before reading the store", () => {
    const only = listSessions(storeOf(records), { cwd: "/work/b/." }, 50);
    expect(only.sessions.map((s) => s.cwd)).toStrictEqual(["/work/b"]);
    let read = false;
    expect(() => listSessions({ list: () => ((read = true), records) }, { cwd: "work/b" }, 50)).toThrow(/cwd must be an absolute path/);
    expect(read).toBe(false);
  });
});
