import { describe, expect, it } from "vitest";
import { MAX_NESTING_DEPTH, nestsDeeperThan } from "./nesting.js";
import { parseLine } from "./parse-line.js";
import { attachRaw, CompactNotification } from "./raw-json.js";

const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth));

describe("nestsDeeperThan", () => {
  it("counts the message itself as level 1", () => {
    expect(nestsDeeperThan({ a: 1 }, 1)).toBe(false);
    expect(nestsDeeperThan({ a: {} }, 1)).toBe(true);
    expect(nestsDeeperThan("scalar", 0)).toBe(false);
  });

  it("accepts exactly the limit and refuses one more, through arrays and objects alike", () => {
    expect(nestsDeeperThan(nested(MAX_NESTING_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_NESTING_DEPTH + 1))).toBe(true);
    const objects = JSON.parse('{"a":'.repeat(MAX_NESTING_DEPTH + 1) + "1" + "}".repeat(MAX_NESTING_DEPTH + 1));
    expect(nestsDeeperThan(objects)).toBe(true);
  });

  it("survives a value far deeper than the stack (what used to crash re-serialisation)", () => {
    const deep = nested(1_000_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(nestsDeeperThan(deep)).toBe(true);
  });

  it("finds a deep branch beside shallow ones, and ignores prototype-looking keys", () => {
    const value = JSON.parse(`{"__proto__":{"x":1},"wide":[1,2,3],"deep":${"[".repeat(200)}${"]".repeat(200)}}`);
    expect(nestsDeeperThan(value)).toBe(true);
    expect(nestsDeeperThan(JSON.parse('{"__proto__":{"constructor":{}}}'))).toBe(false);
  });
});

describe("nestsDeeperThan on a message with its text", () => {
  it("skips the walk only when the text is too short to nest past the limit, and still refuses one level more", () => {
    const text = "[".repeat(MAX_NESTING_DEPTH + 1) + "]".repeat(MAX_NESTING_DEPTH + 1); // exactly 2 × (max + 1) characters
    expect(nestsDeeperThan(attachRaw(JSON.parse(text) as object, text))).toBe(true);
    const limit = "[".repeat(MAX_NESTING_DEPTH) + "]".repeat(MAX_NESTING_DEPTH);
    expect(nestsDeeperThan(attachRaw(JSON.parse(limit) as object, limit))).toBe(false);
    const short = '{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"hi"}}}}';
    expect(nestsDeeperThan(attachRaw(JSON.parse(short) as object, short), 2)).toBe(true); // short, but deeper than a small limit: walked
    expect(nestsDeeperThan(attachRaw(JSON.parse(short) as object, short))).toBe(false);
  });

  it("takes the read check's word for a streamed line's params, at the limit and one level past it", () => {
    const line = (depth: number) =>
      `{"jsonrpc":"2.0","method":"session/update","params":{"a":${"[".repeat(depth - 2)}${"]".repeat(depth - 2)}}}`;
    const atLimit = parseLine(line(MAX_NESTING_DEPTH)) as object;
    expect(nestsDeeperThan(atLimit)).toBe(false);
    expect((atLimit as { depthChecked: boolean }).depthChecked).toBe(true); // not walked: its params were checked when read
    const past = parseLine(line(MAX_NESTING_DEPTH + 1)) as object;
    expect(past).toBeInstanceOf(CompactNotification); // the check refused it: parsed as before, and walked
    expect(nestsDeeperThan(past)).toBe(true);
  });
});
