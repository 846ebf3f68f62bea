import { describe, expect, it } from "vitest";
import { attachRaw, piecesOf, serialize } from "../protocol/raw-json.js";
import { type Call, unwrap, withId, wrap } from "./envelope.js";

const BIG = 'x"ü\n'.repeat(10_000);
const params = `{"sessionId":"s","prompt":[{"type":"text","text":${JSON.stringify(BIG)}}]}`;
const parsed = (text: string) => attachRaw(JSON.parse(text), text) as Call;

describe("envelopes around long texts", () => {
  it("taking a long message out of its envelope keeps it as pieces of the envelope's text, byte for byte", () => {
    const envelope = parsed(`{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/prompt","params":${params}}}`);
    const inner = unwrap(envelope) as Call;
    const expected = `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":${params}}`;
    expect(piecesOf(inner)?.join("")).toBe(expected);
    expect(serialize(inner)).toBe(expected);
    // The next hop's id goes into the pieces, as into the text.
    expect(piecesOf(withId(inner, 9))?.join("")).toBe(expected.replace('"id":3', '"id":9'));
  });

  it("putting a long message in an envelope builds it from pieces; a notification's envelope, built once, keeps them at every proxy", () => {
    const request = parsed(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":${params}}`);
    const wrapped = wrap(request, "rfd");
    expect(piecesOf(wrapped)?.join("")).toBe(
      `{"jsonrpc":"2.0","id":4,"method":"proxy/successor","params":{"method":"session/prompt","params":${params}}}`,
    );
    const update = parsed(`{"jsonrpc":"2.0","method":"session/update","params":${params}}`);
    const first = wrap(update, "rfd");
    const second = wrap(update, "rfd");
    const text = `{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":${params}}}`;
    expect(piecesOf(first)?.join("")).toBe(text);
    expect(piecesOf(second)?.join("")).toBe(text);
    expect(serialize(second)).toBe(text);
  });
});
