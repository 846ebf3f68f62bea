import { describe, expect, it } from "vitest";
import { parseLine } from "./parse-line.js";
import { CompactNotification, layoutOf, memberRange, rawOf, rawParamsPieces } from "./raw-json.js";

const UPDATE =
  '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a \\"b\\" }} c"}}}}';

/** What `JSON.parse` makes of `text`, or the error it throws. */
function reference(text: string): { value?: unknown; error?: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** `parseLine` agrees with `JSON.parse` on `text`, and any params place it records is the one a walk finds. */
function agrees(text: string): void {
  const expected = reference(text);
  let value: unknown;
  try {
    value = parseLine(text);
  } catch (error) {
    expect((error as Error).message, text).toBe(expected.error);
    return;
  }
  expect(expected.error, text).toBeUndefined();
  // Same members, same order (stringify writes them in order), same values.
  expect(JSON.stringify(value), text).toBe(JSON.stringify(expected.value));
  if (typeof value !== "object" || value === null) return;
  expect(rawOf(value)).toBe(text);
  if (value instanceof CompactNotification) rawParamsPieces(value); // the place read off the text
  // Any place known without a walk is the one a walk finds (the last member of its name).
  const layout = layoutOf(value);
  if (layout?.params !== undefined) expect(layout.params, text).toEqual(memberRange(text, "params"));
  if (layout?.id !== undefined) expect(layout.id, text).toEqual(memberRange(text, "id"));
}

describe("parseLine", () => {
  it("reads a streamed update as JSON.parse does, its params' place known without a walk", () => {
    const message = parseLine(UPDATE) as { method: string; params: unknown };
    expect(message).toEqual(JSON.parse(UPDATE));
    expect(Object.keys(message)).toEqual(["jsonrpc", "method", "params"]);
    expect(message).toBeInstanceOf(CompactNotification);
    expect(message.method).toBe("session/update");
    expect(rawParamsPieces(message)!.join("")).toBe(JSON.stringify(JSON.parse(UPDATE).params));
    const range = layoutOf(message)!.params!;
    expect(UPDATE.slice(...range)).toBe(JSON.stringify(JSON.parse(UPDATE).params));
    expect(rawParamsPieces(message)!.join("")).toBe(UPDATE.slice(...range));
  });

  it("leaves every other line to JSON.parse: a member after params, an id, another order, whitespace, an escaped method", () => {
    for (const text of [
      '{"jsonrpc":"2.0","method":"m","params":{"a":1},"params":{"b":2}}',
      '{"jsonrpc":"2.0","method":"m","params":{"a":{}},"x":{}}',
      '{"jsonrpc":"2.0","method":"m","params":{"a":1},"id":7}',
      '{"jsonrpc":"2.0","method":"m","params":{"a":1},"id":"{}"}',
      '{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}',
      '{"method":"m","jsonrpc":"2.0","params":{"a":1}}',
      '{"jsonrpc":"2.0","method":"m","params": {"a":{}}}',
      '{"jsonrpc":"2.0","method":"m","params":{"a":{}} }',
      '{"jsonrpc":"2.0","method":"session\\/update","params":{"a":{}}}',
      '{"jsonrpc":"2.0","method":"m","params":[{}]}',
    ]) {
      agrees(text);
      expect(parseLine(text), text).not.toBeInstanceOf(CompactNotification);
    }
    expect((parseLine('{"jsonrpc":"2.0","method":"m","params":{"a":1},"params":{"b":{}}}') as { params: unknown }).params).toEqual({
      b: {},
    });
  });

  it("refuses what JSON.parse refuses, with its error: a raw control character in the method, a broken tail", () => {
    for (const text of [
      '{"jsonrpc":"2.0","method":"m\tx","params":{"a":{}}}',
      '{"jsonrpc":"2.0","method":"m","params":{"a":{}}}}',
      '{"jsonrpc":"2.0","method":"m","params":{"a":{}},}}',
      '{"jsonrpc":"2.0","method":"m","params":{"a":[}}}',
      '{"jsonrpc":"2.0","method":"m',
    ]) {
      expect(() => parseLine(text), text).toThrow(reference(text).error!);
    }
  });

  it("agrees with JSON.parse on thousands of mutated lines", () => {
    // Each mutation inserts, deletes or replaces characters at random, from JSON's structural
    // characters and a few others, in lines shaped like the fast path's and unlike it.
    const bases = [
      UPDATE,
      '{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"a\\"}"}]}}',
      '{"jsonrpc":"2.0","id":"c-1","method":"fs/read_text_file","params":{"path":"/a"}}',
      '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}',
      '{"jsonrpc":"2.0","id":-40,"result":null}',
      '{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}',
      '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}',
      '{"jsonrpc":"2.0","method":"_x/y","params":{"a":[1,{"b":"}"}],"c":null},"params":{"d":2}}',
      '{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"prompt":[]}}',
    ];
    const alphabet = ['"', "{", "}", "[", "]", ",", ":", "\\", " ", "\t", "a", "1", "\u0001", "é"];
    let seed = 20;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 20_000; i++) {
      let text = bases[random(bases.length)];
      for (let m = 1 + random(2); m > 0; m--) {
        const at = random(text.length + 1);
        const c = alphabet[random(alphabet.length)];
        const kind = random(3);
        text = text.slice(0, at) + (kind === 1 ? "" : c) + text.slice(kind === 0 ? at : at + 1);
      }
      agrees(text);
    }
  });
});

describe("parseLine, requests and answers", () => {
  it("records the id's place (and a request's params') of a compact request or answer, as a walk finds them", () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"x\\"}]"}]}}',
      '{"jsonrpc":"2.0","id":"c-1","method":"fs/read_text_file","params":{"path":"/a"}}',
      '{"jsonrpc":"2.0","id":0,"result":{"stopReason":"end_turn"}}',
      '{"jsonrpc":"2.0","id":-12,"result":[1,"}"]}',
      '{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found"}}',
      '{"jsonrpc":"2.0","id":1,"result":{} }',
    ]) {
      agrees(text);
      const layout = layoutOf(parseLine(text) as object);
      expect(layout?.id, text).toEqual(memberRange(text, "id"));
      if (text.includes('"method"')) expect(layout?.params, text).toEqual(memberRange(text, "params"));
    }
  });

  it("leaves to JSON.parse an id written last or twice, another id spelling (a leading zero is not JSON), whitespace around params", () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":1,"result":{},"id":2}',
      '{"jsonrpc":"2.0","id":1,"method":"m","params":{},"id":2}',
      '{"jsonrpc":"2.0","id":01,"result":{}}',
      '{"jsonrpc":"2.0","id":1.5,"result":{}}',
      '{"jsonrpc":"2.0","id":"a\\"b","result":{}}',
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
      '{"jsonrpc":"2.0","id":1,"method":"m","params": {}}',
    ]) {
      agrees(text);
      if (reference(text).error === undefined) expect(layoutOf(parseLine(text) as object)?.id, text).toBeUndefined();
    }
    expect((parseLine('{"jsonrpc":"2.0","id":1,"result":{},"id":2}') as { id: unknown }).id).toBe(2);
  });
});
