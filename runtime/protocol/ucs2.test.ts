import { describe, expect, it } from "vitest";
import { ucs2Slice, ucs2Write } from "./ucs2.js";

describe("ucs2Write / ucs2Slice", () => {
  it("copy a text in and out as UTF-16LE, at an offset and within the length given", () => {
    const view = Buffer.alloc(32);
    const text = "aé😀\ud800"; // a lone surrogate, as JavaScript strings may hold
    expect(ucs2Write(view, text, 4, 32 - 4)).toBe(text.length * 2);
    expect(ucs2Slice(view, 4, 4 + text.length * 2)).toBe(text);
    expect(view.subarray(4, 6)).toEqual(Buffer.from("a", "utf16le"));
    // At most `length` bytes: the rest of the memory is left as it was.
    view.fill(0);
    expect(ucs2Write(view, "abcdef", 0, 4)).toBe(4);
    expect(ucs2Slice(view, 0, 12)).toBe("ab\0\0\0\0");
  });
});
