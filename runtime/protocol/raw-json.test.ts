import { describe, expect, it } from "vitest";
import {
  attachPieces,
  attachRaw,
  jsonOf,
  layoutOf,
  lazyRawOf,
  memberRange,
  objectMembers,
  piecesOf,
  rawParamsPieces,
  serialize,
  setLayout,
  slicePieces,
  stringEnd,
  withMember,
} from "./raw-json.js";

const parsed = (text: string) => attachRaw(JSON.parse(text) as Record<string, unknown>, text);
const rawParams = (message: object) => rawParamsPieces(message)?.join("");

describe("jsonOf", () => {
  it("writes what JSON.stringify writes: ids of every form, and any other value", () => {
    const values: unknown[] = [0, -0, 1, -1, 7.5, 1e21, 1e-7, 2 ** 53 + 2, -(2 ** 31), 0.1 + 0.2, Number.MAX_VALUE, Number.MIN_VALUE];
    for (let i = 0; i < 1000; i++) values.push((Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 40 - 20));
    values.push(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, "1", 'a"b\\c\n', "", null, true, { id: 1 }, [1, "x"]);
    for (const value of values) expect(jsonOf(value)).toBe(JSON.stringify(value));
  });
});

describe("stringEnd", () => {
  it("ends a string at its closing quote, before and past the escaped quotes it hops over, after any run of backslashes", () => {
    for (let quotes = 0; quotes <= 9; quotes++) {
      for (const tail of ["", "\\\\", "\\n", '\\\\\\"x', "\\u0041"]) {
        const literal = `"${'a\\"b'.repeat(quotes)}${tail}"`;
        const text = `{"k":${literal},"after":"\\""}`;
        expect(JSON.parse(text).k).toBe(JSON.parse(literal));
        expect(stringEnd(text, 5), literal).toBe(5 + literal.length);
      }
    }
  });
});

describe("raw JSON members", () => {
  it("finds each top-level member's value, skipping strings with brackets, quotes and escapes", () => {
    const text = ` { "a" : "x\\"}]{[" , "b":[1,{"c":"]"}], "d" : 1.50e3 ,"e":null, "k\\u0065y":true}`;
    const m = objectMembers(text)!;
    const slice = (k: string) => text.slice(...m.get(k)!);
    expect(slice("a")).toBe('"x\\"}]{["');
    expect(slice("b")).toBe('[1,{"c":"]"}]');
    expect(slice("d")).toBe("1.50e3");
    expect(slice("e")).toBe("null");
    expect(slice("key")).toBe("true");
    expect(objectMembers("[1]")).toBeNull();
  });

  it("finds one member where it lies, by its decoded name, the last of repeated ones", () => {
    const text = ` { "a" : "x\\"}]{[" , "params":[1], "b":{"params":2}, "p\\u0061rams" : {"c":"]"} }`;
    const range = (key: string, start?: number) => {
      const r = memberRange(text, key, start);
      return r && text.slice(...r);
    };
    expect(range("params")).toBe('{"c":"]"}'); // the escaped spelling comes last
    expect(range("b")).toBe('{"params":2}');
    expect(range("params", text.indexOf('{"params":2}'))).toBe("2");
    expect(range("nope")).toBeUndefined();
    expect(memberRange("[1]", "a")).toBeUndefined();
  });

  it("a string ending in escaped backslashes ends where it should", () => {
    const text = '{"a":"\\\\","b":2}';
    expect(text.slice(...objectMembers(text)!.get("b")!)).toBe("2");
  });

  it("replaces one member in place: every other byte and the key order stay", () => {
    const text = '{"params": {"n": 1.0, "big": 9007199254740993, "s": "\\u00e9\\/"}, "method":"x", "id" : 7, "jsonrpc":"2.0"}';
    const message = parsed(text);
    const moved = withMember(message, "id", "s12");
    expect(serialize(moved)).toBe(text.replace('"id" : 7', '"id" : "s12"'));
    expect(moved.id).toBe("s12");
    expect(serialize(message)).toBe(text); // the original is untouched
    expect(JSON.stringify(message)).not.toBe(text); // what re-serialising would have lost
  });

  it("falls back to JSON.stringify for messages without text or without the member", () => {
    expect(serialize(withMember({ jsonrpc: "2.0", id: 1 }, "id", 2))).toBe('{"jsonrpc":"2.0","id":2}');
    const noId = parsed('{"jsonrpc":"2.0", "method":"x"}');
    expect(serialize(withMember(noId, "id", 3))).toBe('{"jsonrpc":"2.0","method":"x","id":3}');
    expect(rawParams(parsed('{"params" : [1, 2.0]}'))).toBe("[1, 2.0]");
  });

  it("carries the text on the message itself, invisibly: copies never carry it stale", () => {
    const text = '{"jsonrpc":"2.0", "id": 1, "method":"x"}';
    const message = parsed(text);
    // A spread or Object.assign copy (made to change a member) must not be written as the original's text.
    const spread = { ...message, method: "y" };
    expect(serialize(spread)).toBe('{"jsonrpc":"2.0","id":1,"method":"y"}');
    expect(serialize(Object.assign({}, message, { id: 2 }))).toBe('{"jsonrpc":"2.0","id":2,"method":"x"}');
    // Nothing to see for keys, stringify or deep equality; the text still serialises as it arrived.
    expect(Object.keys(message)).toEqual(["jsonrpc", "id", "method"]);
    expect(JSON.stringify(message)).toBe('{"jsonrpc":"2.0","id":1,"method":"x"}');
    expect(message).toStrictEqual({ jsonrpc: "2.0", id: 1, method: "x" });
    expect(serialize(message)).toBe(text);
  });

  it("a message given a new id on every hop keeps every other byte, whatever its spelling", () => {
    const texts = [
      '{"jsonrpc":"2.0","id":7,"method":"m","params":{"id":"inner","t":"a\\"b\\\\"}}',
      '{ "params" : [1, 2.0] , "id" : "x", "jsonrpc":"2.0", "method":"m" }',
      // repeated, or spelled with an escape: the last one is the id every reader sees
      '{"jsonrpc":"2.0","id":1,"method":"m","id":2}',
      '{"jsonrpc":"2.0","id":1,"method":"m","\\u0069d":2,"params":{}}',
    ];
    for (const text of texts) {
      let message = parsed(text);
      for (const id of [10, "a-11", 12345678]) {
        message = withMember(message, "id", id);
        const written = serialize(message);
        expect(JSON.parse(written), written).toEqual({ ...JSON.parse(text), id });
        const members = objectMembers(written)!;
        // only the id's value changed: the text outside it is the original's
        const [start, end] = members.get("id")!;
        const [oStart, oEnd] = objectMembers(text)!.get("id")!;
        expect(written.slice(0, start) + written.slice(end)).toBe(text.slice(0, oStart) + text.slice(oEnd));
        if ("params" in message) expect(rawParams(message)).toBe(text.slice(...objectMembers(text)!.get("params")!));
      }
    }
  });

  it("a member set again on a copy whose text is not built yet is spliced once, from the original's text", () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":7,"method":"m","params":{"id":"inner"}}',
      '{ "params" : [1, 2.0] , "id" : "x", "jsonrpc":"2.0", "method":"m" }',
      '{"jsonrpc":"2.0","id":1,"method":"m","\\u0069d":2,"result":{}}',
    ]) {
      const [oStart, oEnd] = objectMembers(text)!.get("id")!;
      const mid = withMember(withMember(parsed(text), "id", "a-1"), "id", 22);
      const last = withMember(mid, "id", "b-3");
      const written = serialize(last);
      expect(written).toBe(`${text.slice(0, oStart)}"b-3"${text.slice(oEnd)}`);
      // The copies in between were never written: their texts were not built.
      expect(lazyRawOf(mid)?.text).toBeUndefined();
      // Another member on top of them: spliced from the copy, which is then built.
      const edited = withMember(last, "method", "n");
      expect(JSON.parse(serialize(edited))).toEqual({ ...JSON.parse(text), id: "b-3", method: "n" });
      expect(serialize(mid)).toBe(`${text.slice(0, oStart)}22${text.slice(oEnd)}`);
    }
  });

  it("a recorded layout is where splices go, and follows each splice", () => {
    const text = '{"jsonrpc":"2.0","id":5,"method":"m","params":{"a":1}}';
    const message = parsed(text);
    setLayout(message, { id: [22, 23], params: [46, 53] });
    const moved = withMember(message, "id", "longer-id");
    expect(serialize(moved)).toBe('{"jsonrpc":"2.0","id":"longer-id","method":"m","params":{"a":1}}');
    expect(layoutOf(moved)).toMatchObject({ id: [22, 33], params: [56, 63] });
    expect(rawParams(withMember(moved, "id", 1))).toBe('{"a":1}');
    // A wrong layout is used as given (it is trusted, so only the scan and Cordon's own writing set one).
    const lying = parsed(text);
    setLayout(lying, { id: [46, 53] });
    expect(serialize(withMember(lying, "id", 9))).toBe('{"jsonrpc":"2.0","id":5,"method":"m","params":9}');
  });

  it("the walk that finds params records its members, which follow each splice and are dropped with a new params", () => {
    const text = '{"method":"m","params":{ "a" : [1,"]"] ,"b\\u0022":{"c":2}, "a":3 },"id":5}';
    const names = (message: object) => {
      const text = serialize(message); // a splice's layout is known once its text is built
      const members = layoutOf(message)!.paramsMembers!;
      const at = (i: number) => `${text.slice(members[i], members[i + 1])}=${text.slice(members[i + 2], members[i + 3])}`;
      return Array.from({ length: members.length / 4 }, (_, i) => at(4 * i));
    };
    const message = parsed(text);
    expect(rawParams(message)).toBe('{ "a" : [1,"]"] ,"b\\u0022":{"c":2}, "a":3 }');
    const all = ['"a"=[1,"]"]', '"b\\u0022"={"c":2}', '"a"=3'];
    expect(names(message)).toEqual(all); // every member, repeated names too, as written
    const moved = withMember(message, "id", "a-longer-id"); // after params: they stay
    expect(names(moved)).toEqual(all);
    const reordered = parsed('{"id":5,"method":"m","params":{"a":1}}');
    rawParams(reordered);
    expect(names(withMember(reordered, "id", "a-longer-id"))).toEqual(['"a"=1']); // before params: they move
    expect(layoutOf(withMember(withMember(message, "params", { x: 1 }), "id", 1))?.paramsMembers).toBeUndefined();
  });
});

describe("long texts kept as the pieces they were built from", () => {
  const long = (n: number) =>
    `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":${JSON.stringify('x"ü\n'.repeat(n))}}]}}`;

  it("slicePieces takes the same characters as slicing their concatenation, wherever the cuts fall", () => {
    const pieces = ["ab", "", "cdefg", "h", "ijklmnop"];
    const whole = pieces.join("");
    for (let start = 0; start <= whole.length; start++) {
      for (let end = start; end <= whole.length; end++) expect(slicePieces(pieces, start, end).join("")).toBe(whole.slice(start, end));
    }
  });

  it("a new id spliced into a long text is kept as pieces whose concatenation is the text; a short one is one string", () => {
    const text = long(10_000);
    const message = attachRaw(JSON.parse(text), text);
    const copy = withMember(message, "id", 42);
    const pieces = piecesOf(copy);
    expect(pieces).toBeDefined();
    expect(pieces!.join("")).toBe(text.replace('"id":7', '"id":42'));
    expect(serialize(copy)).toBe(pieces!.join(""));
    // Spliced again (the next hop's id): the pieces of the pieces, never the text made whole.
    const again = withMember(copy, "id", "x-9");
    expect(piecesOf(again)!.join("")).toBe(text.replace('"id":7', '"id":"x-9"'));
    expect(piecesOf(again)!.length).toBe(pieces!.length);
    const short = long(10);
    expect(piecesOf(withMember(attachRaw(JSON.parse(short), short), "id", 1))).toBeUndefined();
  });

  it("attachPieces keeps a long text as pieces and a short one as one flat text, with its layout", () => {
    const head = '{"jsonrpc":"2.0","id":1,"method":"m","params":';
    const params = JSON.stringify({ text: "y".repeat(20_000) });
    const m = attachPieces({}, [head, params, "}"], { params: [head.length, head.length + params.length] });
    expect(piecesOf(m)).toEqual([head, params, "}"]);
    expect(serialize(m)).toBe(`${head}${params}}`);
    expect(layoutOf(m)?.params).toEqual([head.length, head.length + params.length]);
    expect(piecesOf(attachPieces({}, [head, "{}", "}"]))).toBeUndefined();
  });
});
