import { describe, expect, it } from "vitest";
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
});
