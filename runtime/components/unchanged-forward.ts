/**
 * Recognises a guest's output that hands on, unchanged, the message it was just delivered — what
 * a watching proxy does with nearly everything it sees — so the host routes the message it already
 * holds instead of decoding, parsing and I-JSON-checking the guest's copy of it.
 *
 * An SDK guest forwards a message by writing its envelope around the raw slices it received
 * (`sdk-as/assembly/wire.ts`), and Cordon writes what it delivers the same way (`envelope.ts`), so
 * the two texts share one body `X` byte for byte:
 *
 *   enveloped  {"jsonrpc":"2.0"[,"id":ID],"method":"proxy/successor","params":{X}
 *   plain      {"jsonrpc":"2.0"[,"id":ID],X
 *
 * where `X` is `"method":…,"params":…}` for a call and `"result":…}` / `"error":…}` for an answer.
 * The relations recognised (the only ones an unchanged forward can have):
 *
 * - delivered enveloped (from the successor) → sent plain (to the predecessor): the call the
 *   envelope carries, under the guest's id if it is a request;
 * - delivered plain call (from the predecessor) → sent enveloped (to the successor): the call
 *   wrapped, under the guest's id if it is a request;
 * - delivered answer → sent answer: the answer under the guest's id (the id of the request the
 *   guest is answering).
 *
 * Both texts must have an id or neither. Anything else, or any difference in `X`, is left to the
 * ordinary path (`null`): recognising nothing is always correct, only slower.
 *
 * Why skipping admission is sound: the routed message is the one the router delivered, which was
 * admitted when it entered Cordon (from the client, the agent, or another proxy's checked output);
 * the guest's output adds nothing to it but an id, which is read here as a plain integer or a
 * string literal without escapes. The guest's output is byte for byte a rewrite of that message
 * that the ordinary path would have parsed to the same value, and the rules judge it as they judge
 * any output of the proxy (it is routed as the proxy's message, through the same tables). Where
 * the delivered message had top-level members besides these (only a client's or agent's can), the
 * routed message keeps them: a forward through a watching proxy then reads like one routed past it.
 *
 * Cost: a few literals compared at fixed offsets and one native comparison of `X` (no object made
 * and no text copied: this runs for every output of every watching proxy), about 0.2 µs for a
 * chunk, against a decode, `JSON.parse`, the I-JSON scan and a raw-text field per crossing.
 */
import type { JsonRpcId, JsonRpcResponse } from "../protocol/json-rpc.js";
import { withMember } from "../protocol/raw-json.js";
import { type Call, carriedBy, isRequest, withId, wrap } from "../routing/envelope.js";

/** What a guest was delivered: the message the router sent it, and that message's text (a sandbox's `Delivery`). */
interface Delivered {
  readonly message: object;
  readonly text: string;
  readonly pieces?: readonly string[];
}

const HEAD = '{"jsonrpc":"2.0"';
const ID = ',"id":';
const ENVELOPE_OPEN = ',"method":"proxy/successor","params":{';
/** Longest id read here (a longer one takes the ordinary path, which bounds ids itself). */
const MAX_ID_CHARS = 64;

/** Where a text's body `X` lies, and its id: filled in place (two reused ones, so no allocation per output). */
interface Shape {
  enveloped: boolean;
  /** Start of `X`. */
  body: number;
  /** End of `X` (exclusive): the text's end, or one before it for an envelope's closing brace. */
  end: number;
  /** Undefined: a notification's (no id member). */
  id: JsonRpcId | undefined;
}
const SENT: Shape = { enveloped: false, body: 0, end: 0, id: undefined };
const GOT: Shape = { enveloped: false, body: 0, end: 0, id: undefined };

/**
 * Whether `literal` is written at `pos`. A slice of 13 characters or more is a view, not a copy, and
 * `===` compares natively: ~8× faster than a character loop when the two strings differ in width (a
 * guest's output is two-byte, Cordon's text one-byte; measured). Shorter slices would be copies,
 * so those few characters are compared in a loop.
 */
function writtenAt(text: string, pos: number, literal: string): boolean {
  if (pos + literal.length > text.length) return false;
  if (literal.length >= 13) return text.slice(pos, pos + literal.length) === literal;
  for (let i = 0; i < literal.length; i++) if (text.charCodeAt(pos + i) !== literal.charCodeAt(i)) return false;
  return true;
}

/**
 * The id literal at `pos` (an integer without sign, fraction, exponent or leading zero, at most 15
 * digits, or a string without escapes) into `shape.id`; where it ends, or -1 for anything else.
 */
function readId(text: string, pos: number, shape: Shape): number {
  const first = text.charCodeAt(pos);
  if (first === 0x22) {
    let end = pos + 1;
    for (; end < text.length && end - pos <= MAX_ID_CHARS; end++) {
      const c = text.charCodeAt(end);
      if (c === 0x22) break;
      if (c === 0x5c || c < 0x20) return -1;
    }
    if (text.charCodeAt(end) !== 0x22) return -1;
    shape.id = text.slice(pos + 1, end);
    return end + 1;
  }
  let end = pos;
  let value = 0;
  for (let c = first; c >= 0x30 && c <= 0x39 && end - pos < 16; c = text.charCodeAt(++end)) value = value * 10 + (c - 0x30);
  // Leading zeros are not JSON; 16+ digits may not be a safe integer.
  if (end === pos || end - pos > 15 || (first === 0x30 && end - pos > 1)) return -1;
  shape.id = value;
  return end;
}

/** Reads `text`'s shape into `shape`; false when it has neither form. */
function readShape(text: string, shape: Shape): boolean {
  if (!writtenAt(text, 0, HEAD)) return false;
  let pos = HEAD.length;
  shape.id = undefined;
  if (writtenAt(text, pos, ID)) {
    pos = readId(text, pos + ID.length, shape);
    if (pos < 0) return false;
  }
  shape.enveloped = writtenAt(text, pos, ENVELOPE_OPEN);
  if (shape.enveloped) {
    if (text.charCodeAt(text.length - 1) !== 0x7d) return false;
    shape.body = pos + ENVELOPE_OPEN.length;
    shape.end = text.length - 1;
    return true;
  }
  if (text.charCodeAt(pos) !== 0x2c) return false;
  shape.body = pos + 1;
  shape.end = text.length;
  return true;
}

/** Whether the two bodies are the same text: two views and one native compare (see `writtenAt`). */
function sameBody(a: string, as: Shape, b: string, bs: Shape): boolean {
  return as.end - as.body === bs.end - bs.body && a.slice(as.body, as.end) === b.slice(bs.body, bs.end);
}

const isCall = (text: string, shape: Shape): boolean => writtenAt(text, shape.body, '"method":');
const isAnswer = (text: string, shape: Shape): boolean =>
  writtenAt(text, shape.body, '"result":') || writtenAt(text, shape.body, '"error":');

/**
 * The message to route for `output` when it forwards `delivered` unchanged (see the module
 * comment), or null when it does not — or may not: the ordinary path then parses it.
 */
export function unchangedForward(delivered: Delivered, output: string): object | null {
  // A long text built from pieces is not read here: reading it whole would have V8 flatten it (raw-json.ts
  // `piecesOf`), which costs about what the ordinary path's parse of the output does.
  if (delivered.pieces !== undefined) return null;
  const sent = SENT;
  const got = GOT;
  if (!readShape(output, sent) || !readShape(delivered.text, got) || (got.id === undefined) !== (sent.id === undefined)) return null;
  const message = delivered.message as Call | JsonRpcResponse;
  // The delivered text's leading id is the message's own (or it has none): its shape is the message's.
  if (got.id === undefined ? "id" in message : message.id !== got.id) return null;
  if (!sameBody(delivered.text, got, output, sent)) return null;
  if (got.enveloped && !sent.enveloped) {
    // From the successor, handed on to the predecessor: the call the envelope carries.
    const inner = carriedBy(message);
    if (inner === undefined || !isCall(output, sent) || isRequest(inner) !== (sent.id !== undefined)) return null;
    return sent.id === undefined ? inner : withMember(inner, "id", sent.id);
  }
  if (!got.enveloped && sent.enveloped) {
    // From the predecessor, handed on to the successor in the guest's envelope.
    if (!isCall(output, sent) || !("method" in message)) return null;
    const envelope = wrap(message as Call, "rfd");
    return sent.id === undefined ? envelope : withId(envelope, sent.id);
  }
  if (!got.enveloped && !sent.enveloped && sent.id !== undefined && isAnswer(output, sent) && !("method" in message)) {
    // An answer relayed to whoever asked the guest.
    return withMember(message, "id", sent.id);
  }
  return null;
}
