/** Unit tests of the reference agent's prompt-command parser (pure; the e2e tests cover the wire). */
import { describe, expect, it } from "vitest";
import { COMMANDS, describeBlock, fakeSecret, helpText, MAX_QUOTED_RESOURCE_CHARS, parseLine, parsePrompt } from "./commands.js";

describe("parseLine", () => {
  it("parses each command word with its argument", () => {
    expect(parseLine("echo hello  there")).toStrictEqual({ kind: "echo", text: "hello  there" });
    expect(parseLine("echo")).toStrictEqual({ kind: "echo", text: "" });
    expect(parseLine("think a\tb")).toStrictEqual({ kind: "think", text: "a\tb" });
    expect(parseLine("tool ls -la")).toStrictEqual({ kind: "tool", title: "ls -la" });
    expect(parseLine("permission rm -rf /")).toStrictEqual({ kind: "permission", title: "rm -rf /" });
    expect(parseLine("secret")).toStrictEqual({ kind: "secret", flavour: "openai" });
    expect(parseLine("secret AWS")).toStrictEqual({ kind: "secret", flavour: "aws" });
    expect(parseLine("wait")).toStrictEqual({ kind: "wait" });
    expect(parseLine("sleep 0")).toStrictEqual({ kind: "sleep", ms: 0 });
    expect(parseLine("sleep 60000")).toStrictEqual({ kind: "sleep", ms: 60000 });
    expect(parseLine("stop max_turn_requests")).toStrictEqual({ kind: "stop", reason: "max_turn_requests" });
    expect(parseLine("error boom now")).toStrictEqual({ kind: "error", message: "boom now" });
    expect(parseLine("info")).toStrictEqual({ kind: "info" });
    expect(parseLine("help")).toStrictEqual({ kind: "help" });
  });

  it("trims, ignores case of the command word, accepts a leading slash", () => {
    expect(parseLine("   /Tool   Build It  ")).toStrictEqual({ kind: "tool", title: "Build It" });
    expect(parseLine("WAIT")).toStrictEqual({ kind: "wait" });
    expect(parseLine("   ")).toBeUndefined();
    expect(parseLine("")).toBeUndefined();
  });

  it("echoes anything that is not a command, as typed", () => {
    expect(parseLine("  Hello, World  ")).toStrictEqual({ kind: "echo", text: "Hello, World" });
    expect(parseLine("thinking about it")).toStrictEqual({ kind: "echo", text: "thinking about it" });
    expect(parseLine("/unknown x")).toStrictEqual({ kind: "echo", text: "/unknown x" });
    expect(parseLine("sk-notacommand")).toStrictEqual({ kind: "echo", text: "sk-notacommand" });
  });

  it("reports bad arguments as usage", () => {
    expect(parseLine("think")).toStrictEqual({ kind: "usage", text: "usage: think <text>" });
    expect(parseLine("tool")).toStrictEqual({ kind: "usage", text: "usage: tool <title>" });
    expect(parseLine("permission")).toStrictEqual({ kind: "usage", text: "usage: permission <title>" });
    expect(parseLine("secret gitlab")).toStrictEqual({ kind: "usage", text: "usage: secret [openai|anthropic|github|aws]" });
    expect(parseLine("wait 5")).toStrictEqual({ kind: "usage", text: "usage: wait" });
    expect(parseLine("sleep -1")).toStrictEqual({ kind: "usage", text: "usage: sleep <ms>" });
    expect(parseLine("sleep 60001")).toStrictEqual({ kind: "usage", text: "usage: sleep <ms>" });
    expect(parseLine("stop cancelled")).toStrictEqual({
      kind: "usage",
      text: "usage: stop <end_turn|max_tokens|max_turn_requests|refusal>",
    });
    expect(parseLine("error")).toStrictEqual({ kind: "usage", text: "usage: error <message>" });
    expect(parseLine("info me")).toStrictEqual({ kind: "usage", text: "usage: info" });
  });

  it("parses the tool, title and mirror commands", () => {
    expect(parseLine("read src/a file.ts")).toStrictEqual({ kind: "read", path: "src/a file.ts" });
    expect(parseLine("edit notes.md add a  line ")).toStrictEqual({ kind: "edit", path: "notes.md", text: "add a  line" });
    expect(parseLine("run git   status -s")).toStrictEqual({ kind: "run", command: "git", args: ["status", "-s"] });
    expect(parseLine("run ls")).toStrictEqual({ kind: "run", command: "ls", args: [] });
    expect(parseLine("/Title  My session ")).toStrictEqual({ kind: "title", title: "My session" });
    expect(parseLine("mirror")).toStrictEqual({ kind: "mirror" });
    expect(parseLine("read")).toStrictEqual({ kind: "usage", text: "usage: read <path>" });
    expect(parseLine("edit notes.md")).toStrictEqual({ kind: "usage", text: "usage: edit <path> <text>" });
    expect(parseLine("run")).toStrictEqual({ kind: "usage", text: "usage: run <command> [args…]" });
    expect(parseLine("title")).toStrictEqual({ kind: "usage", text: "usage: title <text>" });
    expect(parseLine("mirror all")).toStrictEqual({ kind: "usage", text: "usage: mirror" });
  });
});

describe("parsePrompt", () => {
  it("splits text blocks into lines and describes other blocks in order", () => {
    expect(
      parsePrompt([
        { type: "text", text: "a\r\n\nthink b" },
        { type: "resource_link", name: "x", uri: "file:///x" },
        { type: "text", text: "wait" },
      ]),
    ).toStrictEqual([
      { kind: "echo", text: "a" },
      { kind: "think", text: "b" },
      { kind: "echo", text: "[resource_link name=x uri=file:///x]" },
      { kind: "wait" },
    ]);
    expect(parsePrompt([])).toStrictEqual([]);
  });

  it("after a mirror line, sends later non-text blocks back verbatim", () => {
    const link = { type: "resource_link" as const, name: "x", uri: "file:///x" };
    const image = { type: "image" as const, mimeType: "image/png", data: "AAAA", _meta: { k: 1 } };
    expect(parsePrompt([link, { type: "text", text: "one\nmirror\ntwo" }, image, link])).toStrictEqual([
      { kind: "echo", text: "[resource_link name=x uri=file:///x]" },
      { kind: "echo", text: "one" },
      { kind: "echo", text: "two" },
      { kind: "block", block: image },
      { kind: "block", block: link },
    ]);
  });
});

describe("describeBlock", () => {
  it("quotes at most the first characters of an embedded text resource", () => {
    const text = "x".repeat(MAX_QUOTED_RESOURCE_CHARS + 5);
    expect(describeBlock({ type: "resource", resource: { uri: "u", text } })).toBe(
      `[resource uri=u text="${"x".repeat(MAX_QUOTED_RESOURCE_CHARS)}…"]`,
    );
    expect(describeBlock({ type: "image", mimeType: "image/gif", data: "AAAA", uri: "https://e/x.gif" })).toBe(
      "[image mimeType=image/gif 3 bytes uri=https://e/x.gif]",
    );
  });
});

describe("help and secrets", () => {
  it("lists every command", () => {
    const text = helpText();
    for (const command of COMMANDS) expect(text).toContain(command.usage);
  });

  it("emits key-shaped fake secrets", () => {
    expect(fakeSecret("openai")).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    expect(fakeSecret("anthropic")).toMatch(/^sk-ant-api03-[A-Za-z0-9_-]{80,}AA$/);
    expect(fakeSecret("github")).toMatch(/^ghp_[A-Za-z0-9]{36}$/);
    expect(fakeSecret("aws")).toMatch(/^AKIA[0-9A-Z]{16}$/);
  });
});
