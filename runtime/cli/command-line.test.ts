import { describe, expect, it } from "vitest";
import { parseCommandLine, splitWords } from "./command-line.js";

describe("command lines", () => {
  it("splits on whitespace and honours quotes and escapes", () => {
    expect(splitWords(`npx cordon proxy --proxy "a b.wasm" --proxy 'c d.wasm' e\\ f ""`)).toEqual([
      "npx",
      "cordon",
      "proxy",
      "--proxy",
      "a b.wasm",
      "--proxy",
      "c d.wasm",
      "e f",
      "",
    ]);
    expect(splitWords(`say "he said \\"hi\\"" 'it''s'`)).toEqual(["say", 'he said "hi"', "its"]);
  });

  it("takes leading NAME=value words as environment", () => {
    expect(parseCommandLine("DEBUG=1 X=a=b node p.js --v")).toEqual({
      command: "node",
      args: ["p.js", "--v"],
      env: { DEBUG: "1", X: "a=b" },
    });
  });

  it("rejects an unterminated quote and an empty line", () => {
    expect(() => parseCommandLine(`node "p.js`)).toThrow(/unterminated " quote/);
    expect(() => parseCommandLine("A=1")).toThrow(/no command/);
  });
});
