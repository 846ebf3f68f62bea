import { describe, expect, it } from "vitest";
import { jsonSyntaxPosition } from "./json-position.js";

function positionOf(text: string) {
  try {
    JSON.parse(text);
  } catch (error) {
    return jsonSyntaxPosition(text, error as Error);
  }
  throw new Error("parsed");
}

describe("jsonSyntaxPosition", () => {
  it("gives line:column from 1 and V8's reason without its offset", () => {
    expect(positionOf('{\n  "proxies": [],\n}')).toEqual({ line: 3, column: 1, reason: "Expected double-quoted property name" });
    expect(positionOf('{\n  "agent" {}\n}')).toEqual({ line: 2, column: 11, reason: "Expected ':' after property name" });
  });

  it("places text that ends too soon at its end", () => {
    expect(positionOf('{\n  "proxies": [\n')).toEqual({ line: 3, column: 1, reason: "Unexpected end of JSON input" });
    expect(positionOf("")).toEqual({ line: 1, column: 1, reason: "Unexpected end of JSON input" });
  });

  it("reads newer V8's own (line column) suffix the same way", () => {
    const error = new Error("Expected double-quoted property name in JSON at position 7 (line 1 column 8)");
    expect(jsonSyntaxPosition('{"a":1,}', error)).toEqual({ line: 1, column: 8, reason: "Expected double-quoted property name" });
    expect(jsonSyntaxPosition("x", new Error("something else"))).toBeNull();
  });
});
