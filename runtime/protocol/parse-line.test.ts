import { describe, expect, it } from "vitest";
import { mutate, seeded } from "../../test/helpers/mutation.js";
import { objectAlone, parseLine } from "./parse-line.js";
import {
  attachRaw,
  CompactNotification,
  layoutOf,
  memberRange,
  plainCopy,
  rawOf,
  rawParamsPieces,
  UnreadNotification,
  withMember,
} from "./raw-json.js";

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
  if (value instanceof CompactNotification || value instanceof UnreadNotification) rawParamsPieces(value); // the place read off the text
  // Any place known without a walk is the one a walk finds (the last member of its name).
  const layout = layoutOf(value);
  if (layout?.params !== undefined) expect(layout.params, text).toEqual(memberRange(text, "params"));
  if (layout?.id !== undefined) expect(layout.id, text).toEqual(memberRange(text, "id"));
}

/** 20,000 texts, each one of `bases` mutated (`mutate`), the same ones for the same `seed`. */
function* mutated(bases: readonly string[], alphabet: readonly string[], seed: number): Generator<string> {
  const random = seeded(seed);
  for (let i = 0; i < 20_000; i++) yield mutate(bases[random(bases.length)], alphabet, random);
}

describe("parseLine", () => {
  it("reads a streamed update as JSON.parse does, its params' place known without a walk", () => {
    const message = parseLine(UPDATE) as { method: string; params: unknown };
    expect(message).toBeInstanceOf(UnreadNotification);
    // Its params are checked, not parsed, when the line is read; the first read parses them.
    expect((message as UnreadNotification).depthChecked).toBe(true);
    expect(message.params).toEqual(JSON.parse(UPDATE).params);
    expect(message.params).toBe(message.params); // parsed once
    expect(plainCopy(message)).toEqual(JSON.parse(UPDATE));
    expect(Object.keys(plainCopy(message))).toEqual(["jsonrpc", "method", "params"]);
    expect(JSON.stringify(message)).toBe(JSON.stringify(JSON.parse(UPDATE)));
    expect(message.method).toBe("session/update");
    expect(rawParamsPieces(message)!.join("")).toBe(JSON.stringify(JSON.parse(UPDATE).params));
    const range = layoutOf(message)!.params!;
    expect(UPDATE.slice(...range)).toBe(JSON.stringify(JSON.parse(UPDATE).params));
    expect(rawParamsPieces(message)!.join("")).toBe(UPDATE.slice(...range));
  });

  it("parses an update's params when they are first read, and a copy or a write keeps them", () => {
    const read = (text: string) => parseLine(text) as UnreadNotification;
    // A spread would leave the accessor behind: the copies Cordon makes carry params as a member.
    const copy = withMember(read(UPDATE), "_meta", { hop: 1 }) as unknown as { params: unknown };
    expect(Object.keys(copy)).toEqual(["jsonrpc", "method", "params", "_meta"]);
    expect(copy.params).toEqual(JSON.parse(UPDATE).params);
    expect(rawOf(copy)).toBe(`${UPDATE.slice(0, -1)},"_meta":{"hop":1}}`);
    // A value set replaces the text's, and is no longer known to nest within the limit.
    const written = read(UPDATE);
    written.params = { replaced: true };
    expect(written.params).toEqual({ replaced: true });
    expect(written.depthChecked).toBe(false);
    // Params nested past the limit are not taken unread: parsed as before, left for the nesting rule to refuse.
    const deep = `{"jsonrpc":"2.0","method":"m","params":{"a":${"[".repeat(200)}${"]".repeat(200)}}}`;
    const parsed = parseLine(deep) as CompactNotification;
    expect(parsed).toBeInstanceOf(CompactNotification);
    expect(Object.keys(parsed)).toEqual(["jsonrpc", "method", "params"]);
    expect(JSON.stringify(parsed.params)).toBe(JSON.stringify(JSON.parse(deep).params));
    // What is not JSON is refused with JSON.parse's own error.
    expect(() => parseLine('{"jsonrpc":"2.0","method":"m","params":{"a":01}}')).toThrow(SyntaxError);
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
      expect(parseLine(text), text).not.toBeInstanceOf(UnreadNotification);
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
    for (const text of mutated(bases, alphabet, 20)) agrees(text);
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

/** params' members as the layout walk finds them (raw-json.ts `layoutFor`), offsets into `params`. */
function walkedMembers(params: string): readonly number[] | undefined {
  const line = `{"params":${params}}`;
  const message = attachRaw(JSON.parse(line), line);
  rawParamsPieces(message);
  return layoutOf(message)!.paramsMembers?.map((offset) => offset - '{"params":'.length);
}

/** `objectAlone` reads `text` as `JSON.parse` does, with the members a walk finds, or leaves it to `JSON.parse`; whether it read it. */
function readsAlike(text: string): boolean {
  const members: number[] = [];
  const value = objectAlone(text, 0, text.length, members);
  if (typeof value !== "object") return false;
  // Never a text JSON.parse refuses; the same members in the same order, an ordinary object.
  const expected = JSON.parse(text);
  expect(JSON.stringify(value), text).toBe(JSON.stringify(expected));
  expect(Object.getPrototypeOf(value), text).toBe(Object.prototype);
  expect(Object.keys(value), text).toEqual(Object.keys(expected));
  expect(members, text).toEqual(walkedMembers(text));
  return true;
}

describe("objectAlone: a long request's params read member by member", () => {
  // JSON text dense with escapes (an escaped quote every six units: stringEnd leaves its hops for the pattern).
  const long = 'x\\"\u00fc\\n'.repeat(1200);

  it("reads a prompt as JSON.parse does and records its members, whatever member ends it", () => {
    for (const text of [
      `{"sessionId":"s1","prompt":[{"type":"text","text":"${long}"}]}`,
      `{"sessionId":"s1","prompt":[{"type":"text","text":"${long}"}],"_meta":{"k":[1,"]"]}}`,
      `{"prompt":[{"type":"text","text":"${long}"}],"sessionId":"s1"}`,
      `{"a":1,"b":true,"c":null,"d":-2.5e3,"e":"${long}"}`,
      `{"a":"${long}","b":[],"c":{}}`,
      `{"p\\u0072ompt":[1],"prompt":[2],"x":"${long}","prompt":[3]}`,
      `{"7":1,"a":2,"1":3}`,
      '{"a":[1],"b":[2],"c":[3]}', // the one parse to the end tried at "a" fails; the rest is walked
      `{${Array.from({ length: 31 }, (_, i) => `"m${i}":${i},`).join("")}"last":[]}`, // as many members as are read one by one
      '{"a":{"__proto__":1}}',
    ]) {
      expect(readsAlike(text), text).toBe(true);
    }
  });

  it("leaves to JSON.parse a member named __proto__, a blank between tokens, a name with a raw control character, what is not JSON, many members", () => {
    for (const text of [
      '{"__proto__":{"x":1},"a":[]}',
      '{"a":[],"__proto__":[]}',
      '{"a": []}',
      '{"a":[] ,"b":1}',
      '{"a":1 }',
      '{ "a":1}',
      '{"a\u0001":1,"b":[]}',
      "{}",
      '{"a":1,}',
      '{"a":"x":"b":[1]}', // what follows a member is a comma, else it is not JSON
      '{"a":"x"}"b":[1]}',
      `{${Array.from({ length: 32 }, (_, i) => `"m${i}":${i},`).join("")}"last":[]}`, // more members than are read one by one
    ]) {
      expect(readsAlike(text), text).toBe(false);
    }
  });

  it("agrees with JSON.parse on thousands of mutated objects, or leaves them to it", () => {
    const bases = [
      `{"sessionId":"s1","prompt":[{"type":"text","text":"${long.slice(0, 60)}"}],"_meta":{"k":1}}`,
      '{"a":1,"b":"x\\"y","c":[1,{"d":"}"}],"e":null,"f":true,"g":-0.5}',
      '{"a":"1","a":[2],"b":{"a":3},"\\u0061":4}',
      '{"x":[[],{}],"y":"]","z":{"w":"\\\\"}}',
    ];
    const alphabet = ['"', "{", "}", "[", "]", ",", ":", "\\", " ", "a", "1", "e", "-", "\u0001", "é"];
    let read = 0;
    for (const text of mutated(bases, alphabet, 21)) if (readsAlike(text)) read++; // else left to JSON.parse, which refuses it or reads it whole
    expect(read).toBeGreaterThan(2_000);
  });

  it("agrees with JSON.parse on mutated long request lines, and records the members a walk finds", () => {
    // The structure is mutated, then "@" becomes the long text (a mutation that took it leaves a short line).
    const bases = [
      '{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"@"}]}}',
      '{"jsonrpc":"2.0","id":"r","method":"x/y","params":{"a":[1,{"b":"}"}],"t":"@","c":{"d":[]},"a":null}}',
      '{"jsonrpc":"2.0","id":4,"method":"x/y","params":{"p\\u0072ompt":[],"prompt":["@"],"_meta":{}}}',
    ];
    const alphabet = ['"', "{", "}", "[", "]", ",", ":", "\\", " ", "a", "1", "_", "\u0001"];
    const head = long.slice(0, 4200);
    let recorded = 0;
    for (const mutation of mutated(bases, alphabet, 22)) {
      const text = mutation.replace("@", head);
      agrees(text);
      let value: unknown;
      try {
        value = parseLine(text);
      } catch {
        continue;
      }
      const layout = typeof value === "object" && value !== null ? layoutOf(value) : undefined;
      if (layout?.paramsMembers === undefined) continue;
      recorded++;
      const [from, to] = layout.params!;
      expect(
        layout.paramsMembers.map((offset) => offset - from),
        text,
      ).toEqual(walkedMembers(text.slice(from, to)));
    }
    expect(recorded).toBeGreaterThan(1_000);
  });

  it("gives a long prompt line the members of its params, so a proxy's edit in it walks no text", () => {
    const params = `{"sessionId":"s1","prompt":[{"type":"text","text":"${long}"}]}`;
    const line = `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":${params}}`;
    agrees(line);
    const layout = layoutOf(parseLine(line) as object)!;
    const from = layout.params![0];
    expect(layout.paramsMembers!.map((offset) => offset - from)).toEqual(walkedMembers(params));
    // A short one is parsed whole: walking its params costs less than parsing its members one by one.
    expect(layoutOf(parseLine('{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":[1]}}') as object)!.paramsMembers).toBeUndefined();
  });
});
