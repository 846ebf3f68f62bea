import { afterEach, describe, expect, it, vi } from "vitest";
import { LineBuffer } from "./line-buffer.js";

const texts = (lines: ReturnType<LineBuffer["push"]>) => lines.map((l) => (l.kind === "line" ? l.text : `<${l.bytes}>`));

describe("LineBuffer", () => {
  it("splits on newlines and keeps the unterminated tail", () => {
    const b = new LineBuffer();
    expect(texts(b.push(Buffer.from('{"a":1}\n{"b":')))).toEqual(['{"a":1}']);
    expect(texts(b.push(Buffer.from("2}\r\n\n")))).toEqual(['{"b":2}', ""]);
    expect(texts(b.push(Buffer.from("tail")))).toEqual([]);
    expect(texts(b.end())).toEqual(["tail"]);
    expect(b.end()).toEqual([]);
  });

  it("does not split multi-byte characters across chunks", () => {
    const b = new LineBuffer();
    const bytes = Buffer.from("héllo 😀\n");
    const out = [...b.push(bytes.subarray(0, 2)), ...b.push(bytes.subarray(2, 8)), ...b.push(bytes.subarray(8))];
    expect(texts(out)).toEqual(["héllo 😀"]);
  });

  it("drops an oversized line, reports it once and stays in sync", () => {
    const b = new LineBuffer(8);
    expect(texts(b.push(Buffer.from("0123456")))).toEqual([]);
    expect(texts(b.push(Buffer.from("789abc")))).toEqual([]);
    expect(texts(b.push(Buffer.from("def\nok\n")))).toEqual(["<16>", "ok"]);
  });

  it("cuts the lines of one chunk from one decode: \r stripped, blank lines kept, the tail buffered", () => {
    const b = new LineBuffer();
    expect(texts(b.push(Buffer.from('{"a":"é"}\r\n\n{"b":2}\n😀 x\r\n{"c"')))).toEqual(['{"a":"é"}', "", '{"b":2}', "😀 x"]);
    expect(texts(b.push(Buffer.from(":3}\n")))).toEqual(['{"c":3}']);
  });

  it("measures each line of a chunk against the limit when one could be over it", () => {
    const b = new LineBuffer(8);
    expect(texts(b.push(Buffer.from("ok\n0123456789\n01234567\nyes\n")))).toEqual(["ok", "<10>", "01234567", "yes"]);
  });

  it("gives the lines a naive split gives, however the bytes are chunked", () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pieces = ["a", "é", "😀", "\n", "\r\n", '{"x":1}', "\\n", " "];
    for (let round = 0; round < 200; round++) {
      const text = Array.from({ length: 1 + random(40) }, () => pieces[random(pieces.length)]).join("");
      const bytes = Buffer.from(text);
      const b = new LineBuffer();
      const got: string[] = [];
      for (let at = 0; at < bytes.length; ) {
        const next = Math.min(bytes.length, at + 1 + random(12));
        got.push(...texts(b.push(bytes.subarray(at, next))));
        at = next;
      }
      got.push(...texts(b.end()));
      const expected = text.split("\n").map((l) => l.replace(/\r$/, ""));
      if (expected[expected.length - 1] === "") expected.pop();
      expect(got, JSON.stringify(text)).toEqual(expected);
    }
  });

  describe("a line spanning chunks", () => {
    afterEach(() => vi.restoreAllMocks());

    /** The bytes of `text` and a newline. */
    const line = (text: string) => Buffer.from(`${text}\n`);
    /** `bytes` pushed in `parts` chunks of about equal size. */
    const pushed = (b: LineBuffer, bytes: Buffer, parts: number) => {
      const size = Math.ceil(bytes.length / parts);
      const out: string[] = [];
      for (let at = 0; at < bytes.length; at += size) out.push(...texts(b.push(bytes.subarray(at, at + size))));
      return out;
    };

    it("is put together in one buffer kept for the next, whose texts stay as they were", () => {
      // Multi-byte characters cut at chunk edges (the sizes are not multiples of their lengths).
      const first = `{"text":"${"é😀x".repeat(30_001)}"}`;
      const second = `{"text":"${'ü\\"y'.repeat(40_000)}"}`;
      const [a, b2] = [line(first), line(second)];
      const concat = vi.spyOn(Buffer, "concat");
      const allocated = vi.spyOn(Buffer, "allocUnsafeSlow");
      const b = new LineBuffer();
      const got = [...pushed(b, a, 5), ...pushed(b, b2, 7), ...pushed(b, a, 3)];
      expect(got).toEqual([first, second, first]);
      expect(got[0]).toBe(first); // not overwritten by the later lines put together in the same buffer
      expect(concat).not.toHaveBeenCalled();
      expect(allocated).toHaveBeenCalledTimes(1);
    });

    it("past the reused buffer's limit gets a buffer of its own", () => {
      const long = "a".repeat(1024 * 1024 + 1);
      const [bytes, short] = [line(long), line("short")];
      const concat = vi.spyOn(Buffer, "concat");
      const b = new LineBuffer();
      expect(pushed(b, bytes, 4)).toEqual([long]);
      expect(concat).toHaveBeenCalledTimes(1);
      expect(pushed(b, short, 2)).toEqual(["short"]);
    });
  });
});
