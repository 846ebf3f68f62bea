import { describe, expect, it, vi } from "vitest";
import { parseLine } from "../protocol/parse-line.js";
import { attachRaw, CompactNotification, piecesOf, serialize, UnreadNotification } from "../protocol/raw-json.js";
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

// Kept beside its text for a parsed notification, on the message itself for one read with unread params (UnreadNotification).
describe.each([
  ["parsed", parsed],
  ["read with its params unread", (text: string) => parseLine(text) as Call],
])("a notification's envelope (%s)", (kind, read) => {
  const update = () =>
    read('{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}}');

  it("is that kind of message", () => {
    expect(update() instanceof UnreadNotification).toBe(kind !== "parsed");
  });
  const text = (method: string) =>
    `{"jsonrpc":"2.0","method":"${method}","params":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}}}`;

  it("is made once per message and method, and carries the message at every proxy it crosses", () => {
    const message = update();
    const first = wrap(message, "rfd");
    expect(wrap(message, "rfd")).toBe(first);
    expect(serialize(first)).toBe(text("proxy/successor"));
    expect(unwrap(first)).toBe(message);
    // Another message with the same text gets its own envelope.
    expect(wrap(update(), "rfd")).not.toBe(first);
    // A proxy speaking the Rust SDK's dialect gets its own spelling, then the next one the RFD's again.
    const rust = wrap(message, "rust");
    expect(rust).not.toBe(first);
    expect(serialize(rust)).toBe(text("_proxy/successor"));
    expect(serialize(wrap(message, "rfd"))).toBe(text("proxy/successor"));
  });

  it("is not shared by requests, whose envelopes differ by id", () => {
    const request = parsed('{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}');
    const a = wrap(request, "rfd");
    expect(wrap(request, "rfd")).not.toBe(a);
    expect(serialize(withId(a, 7))).toBe(
      '{"jsonrpc":"2.0","id":7,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}}',
    );
  });
});

describe("an envelope around an update whose params are unread (parse-line.ts)", () => {
  const line = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}';
  const text = `{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":${line.slice(line.indexOf('"params":') + 9, -1)}}}`;

  it("is written from the update's text and leaves its params unparsed", () => {
    parseLine(line); // the check's module loaded (finding it reads package.json) before JSON.parse is watched
    const update = parseLine(line) as Call;
    const parse = vi.spyOn(JSON, "parse");
    try {
      const envelope = wrap(update, "rfd");
      expect(serialize(envelope)).toBe(text);
      expect(unwrap(envelope)).toBe(update); // in-process peers get the message itself
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });

  it("reads as the envelope JSON.parse makes of its text, when read", () => {
    const envelope = wrap(parseLine(line) as Call, "rfd");
    expect((envelope.params as { params: unknown }).params).toEqual(JSON.parse(line).params);
    expect(JSON.stringify(envelope)).toBe(text);
    expect(JSON.parse(JSON.stringify(envelope))).toEqual(JSON.parse(text));
    const members: string[] = [];
    for (const key in envelope.params as object) members.push(key);
    expect(members).toEqual(["method", "params"]);
  });

  // Built as a head, the update's text from its method on, and a brace (envelope.ts `envelope`, the compact case).
  it("is written the same way in the Rust dialect, for a notification the check refused, and for a long one (as pieces)", () => {
    const legacy = text.replace('"method":"proxy/successor"', '"method":"_proxy/successor"');
    expect(serialize(wrap(parseLine(line) as Call, "rust"))).toBe(legacy);
    // Nested past the check's bound: read with its params parsed (CompactNotification), wrapped the same way.
    const deep = `{"jsonrpc":"2.0","method":"_x/deep","params":{"a":${"[".repeat(127)}${"]".repeat(127)}}}`;
    const refused = parseLine(deep) as Call;
    expect(refused).toBeInstanceOf(CompactNotification);
    expect(serialize(wrap(refused, "rfd"))).toBe(
      `{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"_x/deep","params":${deep.slice(deep.indexOf('"params":') + 9, -1)}}}`,
    );
    // A long line: the envelope's text is kept as pieces, never one string (raw-json.ts `piecesOf`).
    const long = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"${"x".repeat(40_000)}"}}}}`;
    const envelope = wrap(parseLine(long) as Call, "rfd");
    const written = serialize(envelope);
    expect(JSON.parse(written)).toEqual({
      jsonrpc: "2.0",
      method: "proxy/successor",
      params: { method: "session/update", params: JSON.parse(long).params },
    });
    const pieces = piecesOf(envelope);
    expect(pieces?.length).toBe(3);
    expect(pieces!.join("")).toBe(written);
  });
});
