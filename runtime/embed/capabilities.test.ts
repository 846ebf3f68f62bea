import type * as acp from "@agentclientprotocol/sdk/unstable";
import { describe, expect, it } from "vitest";
import {
  checkConfigValue,
  checkMode,
  checkPromptContent,
  clientCapabilities,
  offerMcpServers,
  requireSessionMethod,
} from "./capabilities.js";
import { InvalidRequestError, UnsupportedError } from "./errors.js";

describe("client capabilities", () => {
  it("declares fs and terminal only for what is implemented", () => {
    expect(clientCapabilities(undefined, undefined)).toMatchObject({ fs: { readTextFile: false, writeTextFile: false }, terminal: false });
    expect(clientCapabilities({ readTextFile: () => ({ content: "" }) }, undefined)).toMatchObject({
      fs: { readTextFile: true, writeTextFile: false },
    });
    const terminal = {
      create: () => ({ terminalId: "t" }),
      output: () => ({ output: "", truncated: false }),
      waitForExit: () => ({}),
      kill: () => {},
      release: () => {},
    };
    expect(clientCapabilities(undefined, terminal).terminal).toBe(true);
  });
});

describe("the agent's capabilities", () => {
  it("gate the session methods", () => {
    const none: acp.AgentCapabilities = {};
    for (const m of [
      "loadSession",
      "listSessions",
      "resumeSession",
      "forkSession",
      "closeSession",
      "deleteSession",
      "additionalDirectories",
    ] as const) {
      expect(() => requireSessionMethod(none, m)).toThrow(UnsupportedError);
    }
    const all: acp.AgentCapabilities = {
      loadSession: true,
      sessionCapabilities: { list: {}, resume: {}, fork: {}, close: {}, delete: {}, additionalDirectories: {} },
    };
    for (const m of [
      "loadSession",
      "listSessions",
      "resumeSession",
      "forkSession",
      "closeSession",
      "deleteSession",
      "additionalDirectories",
    ] as const) {
      expect(() => requireSessionMethod(all, m)).not.toThrow();
    }
    try {
      requireSessionMethod({ sessionCapabilities: { fork: null } }, "forkSession");
    } catch (error) {
      expect((error as UnsupportedError).capability).toBe("agentCapabilities.sessionCapabilities.fork");
    }
  });

  it("gate prompt content, naming the block and the capability", () => {
    const caps: acp.AgentCapabilities = { promptCapabilities: { image: true } };
    expect(() =>
      checkPromptContent(
        [
          { type: "text", text: "x" },
          { type: "resource_link", name: "n", uri: "file:///x" },
          { type: "image", data: "", mimeType: "image/png" },
        ],
        caps,
      ),
    ).not.toThrow();
    expect(() =>
      checkPromptContent(
        [
          { type: "text", text: "x" },
          { type: "audio", data: "", mimeType: "audio/wav" },
        ],
        caps,
      ),
    ).toThrow(/prompt block 1 is audio.*promptCapabilities.audio/);
    expect(() => checkPromptContent([{ type: "resource", resource: { uri: "file:///x", text: "t" } }], caps)).toThrow(/embeddedContext/);
  });

  it("choose the MCP transports offered", () => {
    const servers: acp.McpServer[] = [
      { name: "local", command: "srv", args: [], env: [] },
      { type: "http", name: "web", url: "http://x", headers: [] },
      { type: "sse", name: "old", url: "http://y", headers: [] },
      { type: "acp", name: "proxy", id: "p1" } as unknown as acp.McpServer,
    ];
    const split = offerMcpServers(servers, { mcpCapabilities: { http: true, acp: true } }, "omit");
    expect(split.offered.map((s) => s.name)).toEqual(["local", "web", "proxy"]);
    expect(split.omitted.map((s) => s.name)).toEqual(["old"]);
    expect(() => offerMcpServers(servers, {}, "error")).toThrow(/"web" uses the http transport/);
  });
});

describe("session controls", () => {
  const modes: acp.SessionModeState = {
    currentModeId: "ask",
    availableModes: [
      { id: "ask", name: "Ask" },
      { id: "code", name: "Code" },
    ],
  };
  const options: acp.SessionConfigOption[] = [
    {
      id: "verbosity",
      name: "Verbosity",
      type: "select",
      currentValue: "normal",
      options: [
        { value: "low", name: "Low" },
        { value: "normal", name: "Normal" },
      ],
    },
    {
      id: "model",
      name: "Model",
      type: "select",
      currentValue: "a",
      options: [
        {
          group: "g",
          name: "G",
          options: [
            { value: "a", name: "A" },
            { value: "b", name: "B" },
          ],
        },
      ],
    },
    { id: "tools", name: "Tools", type: "boolean", currentValue: true },
  ];

  it("accept only announced modes", () => {
    expect(() => checkMode(modes, "code")).not.toThrow();
    expect(() => checkMode(modes, "yolo")).toThrow(InvalidRequestError);
    expect(() => checkMode(null, "code")).toThrow(UnsupportedError);
  });

  it("accept only announced options and values of the right kind", () => {
    expect(checkConfigValue(options, "s", "verbosity", "low")).toEqual({ sessionId: "s", configId: "verbosity", value: "low" });
    expect(checkConfigValue(options, "s", "model", "b")).toEqual({ sessionId: "s", configId: "model", value: "b" });
    expect(checkConfigValue(options, "s", "tools", false)).toEqual({ sessionId: "s", configId: "tools", type: "boolean", value: false });
    expect(() => checkConfigValue(options, "s", "verbosity", "loud")).toThrow(InvalidRequestError);
    expect(() => checkConfigValue(options, "s", "tools", "yes")).toThrow(InvalidRequestError);
    expect(() => checkConfigValue(options, "s", "nope", "x")).toThrow(/unknown config option/);
    expect(() => checkConfigValue(null, "s", "tools", true)).toThrow(UnsupportedError);
  });
});
