import { describe, expect, it } from "vitest";
import { iJsonViolation, iJsonViolationOf, judgedWithin, readerKey } from "./i-json.js";
import { attachRaw, memberRange, type Range, serialize, type TextLayout } from "./raw-json.js";

/** The violation's rule and detail, after checking that JSON.parse accepts the text (the scanner's precondition). */
function verdict(text: string, options?: { maxDepth?: number }): { rule: string; detail: string } | null {
  JSON.parse(text);
  const v = iJsonViolation(text, options);
  return v && { rule: v.rule, detail: v.detail };
}

const read = (rest: string) => `{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/tmp/a"${rest}}}`;

describe("iJsonViolation: honest messages", () => {
  it("passes ordinary ACP messages, and the text is forwarded untouched", () => {
    const texts = [
      read(""),
      `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a \\"quoted\\" \\\\ line\\nnext \\u00e9 \\ud83d\\ude00 😀"}}}}`,
      `{ "jsonrpc" : "2.0" , "id" : "x" , "result" : { "content" : [ 1 , {"a":[{"a":1},{"a":2}]} , "id" , "ID" ] } }`,
      `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no","data":{"ID":1,"Method":"x","params":{"Params":1}}}}`,
      // Below the envelope levels, a protocol-looking name is data.
      `{"jsonrpc":"2.0","method":"_x/y","params":{"ID":1,"Method":"x","\\u0072esult":"y"}}`,
      `{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"_x/y","params":{"ID":1,"Method":"x"}}}`,
      `{"jsonrpc":"2.0","id":7,"method":"_x/y","params":{"a":{"b":1},"c":{"b":2},"list":[{"k":1},{"k":2}]}}`,
      `[1,"a",{"a":1}]`,
      `"just a string"`,
      `{}`,
    ];
    for (const text of texts) expect(verdict(text), text).toBeNull();
    const message = attachRaw(JSON.parse(texts[1]), texts[1]);
    expect(iJsonViolationOf(message)).toBeNull();
    expect(serialize(message)).toBe(texts[1]);
  });

  it("has nothing to check in a message Cordon built (no text)", () => {
    expect(iJsonViolationOf({ jsonrpc: "2.0", method: "x" })).toBeNull();
    expect(iJsonViolationOf("x")).toBeNull();
  });
});

describe("iJsonViolation: duplicate names", () => {
  it("refuses a repeated method at the top level", () => {
    expect(verdict(`{"jsonrpc":"2.0","method":"_x/y","method":"fs/read_text_file"}`)).toEqual({
      rule: "duplicate-name",
      detail: 'member "method" appears twice in the top level',
    });
  });

  it("refuses a repeated name at depth, naming the path", () => {
    expect(verdict(read(`,"path":"/home/u/.ssh/id_ed25519"`))?.detail).toBe('member "path" appears twice in params');
    expect(verdict(`{"a":[0,{"b":{"c":1,"c":2}}]}`)?.detail).toBe('member "c" appears twice in a[1].b');
    expect(verdict(`{"a b":{"x":1,"x":1}}`)?.detail).toBe('member "x" appears twice in ["a b"]');
  });

  it("decodes escapes before comparing", () => {
    expect(verdict(read(`,"p\\u0061th":"/etc/shadow"`))?.detail).toBe('member "path" appears twice in params');
    expect(verdict(`{"a\\/b":1,"a/b":2}`)?.detail).toBe('member "a/b" appears twice in the top level');
  });

  it("refuses names a case-insensitive reader takes for one (last wins in Go), at any depth", () => {
    expect(verdict(`{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"cancelled","Outcome":"selected"}}}`)?.detail).toBe(
      'members "outcome" and "Outcome" in result.outcome are one name to a reader that ignores case',
    );
    expect(verdict(read(`,"PATH":"/etc/shadow"`))?.rule).toBe("duplicate-name");
    // Go's EqualFold also folds the Kelvin sign with k and the long s with s.
    expect(verdict(`{"params":{"kind":"reject_once","\u212Aind":"allow_once"}}`)?.rule).toBe("duplicate-name");
    expect(verdict(`{"a":{"sessionId":"s","ſessionId":"t"}}`)?.rule).toBe("duplicate-name");
  });

  it("finds duplicates in large objects too (past the linear look)", () => {
    const members = Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`);
    expect(verdict(`{"a":{${members.join(",")}}}`)).toBeNull();
    expect(verdict(`{"a":{${members.join(",")},"K3":1}}`)?.detail).toBe(
      'members "k3" and "K3" in a are one name to a reader that ignores case',
    );
    expect(verdict(`{"a":{${members.join(",")},"k39":1}}`)?.detail).toBe('member "k39" appears twice in a');
  });

  it("keeps sibling objects apart", () => {
    expect(verdict(`{"a":{"x":1},"b":{"x":1},"x":{"a":1}}`)).toBeNull();
  });
});

describe("iJsonViolation: protocol-key spellings at envelope levels", () => {
  const spellings = ['"Method"', '"METHOD"', '"\\u006dethod"', '"m\\u0065thod"', '"\\u004dethod"', '"method\\u0000"'];

  it("refuses any other spelling of method beside the real one (each reader picks another)", () => {
    for (const key of spellings) {
      const text = `{"jsonrpc":"2.0","method":"_x/y",${key}:"fs/read_text_file","params":{}}`;
      expect(verdict(text)?.rule, key).toMatch(/duplicate-name|protocol-key-spelling/);
    }
  });

  it("refuses a lone near-spelling too: a reader that folds case or ignores escapes finds a method JSON.parse does not", () => {
    for (const key of spellings) {
      const text = `{"jsonrpc":"2.0",${key}:"fs/read_text_file","params":{}}`;
      const v = verdict(text);
      expect(v?.rule, key).toBe("protocol-key-spelling");
      expect(v?.detail, key).toBe(
        `member ${key} in the top level is not spelled as the protocol key "method", but a reader may take it for one`,
      );
    }
  });

  it("covers every protocol key", () => {
    for (const key of ["JSONRPC", "Id", "Params", "RESULT", "Error", "i\\u0064", "jsonrpc\\u0000x"]) {
      expect(verdict(`{${JSON.stringify("x")}:1,"${key}":1}`)?.rule, key).toBe("protocol-key-spelling");
    }
    expect(verdict(`{"iD":1}`)?.detail).toContain('the protocol key "id"');
  });

  it("checks the message inside a proxy/successor envelope (either dialect), whatever the member order", () => {
    for (const method of ["proxy/successor", "_proxy/successor", "proxy\\/successor"]) {
      const inner = `{"method":"_x/y","Id":"forged","params":{}}`;
      expect(verdict(`{"jsonrpc":"2.0","method":"${method}","params":${inner}}`)?.rule, method).toBe("protocol-key-spelling");
      expect(verdict(`{"jsonrpc":"2.0","params":${inner},"method":"${method}"}`)?.detail, method).toMatch(
        /^member "Id" in params is not spelled as the protocol key "id".*\(the message inside a _?proxy\/successor envelope\)$/,
      );
    }
    // Not an envelope: params is data.
    expect(verdict(`{"jsonrpc":"2.0","method":"_x/successor","params":{"Method":1}}`)).toBeNull();
  });
});

describe("iJsonViolation: the names Cordon's rules read, where they read them", () => {
  it("refuses a lone near-spelling a Go peer would act on but the rules never saw", () => {
    // A permission answer the permission rule reads as no selection, and a Go agent as "allow".
    expect(verdict(`{"jsonrpc":"2.0","id":3,"result":{"outcome":{"outcome":"selected","OptionId":"allow"}}}`)).toEqual({
      rule: "protocol-key-spelling",
      detail:
        'member "OptionId" in result.outcome is not spelled "optionId", which Cordon\'s rules read there, but a reader may take it for that',
    });
    expect(verdict(`{"jsonrpc":"2.0","id":3,"result":{"Outcome":{"outcome":"selected","optionId":"allow"}}}`)?.detail).toMatch(
      /^member "Outcome" in result is not spelled "outcome"/,
    );
    const server = (member: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[{"name":"x","${member}":"/bin/sh","args":[],"env":[]}]}}`;
    expect(verdict(server("Command"))?.detail).toMatch(/^member "Command" in params\.mcpServers\[0\] is not spelled "command"/);
    expect(verdict(server("command"))).toBeNull();
    const inner = `{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/","mcpServers":[],"MCPServers":[1]}}}`;
    expect(verdict(inner)?.rule).toBe("duplicate-name");
    expect(verdict(`{"method":"fs/read_text_file","params":{"sessionId":"s","PATH":"/etc/shadow"}}`)?.detail).toMatch(/not spelled "path"/);
  });

  it("leaves the same names alone elsewhere: tool input and other data keep their spelling", () => {
    const update = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","rawInput":{"Path":"/x","Command":"ls","OptionId":1}}}}`;
    expect(verdict(update)).toBeNull();
    expect(verdict(`{"jsonrpc":"2.0","id":1,"result":{"content":{"Outcome":1},"items":[{"OptionId":1}]}}`)).toBeNull();
  });
});

describe("what an edit put in place needs (components/edited-forward.ts)", () => {
  it("judgedWithin: the places at or above a name the rules read, in a plain call and in an envelope", () => {
    for (const shape of [
      "params",
      "params.mcpServers",
      "params.mcpServers[]",
      "params.options[]",
      "params.params.mcpServers[]",
      "result.outcome",
    ]) {
      expect(judgedWithin(shape), shape).toBe(true);
    }
    for (const shape of [
      "params.prompt[]",
      "params.update.content.text",
      "params.mcpServers[].command",
      "params.mcpServersX",
      "params.sessionId",
    ]) {
      expect(judgedWithin(shape), shape).toBe(false);
    }
  });

  it("readerKey: names one to a reader that folds case (as Go does) or stops at a NUL share a key", () => {
    expect(readerKey("Prompt")).toBe(readerKey("prompt"));
    expect(readerKey("prompt\u0000x")).toBe(readerKey("prompt"));
    expect(readerKey("\u017fession")).toBe(readerKey("session")); // the long s
    expect(readerKey("\u212aey")).toBe(readerKey("key")); // the Kelvin sign
    expect(readerKey("prompts")).not.toBe(readerKey("prompt"));
  });
});

describe("iJsonViolation: a message is a request, a notification or an answer", () => {
  it("refuses method beside result or error, and result beside error", () => {
    expect(verdict(`{"jsonrpc":"2.0","id":7,"method":"_x/y","result":{"stopReason":"end_turn"}}`)).toEqual({
      rule: "mixed-message",
      detail: 'the top level has "method" and "result": a reader may take it for a request or an answer',
    });
    expect(verdict(`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"no"},"result":{}}`)?.rule).toBe("mixed-message");
    expect(verdict(`{"jsonrpc":"2.0","method":"_x/y","params":{"result":1,"error":2,"method":3}}`)).toBeNull();
  });
});

describe("iJsonViolation: lone surrogates", () => {
  it("refuses escaped lone surrogates, in values and names", () => {
    expect(verdict(`{"a":"x\\ud800"}`)).toEqual({
      rule: "lone-surrogate",
      detail: "an escaped high surrogate \\uD800 without its low half in the value at a",
    });
    expect(verdict(`{"a":["ok","\\udc00y"]}`)?.detail).toBe("an escaped low surrogate \\uDC00 without its high half in the value at a[1]");
    expect(verdict(`{"\\udbff":1}`)?.detail).toBe(
      "an escaped high surrogate \\uDBFF without its low half in a member name in the top level",
    );
    expect(verdict(`{"a":"\\ud800\\u0041"}`)?.rule).toBe("lone-surrogate");
    expect(verdict(`{"a":"\\ud800\\n"}`)?.rule).toBe("lone-surrogate");
  });

  it("refuses raw lone surrogates, and a pair split between a raw and an escaped half", () => {
    expect(verdict(`{"a":"x\ud800"}`)).toEqual({ rule: "lone-surrogate", detail: "a lone surrogate (U+D800) at offset 7" });
    expect(verdict(`{"a":"\udfff"}`)?.rule).toBe("lone-surrogate");
    expect(verdict(`{"a":"\ud83d\\ude00"}`)?.rule).toBe("lone-surrogate");
    expect(verdict(`{"a":"\\ud83d\ude00"}`)?.rule).toBe("lone-surrogate");
  });

  it("is not fooled by an escaped backslash before u", () => {
    expect(verdict(`{"a":"\\\\ud800"}`)).toBeNull();
    expect(verdict(`{"a":"\\\\\\ud800"}`)?.rule).toBe("lone-surrogate");
  });

  it("finds an escaped surrogate after strings with other escapes, wherever the text's first \\u escape is", () => {
    expect(verdict(`{"a":"x\\ny","b":"\\\\u0041 \\"q\\"","c":"z\\ud800"}`)?.detail).toBe(
      "an escaped high surrogate \\uD800 without its low half in the value at c",
    );
    expect(verdict(`{"a":"\\u00e9\\t","b":"\\n","c":["\\udc00"]}`)?.detail).toBe(
      "an escaped low surrogate \\uDC00 without its high half in the value at c[0]",
    );
    expect(verdict(`{"a":"\\\\\\\\ud800\\n","b":"\\\\u"}`)).toBeNull(); // escaped backslashes, then text
    expect(verdict(`{"a\\n":1,"p\\u0061th":2,"path":3}`)?.rule).toBe("duplicate-name");
  });

  it("agrees with the strings JSON.parse decodes, on random texts of escapes (a string is refused exactly when one decodes ill-formed)", () => {
    const pieces = [
      "a",
      "é",
      "😀",
      "\\n",
      "\\\\",
      '\\"',
      "\\/",
      "\\u0041",
      "\\u00E9",
      "\\ud83d\\ude00",
      "\\ud800",
      "\\uDC00",
      "\\\\ud800",
      "\\\\u",
    ];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    // Up to 11 pieces: past the few escaped quotes a string's end is hopped to (raw-json.ts `closingQuote`).
    const literal = () => `"${Array.from({ length: random(12) }, () => pieces[random(pieces.length)]).join("")}"`;
    let refused = 0;
    for (let round = 0; round < 2000; round++) {
      const members = Array.from(
        { length: 1 + random(4) },
        (_, k) => `"k${k}":${random(3) === 0 ? `[${literal()},${literal()}]` : literal()}`,
      );
      const text = `{${members.join(",")}}`;
      const strings: string[] = [];
      const walk = (v: unknown): void => {
        if (typeof v === "string") strings.push(v);
        else if (Array.isArray(v)) v.forEach(walk);
        else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) strings.push(k), walk(x);
      };
      walk(JSON.parse(text));
      const illFormed = strings.some((x) => !(x as unknown as { isWellFormed(): boolean }).isWellFormed());
      expect(iJsonViolation(text)?.rule ?? null, text).toBe(illFormed ? "lone-surrogate" : null);
      if (illFormed) refused++;
    }
    expect(refused).toBeGreaterThan(200); // both outcomes are exercised
  });
});

describe("iJsonViolation: the nesting bound in the same pass", () => {
  it("refuses one level past maxDepth, through arrays and objects, and scans 20,000 levels without recursion", () => {
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
    expect(verdict(nested(128), { maxDepth: 128 })).toBeNull();
    expect(verdict(nested(129), { maxDepth: 128 })?.rule).toBe("nesting");
    expect(verdict(`{"a":{"b":[{}]}}`, { maxDepth: 3 })).toEqual({ rule: "nesting", detail: "nests deeper than 3 levels at a.b[0]" });
    expect(verdict(nested(20_000))).toBeNull();
    expect(verdict(`{"a":${nested(20_000)},"a":1}`)?.rule).toBe("duplicate-name");
  });
});

describe("iJsonViolation: the layout recorded in the same pass", () => {
  it("records where the top level's id and params and an envelope's inner method and params lie", () => {
    const text =
      '{ "jsonrpc":"2.0", "id" : 12 ,"method":"proxy/successor","params": {"method" : "fs/read_text_file", "params":{"path":"a\\"}","n":[1,{"params":2}]} , "_meta":{} } }';
    const layout: TextLayout = {};
    expect(iJsonViolation(text, { layout })).toBeNull();
    const at = (r: Range | undefined) => r && text.slice(...r);
    expect(at(layout.id)).toBe("12");
    expect(at(layout.params)).toBe('{"method" : "fs/read_text_file", "params":{"path":"a\\"}","n":[1,{"params":2}]} , "_meta":{} }');
    expect(at(layout.innerMethod)).toBe('"fs/read_text_file"');
    expect(at(layout.innerParams)).toBe('{"path":"a\\"}","n":[1,{"params":2}]}');
    // the last member of an object ends at its closing brace
    const last: TextLayout = {};
    iJsonViolation('{"jsonrpc":"2.0","params":[1],"id":"x"}', { layout: last });
    expect(last).toMatchObject({ id: [35, 38], params: [26, 29] });
  });
});

describe("iJsonViolation: the recorded layout is where a walk of the text finds the same members", () => {
  // Splices trust the layout (raw-json.ts): were it ever off, the next peer would read other text
  // than the rules judged. Every spelling JSON allows around the members, compared with a walk.
  const pad = ["", " ", "\n\t ", "  \r\n"];
  const values = [
    '"a\\"},{\\"id\\":1"',
    '[1,{"id":2,"params":[]}]',
    "12.5e-3",
    "null",
    '{"method":"x","params":{"params":1}}',
    '"\\u0069d"',
  ];
  it("for every arrangement of id, method, params and extra members, with any whitespace", () => {
    let n = 0;
    for (let seed = 0; seed < 400; seed++) {
      const ws = () => pad[(seed * 7 + n++) % pad.length];
      const value = () => values[(seed * 13 + n++) % values.length];
      const inner = [`"method":${ws()}"fs/read_text_file"`, `"params":${ws()}{"path":${ws()}${value()}}`, `"_meta":${value()}`];
      const innerText = `{${ws()}${inner
        .slice(seed % 3)
        .concat(inner.slice(0, seed % 3))
        .join(`${ws()},${ws()}`)}${ws()}}`;
      const top = [
        `"jsonrpc":"2.0"`,
        `"id":${ws()}${seed % 2 ? seed : `"s${seed}"`}`,
        `"method":"proxy/successor"`,
        `"params":${ws()}${innerText}`,
      ];
      const text = `${ws()}{${ws()}${top
        .slice(seed % 4)
        .concat(top.slice(0, seed % 4))
        .join(`${ws()},${ws()}`)}${ws()}}${ws()}`;
      JSON.parse(text);
      const layout: TextLayout = {};
      expect(iJsonViolation(text, { layout }), text).toBeNull();
      const outer = memberRange(text, "params")!;
      expect(layout.id, text).toEqual(memberRange(text, "id"));
      expect(layout.params, text).toEqual(outer);
      expect(layout.innerMethod, text).toEqual(memberRange(text, "method", outer[0]));
      expect(layout.innerParams, text).toEqual(memberRange(text, "params", outer[0]));
    }
  });
});
