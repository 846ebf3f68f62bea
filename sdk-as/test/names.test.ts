import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { loadFixture, proxyUnderTest } from "./harness.js";

let hooks: LoadedComponent;
beforeAll(async () => {
  hooks = await loadFixture("hooks");
});

/** An agent-side `session/update` whose params are written as given (escapes and all). */
const rawUpdate = (params: string) =>
  `{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":${params}}}`;

describe("member names are compared after decoding escapes", () => {
  it("finds a chunk's text behind escaped names, as JSON.parse reads them", async () => {
    const p = await proxyUnderTest(hooks);
    const out = p.deliver(
      rawUpdate(
        '{"s\\u0065ssionId":"s 1","update":{"sessionUpdate":"agent_message_chunk","c\\u006fntent":{"t\\u0079pe":"text","t\\u0065xt":"twice"}}}',
      ),
    );
    expect(out).toHaveLength(1);
    expect(out[0].params.update.content.text).toBe("one+two");
    expect(p.logs.at(-1)!.message).toBe("after edits: kind=agent_message_chunk session=s 1 text=one+two");
  });

  // Names are skipped four units at a time up to a quote or backslash (assembly/json.ts `nameEnd`):
  // an escape past the first four units, or in the last ones before the quote, is still seen.
  it("routes a request whose method member has an escape past its first four units", async () => {
    const p = await proxyUnderTest(hooks);
    for (const name of ["metho\\u0064", "meth\\u006fd", "\\u006dethod"]) {
      const [answer] = p.deliver(`{"jsonrpc":"2.0","id":7,"${name}":"_test/stats"}`);
      expect(answer).toEqual({ jsonrpc: "2.0", id: 7, result: { pending: 0, open: 1 } });
    }
  });

  it("routes a request whose method member is spelled with escapes", async () => {
    const p = await proxyUnderTest(hooks);
    const [answer] = p.deliver('{"jsonrpc":"2.0","id":7,"\\u006dethod":"_test/stats"}');
    expect(answer).toEqual({ jsonrpc: "2.0", id: 7, result: { pending: 0, open: 1 } }); // itself
  });

  it("reads escaped names in parsed params too (json-as objects), and the last of repeated names", async () => {
    const p = await proxyUnderTest(hooks);
    const params = {
      sessionId: "s",
      toolCall: { toolCallId: "first", kind: "edit", rawInput: { p: "/a" } },
      options: [{ optionId: "y", name: "Yes", kind: "allow_once" }],
    };
    // `toolCallId` twice: the second spelled with an escape; JSON.parse keeps the last one.
    const text = JSON.stringify(params).replace('"kind":"edit"', '"kind":"edit","t\\u006folCallId":"last"');
    expect(JSON.parse(text).toolCall.toolCallId).toBe("last");
    p.deliverRaw(`{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/request_permission","params":${text}}}`);
    expect(p.logs.at(-1)!.message).toBe('permission last kind=edit input={"p":"/a"} allow=y options=1');
  });

  it("takes the last of repeated names in raw reads, whichever spelling comes last", async () => {
    const p = await proxyUnderTest(hooks);
    const out = p.deliver(
      rawUpdate(
        '{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","t\\u0065xt":"twice"}}}',
      ),
    );
    expect(out[0].params.update.content.text).toBe("one+two");
  });

  it("forwards an untouched message with escaped values byte for byte, and escaped names in one spelling", async () => {
    const p = await proxyUnderTest(hooks);
    const values =
      '{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a\\u0062c \\"q\\" \\n"}}}';
    expect(p.deliverRaw(rawUpdate(values))).toEqual([`{"jsonrpc":"2.0","method":"session/update","params":${values}}`]);
    const names =
      '{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","te\\u0078t":"hi","a\\"b":1,"c\\/d":2}}}';
    expect(p.deliverRaw(rawUpdate(names))).toEqual([
      `{"jsonrpc":"2.0","method":"session/update","params":${names.replace("te\\u0078t", "text").replace("c\\/d", "c/d")}}`,
    ]);
  });

  it("finds an escaped name inside an array among values that hold escapes, spacing and all", async () => {
    const p = await proxyUnderTest(hooks);
    // The prompt array is skipped whole by the dispatcher's scan; escapes in its string values
    // alone no longer start the names pass, so the one in a block's names must, wherever it sits:
    // after a value ending in an escaped backslash, and before a colon written after spaces.
    // (Ģ and Ŝ are U+0122 and U+015C: a quote's and a backslash's low byte, never taken for them.)
    const blocks = '[{"type":"text","text":"a\\\\"},{"type":"text","text":"\\"x\\"\\n"},{"t\\u0079pe" :"text","t\\u0065xt"\t: "b ĢŜĢŜ"}]';
    const prompt = `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":${blocks}}}`;
    const texts = JSON.parse(prompt).params.prompt.map((b: { text: string }) => b.text);
    expect(texts).toEqual(["a\\", '"x"\n', "b ĢŜĢŜ"]);
    p.deliverRaw(prompt);
    expect(p.logs.at(-1)!.message).toBe(`prompt in s: 3 blocks, text=${texts.join("\n")}`);
  });

  it("decodes every JSON escape in values as JSON.parse does (\\/ included)", async () => {
    const p = await proxyUnderTest(hooks);
    // The hook logs the prompt's text; `\/` must arrive as `/`, `\u00e9` as é, `\t` as a tab.
    const prompt =
      '{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"a\\/b \\u00e9\\t\\"q\\"\\\\"}]}}';
    expect(JSON.parse(prompt).params.prompt[0].text).toBe('a/b é\t"q"\\');
    p.deliverRaw(prompt);
    expect(p.logs.at(-1)!.message).toBe('prompt in s: 1 blocks, text=a/b é\t"q"\\');
  });
});
