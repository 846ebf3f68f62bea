import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { NdjsonChannel } from "./ndjson-channel.js";
import { attachPieces, attachRaw, piecesOf, rawOf, withMember } from "./raw-json.js";

/** A stream that records each hand-off it gets: a `write` as one chunk, a `writev` as its chunks. */
function recorder() {
  const calls: string[][] = [];
  const output = new Writable({
    decodeStrings: false,
    write(chunk, _encoding, done) {
      calls.push([String(chunk)]);
      done();
    },
    writev(chunks, done) {
      calls.push(chunks.map((c) => String(c.chunk)));
      done();
    },
  });
  return { calls, output, bytes: () => calls.flat().join("") };
}

function channel(output: Writable) {
  const input = new PassThrough();
  const received: unknown[] = [];
  const malformed: string[] = [];
  const ch = new NdjsonChannel(input, output, {
    message: (m) => received.push(m),
    malformed: (detail) => malformed.push(detail),
    end: () => {},
  });
  return { ch, input, received, malformed };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const prompt = (text: string, id = 7) =>
  `{"jsonrpc":"2.0","id":${id},"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":${JSON.stringify(text)}}]}}`;
const BIG = 'x"ü\n'.repeat(10_000);

describe("NdjsonChannel", () => {
  it("reads lines as messages that keep their text, and reports a line that is not JSON", async () => {
    const { input, received, malformed } = channel(recorder().output);
    input.write('{"jsonrpc":"2.0","method":"a"}\n{not json}\n  \n{"jsonrpc":"2.0",');
    input.write('"method":"b"}\n');
    await tick();
    expect(received).toEqual([
      { jsonrpc: "2.0", method: "a" },
      { jsonrpc: "2.0", method: "b" },
    ]);
    expect(rawOf(received[1] as object)).toBe('{"jsonrpc":"2.0","method":"b"}');
    expect(malformed).toHaveLength(1);
  });

  it("hands the lines of one synchronous step to the stream once, in order, each as its sender spelled it", async () => {
    const rec = recorder();
    const { ch } = channel(rec.output);
    const texts = ['{"jsonrpc":"2.0","method":"x","params":{"n":1.50}}', '{ "jsonrpc" : "2.0", "id":1, "result":null }'];
    for (const t of texts) ch.write(attachRaw(JSON.parse(t), t));
    ch.write({ jsonrpc: "2.0", method: "built" });
    await tick();
    expect(rec.calls).toEqual([[`${texts[0]}\n${texts[1]}\n{"jsonrpc":"2.0","method":"built"}\n`]]);
  });

  it("writes a long text built from pieces as those pieces, after the lines batched before it, in one corked hand-off", async () => {
    const rec = recorder();
    const { ch } = channel(rec.output);
    const small = '{"jsonrpc":"2.0","method":"before"}';
    ch.write(attachRaw(JSON.parse(small), small));
    const text = prompt(BIG);
    const long = withMember(attachRaw(JSON.parse(text), text), "id", 42);
    const pieces = piecesOf(long)!;
    expect(pieces.length).toBeGreaterThan(1);
    ch.write(long);
    await tick();
    // One writev: the batch, then the pieces as they are (not joined: that would flatten a copy), then the newline.
    expect(rec.calls).toEqual([[`${small}\n`, ...pieces, "\n"]]);
    expect(rec.bytes()).toBe(`${small}\n${prompt(BIG, 42)}\n`);
  });

  it("writes a long flat text apart from its newline, and a long one with a raw newline (pretty-printed) as one line", async () => {
    const rec = recorder();
    const { ch } = channel(rec.output);
    const text = prompt(BIG);
    ch.write(attachRaw(JSON.parse(text), text));
    const pretty = JSON.stringify(JSON.parse(text), null, 1);
    const head = pretty.slice(0, 20);
    ch.write(attachPieces(JSON.parse(pretty), [head, pretty.slice(20)]));
    await tick();
    expect(rec.calls[0]).toEqual([text, "\n"]);
    expect(rec.bytes()).toBe(`${text}\n${JSON.stringify(JSON.parse(text))}\n`);
  });
});
