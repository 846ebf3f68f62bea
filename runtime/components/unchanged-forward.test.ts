/**
 * Unchanged forwards: a guest output that hands on exactly what it was delivered is routed as the
 * message the router already holds (its text, its key order, its unknown members); anything that
 * differs by one byte, or whose id or shape does not fit, is left to the ordinary path (null).
 * Last, the real pass-through guest in both sandboxes: its forwards reach the router as the very
 * message delivered, marked admitted.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { proxyWasm } from "../../test/helpers/paths.js";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { attachRaw, piecesOf, serialize } from "../protocol/raw-json.js";
import { type Call, unwrap, withId, wrap } from "../routing/envelope.js";
import { type Isolation, sandboxFactory } from "../sandbox/sandbox-factory.js";
import { INTEREST_FILTERS_ENV } from "./interest-filter.js";
import { forwardMarker, markerPasses, unchangedForward } from "./unchanged-forward.js";
import { WasmProxyPeer } from "./wasm-proxy.js";

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const parsed = <T extends object>(text: string): T => attachRaw(JSON.parse(text), text) as T;
const delivered = (message: object) => ({ message, text: serialize(message) });

/** An agent's `session/update`, spelled the way no serializer would (extra top-level member, spaces in params). */
const AGENT_UPDATE =
  '{"jsonrpc":"2.0","method":"session/update","params":{ "sessionId" : "s1", "update": {"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"caf\\u00e9"}}},"_x":1}';
const PARAMS = '{ "sessionId" : "s1", "update": {"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"caf\\u00e9"}}}';

describe("unchangedForward", () => {
  it("leaves a delivery of a long text built from pieces to the ordinary path, which never makes that text whole", () => {
    const text = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"${"y".repeat(20_000)}"}}}}`;
    const envelope = wrap(parsed<Call>(text), "rfd");
    expect(piecesOf(envelope)).toBeDefined();
    expect(unchangedForward({ ...delivered(envelope), pieces: piecesOf(envelope) }, text)).toBeNull();
    // The same delivery given whole is recognised: only the pieces decide.
    expect(unchangedForward(delivered(envelope), text)).not.toBeNull();
  });

  it("an envelope handed on to the predecessor is the very message it carries", () => {
    const original = parsed<Call>(AGENT_UPDATE);
    const envelope = wrap(original, "rfd");
    const output = `{"jsonrpc":"2.0","method":"session/update","params":${PARAMS}}`;
    const routed = unchangedForward(delivered(envelope), output);
    expect(routed).toBe(original);
    expect(serialize(routed!)).toBe(AGENT_UPDATE); // its unknown top-level member too
  });

  it("an enveloped request handed on takes the guest's id, spliced into the original text", () => {
    const original = parsed<Call>('{"jsonrpc":"2.0","id":"a-7","method":"fs/read_text_file","params":{"path":"/p"}}');
    const envelope = withId(wrap(original, "rfd"), 12);
    const routed = unchangedForward(delivered(envelope), '{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"path":"/p"}}');
    expect(routed).toEqual({ jsonrpc: "2.0", id: 3, method: "fs/read_text_file", params: { path: "/p" } });
    expect(serialize(routed!)).toBe('{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"path":"/p"}}');
  });

  it("a client-side request handed on to the successor is wrapped around the delivered message, under the guest's id", () => {
    const request = parsed<Call>('{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}');
    const output =
      '{"jsonrpc":"2.0","id":41,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}}';
    const routed = unchangedForward(delivered(request), output) as Call;
    expect(routed).toMatchObject({ id: 41, method: "proxy/successor" });
    const inner = unwrap(routed) as Call;
    expect(inner).toEqual({ jsonrpc: "2.0", id: 41, method: "session/prompt", params: { sessionId: "s1", prompt: [] } });
    expect(serialize(inner)).toBe('{"jsonrpc":"2.0","id":41,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}');
    expect(JSON.parse(serialize(routed))).toEqual(JSON.parse(output));
  });

  it("a client-side notification handed on unwraps to the delivered message itself", () => {
    const cancel = parsed<Call>('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}');
    const routed = unchangedForward(
      delivered(cancel),
      '{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{"sessionId":"s1"}}}',
    ) as Call;
    expect(unwrap(routed)).toBe(cancel);
  });

  it("an answer relayed takes the id of the request the guest answers", () => {
    const answer = parsed<JsonRpcMessage>('{"jsonrpc":"2.0","id":41,"result":{"stopReason":"end_turn","_meta":{"n":1.0}}}');
    const routed = unchangedForward(delivered(answer), '{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn","_meta":{"n":1.0}}}');
    expect(serialize(routed!)).toBe('{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn","_meta":{"n":1.0}}}');
    const error = parsed<JsonRpcMessage>('{"jsonrpc":"2.0","id":"x","error":{"code":-32000,"message":"no"}}');
    expect(unchangedForward(delivered(error), '{"jsonrpc":"2.0","id":"y","error":{"code":-32000,"message":"no"}}')).toMatchObject({
      id: "y",
    });
  });

  it("anything else is left to the ordinary path", () => {
    const original = parsed<Call>(AGENT_UPDATE);
    const envelope = delivered(wrap(original, "rfd"));
    const same = `{"jsonrpc":"2.0","method":"session/update","params":${PARAMS}}`;
    expect(unchangedForward(envelope, same)).not.toBeNull();
    // one byte of the body changed, the body cut short or lengthened, another member added
    expect(unchangedForward(envelope, same.replace("caf", "cab"))).toBeNull();
    expect(unchangedForward(envelope, same.slice(0, -2) + "}")).toBeNull();
    expect(unchangedForward(envelope, same.replace('"params"', '"_meta":{},"params"'))).toBeNull();
    // an id where the delivered message had none, or other spellings of the head or the id
    expect(unchangedForward(envelope, same.replace('"2.0",', '"2.0","id":1,'))).toBeNull();
    expect(unchangedForward(envelope, same.replace('"2.0"', '"2.0" '))).toBeNull();
    expect(unchangedForward(envelope, ` ${same}`)).toBeNull();
    // handed back the way it came (still enveloped) is not a forward
    expect(unchangedForward(envelope, envelope.text)).toBeNull();

    const request = parsed<Call>('{"jsonrpc":"2.0","id":5,"method":"m","params":{}}');
    const wrapped = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"proxy/successor","params":{"method":"m","params":{}}}`;
    expect(unchangedForward(delivered(request), wrapped("7"))).not.toBeNull();
    for (const id of ["07", "-7", "7.0", "1e3", "12345678901234567", '"a\\"b"', "null", "true"]) {
      expect(unchangedForward(delivered(request), wrapped(id)), id).toBeNull();
    }
    // the request forwarded as a notification (no id) is not a forward of it
    expect(
      unchangedForward(delivered(request), '{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"m","params":{}}}'),
    ).toBeNull();
  });

  it("a delivered text whose leading id is not the message's own shape is never trusted", () => {
    // A client wrote its id last: the text's head has no id, the message has one.
    const request = parsed<Call>('{"jsonrpc":"2.0","method":"m","params":{},"id":3}');
    const output = '{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"m","params":{},"id":3}}';
    expect(unchangedForward(delivered(request), output)).toBeNull();
  });

  it("an answer is never handed on as a call, nor a call as an answer", () => {
    const answer = parsed<JsonRpcMessage>('{"jsonrpc":"2.0","id":41,"result":{}}');
    expect(unchangedForward(delivered(answer), '{"jsonrpc":"2.0","id":41,"method":"proxy/successor","params":{"result":{}}}')).toBeNull();
    const request = parsed<Call>('{"jsonrpc":"2.0","id":5,"method":"m"}');
    expect(unchangedForward(delivered(request), '{"jsonrpc":"2.0","id":6,"method":"m"}')).toBeNull();
  });
});

describe("forwardMarker (_cordon/forward)", () => {
  const marker = (id?: string) => `{"jsonrpc":"2.0"${id === undefined ? "" : `,"id":${id}`},"method":"_cordon/forward"}`;

  it("routes what the written-out forward routes, in every form, without reading the delivered text", () => {
    const original = parsed<Call>(AGENT_UPDATE);
    const envelope = wrap(original, "rfd");
    expect(forwardMarker(delivered(envelope), marker())).toBe(original);
    const carried = parsed<Call>('{"jsonrpc":"2.0","id":"a-7","method":"fs/read_text_file","params":{"path":"/p"}}');
    expect(serialize(forwardMarker(delivered(withId(wrap(carried, "rfd"), 12)), marker("3"))!)).toBe(
      '{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"path":"/p"}}',
    );
    const request = parsed<Call>('{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}');
    const output =
      '{"jsonrpc":"2.0","id":41,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}}';
    expect(serialize(forwardMarker(delivered(request), marker("41"))!)).toBe(serialize(unchangedForward(delivered(request), output)!));
    const cancel = parsed<Call>('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}');
    expect(unwrap(forwardMarker(delivered(cancel), marker()) as Call)).toBe(cancel);
    const answer = parsed<JsonRpcMessage>('{"jsonrpc":"2.0","id":41,"result":{"stopReason":"end_turn","_meta":{"n":1.0}}}');
    expect(serialize(forwardMarker(delivered(answer), marker('"c-1"'))!)).toBe(
      '{"jsonrpc":"2.0","id":"c-1","result":{"stopReason":"end_turn","_meta":{"n":1.0}}}',
    );
  });

  it("reads the call out of an envelope that arrived as text (a parent conductor's), which the written-out forward leaves alone", () => {
    const text = '{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{"path":"/p"}}}';
    expect(serialize(forwardMarker(delivered(parsed<Call>(text)), marker("9"))!)).toBe(
      '{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"path":"/p"}}',
    );
    expect(
      unchangedForward(delivered(parsed<Call>(text)), '{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"path":"/p"}}'),
    ).toBeNull();
  });

  it("takes a long delivery built from pieces too, which the written-out forward leaves to the ordinary path", () => {
    const text = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"${"y".repeat(20_000)}"}}}}`;
    const original = parsed<Call>(text);
    const envelope = wrap(original, "rfd");
    expect(forwardMarker({ ...delivered(envelope), pieces: piecesOf(envelope) }, marker())).toBe(original);
  });

  it("is null for an id that does not fit the delivered message, any other spelling, or any other text", () => {
    const request = delivered(parsed<Call>('{"jsonrpc":"2.0","id":5,"method":"m","params":{}}'));
    const update = delivered(wrap(parsed<Call>(AGENT_UPDATE), "rfd"));
    const answer = delivered(parsed<JsonRpcMessage>('{"jsonrpc":"2.0","id":41,"result":{}}'));
    expect(forwardMarker(request, marker())).toBeNull(); // a request handed on needs the guest's id
    expect(forwardMarker(answer, marker())).toBeNull(); // and so does an answer
    expect(forwardMarker(update, marker("7"))).toBeNull(); // a notification has none
    for (const id of ["07", "-7", "7.0", "1e3", "12345678901234567", '"a\\"b"', "null", "true", "[7]"]) {
      expect(forwardMarker(request, marker(id)), id).toBeNull();
    }
    for (const text of [
      marker("7").replace('"2.0"', '"2.0" '),
      ` ${marker("7")}`,
      `${marker("7")} `,
      marker("7").replace("_cordon/forward", "_cordon/forwarded"),
      marker("7").replace("}", ',"params":{}}'),
      '{"jsonrpc":"2.0","method":"_cordon/forward","id":7}',
    ]) {
      expect(forwardMarker(request, text), text).toBeNull();
    }
    expect(forwardMarker(request, marker("7"))).not.toBeNull();
    // A string id as long as the written-out forward takes is taken here too.
    const long = `"${"a".repeat(60)}"`;
    expect(forwardMarker(request, marker(long))).toMatchObject({ id: "a".repeat(60) });
  });

  it("takes a request's pass form (its answer goes past the guest) as the plain marker, and says so", () => {
    const pass = (id?: string) => marker(id).replace(/\}$/, ',"params":{"pass":true}}');
    const request = parsed<Call>('{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}');
    const routed = forwardMarker(delivered(request), pass("41"));
    expect(serialize(routed!)).toBe(serialize(forwardMarker(delivered(request), marker("41"))!));
    expect(markerPasses(pass("41"))).toBe(true);
    expect(markerPasses(marker("41"))).toBe(false);
    // Only a request's answer can pass: without an id it is no marker; a notification has no answer.
    expect(forwardMarker(delivered(request), pass())).toBeNull();
    expect(forwardMarker(delivered(wrap(parsed<Call>(AGENT_UPDATE), "rfd")), pass())).toBeNull();
    for (const text of [pass("41").replace("true", "false"), pass("41").replace('{"pass":true}', '{"pass":true }'), `${pass("41")} `]) {
      expect(forwardMarker(delivered(request), text), text).toBeNull();
    }
  });
});

describe.each<Isolation>(["thread", "worker"])("the pass-through guest in %s isolation", (isolation) => {
  it("hands on each message as the one it was delivered, marked admitted", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "cordon-unchanged-test-"));
    const peer = new WasmProxyPeer({ name: "p", path: proxyWasm("passthrough"), config: {} }, { cacheDir }, sandboxFactory(isolation));
    const got: { value: Json; admitted: boolean | undefined }[] = [];
    // Its manifest watches nothing: with the interest filter on, nothing would enter the guest.
    process.env[INTEREST_FILTERS_ENV] = "off";
    try {
      await peer.open({ message: (value, admitted) => got.push({ value, admitted }), malformed: () => {}, closed: () => {} });
    } finally {
      delete process.env[INTEREST_FILTERS_ENV];
    }
    const original = parsed<Call>(AGENT_UPDATE);
    peer.send(wrap(original, "rfd"));
    const prompt = parsed<Call>('{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}');
    peer.send(prompt);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await peer.close();
    expect(got).toHaveLength(2);
    expect(got[0].value).toBe(original);
    expect(got[0].admitted).toBe(true);
    expect(unwrap(got[1].value)).toMatchObject({ method: "session/prompt", params: { sessionId: "s1", prompt: [] } });
    expect(got[1].admitted).toBe(true);
  });
});
