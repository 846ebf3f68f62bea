/**
 * Edits handed back as the edit alone (`_cordon/forward` with `params: {at, end, value}`): the
 * message routed is what parsing the edited text gives, and its text is that text byte for byte.
 * Checked here (routed without a parse) only where the place is one of the three and every name on
 * the way is the only one of its key; everything else goes the ordinary way (`checked: false`), and
 * a marker that does not fit the delivered call is not one (null). Last, the real `context` guest
 * hands its block back as an edit, in both sandboxes.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { proxyWasm } from "../../test/helpers/paths.js";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { MAX_NESTING_DEPTH } from "../protocol/nesting.js";
import { parseLine } from "../protocol/parse-line.js";
import { attachRaw, layoutOf, piecesOf, rawParamsPieces, serialize, withMember } from "../protocol/raw-json.js";
import { type Call, unwrap, wrap } from "../routing/envelope.js";
import { type Isolation, sandboxFactory } from "../sandbox/sandbox-factory.js";
import { editedForward, locate } from "./edited-forward.js";
import { WasmProxyPeer } from "./wasm-proxy.js";

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const parsed = <T extends object>(text: string): T => attachRaw(JSON.parse(text), text) as T;
const delivered = (message: object) => ({ message, text: serialize(message) });
const marker = (id: number | undefined, at: number, end: number, value: string) =>
  `{"jsonrpc":"2.0"${id === undefined ? "" : `,"id":${id}`},"method":"_cordon/forward","params":{"at":${at},"end":${end},"value":${value}}}`;

/** What the SDK writes for the same edit of a predecessor's request: its envelope around the edited params. */
const wrappedText = (id: number, method: string, params: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"proxy/successor","params":{"method":"${method}","params":${params}}}`;

const PARAMS = '{"sessionId":"s1", "prompt": [ {"type":"text","text":"hello"} ] ,"_meta":{"k":1}}';
const PROMPT = `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":${PARAMS}}`;
const BLOCK = '{"type":"text","text":"RULES"}';

/** Routes `output` for the delivered `message` and checks it against what parsing the text the SDK would write gives. */
function expectEdit(message: object, output: string, text: string, checked = true) {
  const routed = editedForward(delivered(message), output);
  expect(routed).not.toBeNull();
  expect(routed!.checked).toBe(checked);
  expect(serialize(routed!.message)).toBe(text);
  if (checked) expect(routed!.message).toEqual(JSON.parse(text));
  return routed!.message;
}

describe("editedForward", () => {
  it("gives a text whose params were placed without a walk the members its own walk found, for the next edit", () => {
    const read = parseLine(PROMPT) as object; // id and params placed by the reader, params' members not known
    expect(layoutOf(read)!.params).toBeDefined();
    expect(layoutOf(read)!.paramsMembers).toBeUndefined();
    const at = PARAMS.indexOf('{"type"');
    const first = PARAMS.slice(0, at) + `${BLOCK},` + PARAMS.slice(at);
    const edited = expectEdit(read, marker(9, at, at, BLOCK), wrappedText(9, "session/prompt", first));
    const walked = withMember(parsed<object>(PROMPT), "id", 4); // the layout walk records params' members
    serialize(walked);
    expect(layoutOf(read)!.paramsMembers).toEqual(layoutOf(walked)!.paramsMembers);
    // The edited message (inside the guest's envelope) carries them on, moved by the edit, so a
    // second proxy's edit walks nothing it does not hold.
    const inner = unwrap(edited as Call) as object;
    serialize(inner);
    expect(layoutOf(inner)?.paramsMembers).toHaveLength(12);
  });

  it("puts a block first, last, or alone in a predecessor's prompt, wrapped under the guest's id", () => {
    const at = PARAMS.indexOf('{"type"');
    const first = PARAMS.slice(0, at) + `${BLOCK},` + PARAMS.slice(at);
    expectEdit(parsed(PROMPT), marker(9, at, at, BLOCK), wrappedText(9, "session/prompt", first));
    const close = PARAMS.indexOf("] ,");
    const last = PARAMS.slice(0, close) + `,${BLOCK}` + PARAMS.slice(close);
    expectEdit(parsed(PROMPT), marker(9, close, close, BLOCK), wrappedText(9, "session/prompt", last));
    const empty = '{"sessionId":"s1","prompt":[  ]}';
    const inner = empty.indexOf("]");
    const only = `${empty.slice(0, inner)}${BLOCK}${empty.slice(inner)}`;
    expectEdit(
      parsed(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":${empty}}`),
      marker(9, inner, inner, BLOCK),
      wrappedText(9, "session/prompt", only),
    );
  });

  it("replaces a chunk's text in an update its successor sent, handed on as the plain update with its other members", () => {
    const update =
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"key sk-1"}}},"_x":1}';
    const envelope = wrap(parsed<Call>(update), "rfd");
    const params = rawParamsPieces(parsed(update))!.join("");
    const at = params.indexOf('"key sk-1"');
    const routed = expectEdit(
      envelope,
      marker(undefined, at, at + '"key sk-1"'.length, '"key [redacted]"'),
      update.replace('"key sk-1"', '"key [redacted]"'),
    ) as Json;
    expect(routed._x).toBe(1);
    // The layout moved with the edit: the next hop finds params where they are now.
    expect(rawParamsPieces(routed)!.join("")).toBe(params.replace('"key sk-1"', '"key [redacted]"'));
  });

  it("replaces an element, a number, and params' own member, and keeps `__proto__` an own member", () => {
    const text = '{"jsonrpc":"2.0","id":1,"method":"x/y","params":{"__proto__":{"a":[1,2,3]},"n":10}}';
    const params = rawParamsPieces(parsed(text))!.join("");
    const two = params.indexOf("2");
    const routed = expectEdit(
      parsed(text),
      marker(2, two, two + 1, '{"b":null}'),
      wrappedText(2, "x/y", params.replace("2", '{"b":null}')),
    ) as Json;
    expect(Object.getPrototypeOf(routed.params.params)).toBe(Object.prototype);
    expect(Object.hasOwn(routed.params.params, "__proto__")).toBe(true);
    const ten = params.indexOf("10");
    expectEdit(parsed(text), marker(2, ten, ten + 2, "11"), wrappedText(2, "x/y", params.replace("10", "11")));
  });

  it("agrees with parsing the edited text at every place in a message (every offset pair)", () => {
    const text = '{"jsonrpc":"2.0","id":1,"method":"x/y","params":{ "a" : [ 1 , {"b":[]} , "s\\"]" ] , "c":{"d":[[ ]]},"e":"f"}}';
    const params = rawParamsPieces(parsed(text))!.join("");
    let checked = 0;
    for (let at = 0; at <= params.length; at++) {
      for (let end = at; end <= params.length; end++) {
        const spot = locate(params, at, end);
        if (spot === null) continue;
        const value = spot.kind === "value" ? '{"z":true}' : '"new"';
        const insert = spot.kind === "first" ? `${value},` : spot.kind === "last" ? `,${value}` : value;
        const edited = params.slice(0, at) + insert + params.slice(end);
        expectEdit(parsed(text), marker(3, at, end, value), wrappedText(3, "x/y", edited));
        checked++;
      }
    }
    // Every value but params (9) and the places of its four arrays (first and last of two, only of two): none missed.
    expect(checked).toBe(9 + 2 + 2 + 1 + 1);
  });

  it("finds the same places with params' members known from the layout walk as without", () => {
    const message = withMember(parsed<object>(PROMPT), "id", 7); // the id splice walks the text once, recording params' members
    expect(serialize(message)).toContain('"id":7');
    const layout = layoutOf(message)!;
    expect(layout.paramsMembers).toHaveLength(12);
    const from = layout.params![0];
    const members = layout.paramsMembers!.map((o) => o - from);
    for (let at = 0; at <= PARAMS.length; at++) {
      for (const end of [at, at + 1, at + 5, at + 7, at + 34]) {
        if (end > PARAMS.length) continue;
        expect(locate(PARAMS, at, end, members)).toEqual(locate(PARAMS, at, end));
      }
    }
  });

  it("goes the ordinary way where a check out of place would not be the check in place", () => {
    const prompt = (params: string) => parsed(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":${params}}`);
    const first = (params: string, value = BLOCK) => {
      const at = params.indexOf("[") + 1;
      const routed = editedForward(delivered(prompt(params)), marker(9, at, at, value));
      expect(routed).not.toBeNull();
      expect(serialize(routed!.message)).toBe(wrappedText(9, "session/prompt", params.slice(0, at) + `${value},` + params.slice(at)));
      return routed!.checked;
    };
    expect(first('{"prompt":[{"type":"text","text":"a"}]}')).toBe(true);
    // the edit's member repeated, or repeated to a reader that ignores case, or stops at a NUL
    expect(first('{"prompt":[{"type":"text","text":"a"}],"prompt":[]}')).toBe(false);
    expect(first('{"prompt":[{"type":"text","text":"a"}],"Prompt":[]}')).toBe(false);
    expect(first('{"prompt":[{"type":"text","text":"a"}],"prompt\\u0000x":[]}')).toBe(false);
    // a repeated name beside the path is not the edit's business
    expect(first('{"prompt":[{"type":"text","text":"a"}],"x":1,"X":2}')).toBe(true);
    // a place whose names Cordon's rules read
    expect(
      first('{"mcpServers":[{"name":"a","command":"a","args":[],"env":[]}]}', '{"name":"b","command":"/bin/sh","args":[],"env":[]}'),
    ).toBe(false);
    // a value that breaks I-JSON, or nests too deep in its place
    expect(first('{"prompt":[1]}', '{"a":1,"a":2}')).toBe(false);
    expect(first('{"prompt":[1]}', '"\\ud800"')).toBe(false);
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    expect(first('{"prompt":[1]}', deep(MAX_NESTING_DEPTH - 4))).toBe(true); // envelope, params, params, prompt: 4 levels above it
    expect(first('{"prompt":[1]}', deep(MAX_NESTING_DEPTH - 3))).toBe(false);
    // not JSON: the ordinary path's parse says so
    expect(first('{"prompt":[1]}', "{oops")).toBe(false);
    // a place that is not one of the three: inside a string, before a member, after a value
    const text = '{"sessionId":"s1","prompt":[1]}';
    for (const [at, end] of [
      [text.indexOf("s1"), text.indexOf("s1")],
      [1, 1],
      [text.indexOf(',"prompt"'), text.indexOf(',"prompt"')],
      [text.indexOf('"s1"'), text.indexOf('"s1"') + 2],
    ]) {
      const routed = editedForward(delivered(prompt(text)), marker(9, at, end, "0"));
      expect(routed?.checked).toBe(false);
      expect(serialize(routed!.message)).toBe(wrappedText(9, "session/prompt", text.slice(0, at) + "0" + text.slice(end)));
    }
  });

  it("is null for a marker that does not fit the delivered call, or is not spelled exactly so", () => {
    const message = parsed(PROMPT);
    const at = PARAMS.indexOf("[");
    for (const output of [
      marker(9, at, at - 1, "1"), // end before at
      marker(9, PARAMS.length + 1, PARAMS.length + 1, "1"), // past params
      marker(undefined, at, at, "1"), // a request handed on without an id
      marker(9, at, at, "").replace(',"value":}}', ',"value":}}'), // no value
      marker(9, at, at, "1").replace('"at":', '"at": '),
      marker(9, at, at, "1").replace(`"at":${at}`, `"at":0${at}`),
      marker(9, at, at, "1").replace(`"at":${at}`, '"at":99999999999'),
      marker(9, at, at, "1").replace('"end"', '"End"'),
      marker(9, at, at, "1").slice(0, -1),
      '{"jsonrpc":"2.0","id":9,"method":"_cordon/forward"}',
    ]) {
      expect(editedForward(delivered(message), output)).toBeNull();
    }
    // an answer is not a call to edit; a call without params has nothing to edit
    expect(editedForward(delivered(parsed('{"jsonrpc":"2.0","id":1,"result":{"a":[]}}')), marker(1, 6, 6, "1"))).toBeNull();
    expect(editedForward(delivered(parsed('{"jsonrpc":"2.0","id":1,"method":"x"}')), marker(1, 0, 0, "1"))).toBeNull();
  });

  it("places an edit in a call that has no text (one Cordon built) as JSON.stringify wrote it for the guest", () => {
    const built = { jsonrpc: "2.0", id: 4, method: "session/prompt", params: { sessionId: "s1", prompt: [{ type: "text", text: "hi" }] } };
    const params = JSON.stringify(built.params);
    const at = params.indexOf("[") + 1;
    expectEdit(built, marker(9, at, at, BLOCK), wrappedText(9, "session/prompt", params.slice(0, at) + `${BLOCK},` + params.slice(at)));
    expect(serialize(built)).toBe(JSON.stringify(built)); // left as it was
  });

  it("keeps a long prompt in pieces: the routed text is never made whole", () => {
    const big = "y".repeat(40_000);
    const text = `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"${big}"}]}}`;
    const message = withMember(parsed<object>(text), "id", 5);
    const params = rawParamsPieces(message)!.join("");
    const at = params.indexOf("[") + 1;
    const routed = editedForward(delivered(message), marker(9, at, at, BLOCK))!;
    expect(routed.checked).toBe(true);
    expect(piecesOf(routed.message)).toBeDefined();
    expect(serialize(routed.message)).toBe(wrappedText(9, "session/prompt", params.slice(0, at) + `${BLOCK},` + params.slice(at)));
  });
});

/** The context guest (its rules configured) in a peer of its own, what it routes collected. */
async function contextPeer(isolation: Isolation) {
  const cacheDir = mkdtempSync(join(tmpdir(), "cordon-edit-"));
  const peer = new WasmProxyPeer(
    { name: "context", path: proxyWasm("context"), config: { text: "Project rules." } },
    { cacheDir },
    sandboxFactory(isolation),
  );
  const routed: { value: Json; admitted?: boolean }[] = [];
  await peer.open({ message: (value, admitted) => routed.push({ value, admitted }), malformed: () => {}, closed: () => {} });
  return { peer, routed };
}

describe.each<Isolation>(["thread", "worker"])("the context guest in %s isolation", (isolation) => {
  it("hands its block back as an edit, routed checked: the prompt the successor gets is the one written out, its answer passing the guest", async () => {
    const { peer, routed } = await contextPeer(isolation);
    const prompt = parsed<JsonRpcMessage>(PROMPT);
    peer.send(prompt);
    await expect.poll(() => routed.length).toBe(1);
    // Its manifest watches no answers (`watches.answers: []`): the guest hands the prompt on with
    // `"pass":true`, under an id of the interest filter's.
    const expected = {
      jsonrpc: "2.0",
      id: "cordon-pass:1",
      method: "proxy/successor",
      params: {
        method: "session/prompt",
        params: { ...JSON.parse(PARAMS), prompt: [{ type: "text", text: "Project rules." }, ...JSON.parse(PARAMS).prompt] },
      },
    };
    expect(routed[0].admitted).toBe(true);
    expect(routed[0].value).toEqual(expected);
    expect(JSON.parse(serialize(routed[0].value as object))).toEqual(expected);
    // The answer goes back under the id the prompt came with, without entering the guest.
    peer.send({ jsonrpc: "2.0", id: "cordon-pass:1", result: { stopReason: "end_turn", _meta: { m: 1 } } } as JsonRpcMessage);
    await expect.poll(() => routed.length).toBe(2);
    expect(routed[1]).toEqual({ value: { jsonrpc: "2.0", id: 4, result: { stopReason: "end_turn", _meta: { m: 1 } } }, admitted: true });
    await peer.close();
  });

  it("a cancellation queued behind the prompt it names goes on to where the prompt went, by the filter's id", async () => {
    const { peer, routed } = await contextPeer(isolation);
    // Both wait in the sandbox's queue: when the cancel was sent, the prompt was not handed on yet.
    peer.send(parsed<JsonRpcMessage>(PROMPT));
    peer.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 4 } });
    // And one naming no request the guest handed on is dropped: its id means nothing past the guest.
    peer.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 1 } });
    await expect.poll(() => routed.length).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(routed.map((r) => r.value.id ?? r.value.params.params)).toEqual(["cordon-pass:1", { requestId: "cordon-pass:1" }]);
    expect(routed[1].value.method).toBe("proxy/successor");
    await peer.close();
  });
});
