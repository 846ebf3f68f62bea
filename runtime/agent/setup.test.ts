import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { describe, expect, it } from "vitest";
import { STDIO_ONLY } from "./mcp.js";
import { checkCwd, validateSetup } from "./setup.js";
import { STORE_FORMAT, type StoredSession } from "./store.js";

function refusal(fn: () => unknown): RequestError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(RequestError);
    expect((error as RequestError).code).toBe(-32602);
    return error as RequestError;
  }
  throw new Error("expected a refusal");
}

describe("validateSetup", () => {
  it("defaults the lists and keeps cwd as given", () => {
    expect(validateSetup({ cwd: "/work/a/" }, STDIO_ONLY)).toStrictEqual({ cwd: "/work/a/", mcpServers: [], additionalDirectories: [] });
  });

  it("refuses relative directories, naming them", () => {
    expect(refusal(() => validateSetup({ cwd: "work" }, STDIO_ONLY)).data).toStrictEqual({ cwd: "work" });
    expect(refusal(() => validateSetup({ cwd: "/w", additionalDirectories: ["/ok", "rel"] }, STDIO_ONLY)).data).toStrictEqual({
      additionalDirectories: ["rel"],
    });
  });

  it("accepts only the MCP transports it supports", () => {
    const http = { type: "http" as const, name: "web", url: "http://127.0.0.1:1/mcp", headers: [] };
    const stdio = { name: "local", command: "true", args: [], env: [] };
    const error = refusal(() => validateSetup({ cwd: "/w", mcpServers: [stdio, http] }, STDIO_ONLY));
    expect(error.data).toStrictEqual({ mcpServers: ["web"] });
    expect(error.message).toMatch(/http MCP servers are not supported/);
    expect(validateSetup({ cwd: "/w", mcpServers: [stdio, http] }, { http: true, acp: false }).mcpServers).toHaveLength(2);
  });
});

describe("checkCwd", () => {
  const record = {
    format: STORE_FORMAT,
    sessionId: "sess-1",
    cwd: "/work/a",
    additionalDirectories: [],
    createdAt: "",
    updatedAt: "",
    toolCalls: 0,
    state: {},
  } satisfies StoredSession;

  it("accepts the session's own directory after normalising and refuses another", () => {
    expect(() => checkCwd(record, "/work/a/./")).not.toThrow();
    expect(refusal(() => checkCwd(record, "/work/b")).data).toStrictEqual({ sessionId: "sess-1", cwd: "/work/b", sessionCwd: "/work/a" });
  });
});
