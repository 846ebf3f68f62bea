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
import { FORWARD_MARKER, isProxySuccessor, Methods } from "../protocol/methods.js";
import { withMember } from "../protocol/raw-json.js";
import { type Call, carriedBy, isRequest, unwrap, withId, wrap } from "../routing/envelope.js";

/** What a guest was delivered: the message the router sent it, and that message's text (a sandbox's `Delivery`). */
export interface Delivered {
  readonly message: object;
  readonly text: string;
  readonly pieces?: readonly string[];
}

export const HEAD = '{"jsonrpc":"2.0"';
const ID = ',"id":';
const ENVELOPE_OPEN = ',"method":"proxy/successor","params":{';
/** Longest id read here (a longer one takes the ordinary path, which bounds ids itself). */
const MAX_ID_CHARS = 64;

/** Where a text's body `X` lies, and its id: filled in place (two reused ones, so no allocation per output). */
export interface Shape {
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

/**
 * Reads `{"jsonrpc":"2.0"` and the id after it, if any (into `shape.id`), at the start of `text`:
 * where they end, or -1 when the text does not start so or its id is not one read here.
 */
export function readHead(text: string, shape: Shape): number {
  shape.id = undefined;
  if (!writtenAt(text, 0, HEAD)) return -1;
  const pos = HEAD.length;
  return writtenAt(text, pos, ID) ? readId(text, pos + ID.length, shape) : pos;
}

/** Reads `text`'s shape into `shape`; false when it has neither form. */
function readShape(text: string, shape: Shape): boolean {
  const pos = readHead(text, shape);
  if (pos < 0) return false;
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
  if (got.enveloped && !sent.enveloped) return isCall(output, sent) ? handedOn(message, "carried", sent.id) : null;
  if (!got.enveloped && sent.enveloped) return isCall(output, sent) ? handedOn(message, "wrapped", sent.id) : null;
  if (!got.enveloped && !sent.enveloped && isAnswer(output, sent)) return handedOn(message, "answer", sent.id);
  return null;
}

/**
 * The marker a guest sends instead of a copy of what it was delivered (`_cordon/forward`, when the
 * host offered it in `_cordon/configure`): `{"jsonrpc":"2.0"[,"id":ID],"method":"_cordon/forward"}`,
 * exactly so written, means the message delivered in this `receive`, handed on unchanged under the
 * guest's id `ID` — what the guest would otherwise write out in full for the host to compare with
 * what it holds. Nothing is copied out of the guest or compared, and a long message (a pasted file
 * through a proxy that reads it and lets it pass) costs what a chunk does. The forms are those of
 * the module comment, read off the delivered message itself: a successor's envelope is handed on
 * as the call it carries, a predecessor's call in the guest's envelope, an answer as the answer to
 * the guest's asker. Null for any other text, or a marker whose id does not fit (an id for a
 * notification, none for a request or an answer): the ordinary path then refuses it as a
 * `_cordon/*` method from a proxy. A request's marker may say its answer passes the guest:
 * `…,"method":"_cordon/forward","params":{"pass":true}}` (see `markerPasses`).
 */
export function forwardMarker(delivered: Delivered, output: string): object | null {
  const message = delivered.message as Call | JsonRpcResponse;
  // A notification's marker, the common case: one comparison (usually of the same string, canonical-host.ts).
  if (output === FORWARD_MARKER) return handedOn(message, formOf(message), undefined, true);
  // 44 units without an id; with one, at most 116 (a string id of MAX_ID_CHARS and its quotes), 140 passing.
  if (output.length < HEAD.length + MARKER_TAIL.length || output.length > HEAD.length + ID.length + MAX_ID_CHARS + 2 + PASS_TAIL.length) {
    return null;
  }
  const tail = writtenAt(output, output.length - MARKER_TAIL.length, MARKER_TAIL)
    ? MARKER_TAIL
    : writtenAt(output, output.length - PASS_TAIL.length, PASS_TAIL)
      ? PASS_TAIL
      : null;
  if (tail === null) return null;
  const pos = readHead(output, SENT);
  if (pos < 0 || pos !== output.length - tail.length) return null;
  // Only a request's answer can pass: a passing marker without an id is no marker.
  if (tail === PASS_TAIL && SENT.id === undefined) return null;
  return handedOn(message, formOf(message), SENT.id, true);
}

const MARKER_TAIL = `,"method":"${Methods.cordonForward}"}`;
/**
 * The marker of a request handed on with its answer passing the guest: the guest keeps nothing for
 * it, and the host hands it on under an id of the interest filter's (`InterestFilter.handOnPassing`).
 */
const PASS_TAIL = `,"method":"${Methods.cordonForward}","params":{"pass":true}}`;

/** Whether `marker`, which `forwardMarker` took, hands its request on with the answer passing the guest. */
export function markerPasses(marker: string): boolean {
  return marker.length > PASS_TAIL.length && marker.endsWith(PASS_TAIL);
}

/**
 * What a guest hands on when it forwards `message`, which it was delivered, unchanged under its own
 * `id`: `carried`, the call a successor's envelope carries, toward the predecessor; `wrapped`, a
 * predecessor's call in an envelope toward the successor; `answer`, an answer to the guest's asker.
 * Null when `message` is not of that form, or `id` does not fit it (a request and an answer need
 * one, a notification has none). `marked`: by the marker (`forwardMarker`).
 */
function handedOn(message: Call | JsonRpcResponse, form: Form, id: JsonRpcId | undefined, marked = false): object | null {
  if (form === "answer") return "method" in message || id === undefined ? null : withMember(message, "id", id);
  const call = callHandedOn(message, form, marked);
  return call === null ? null : handOn(call, form, id);
}

/** How a guest hands on what it was delivered (see `handedOn`). */
export type Form = "carried" | "wrapped" | "answer";

/** The form in which a guest hands on `message`, which it was delivered: read off the message itself. */
export function formOf(message: object): Form {
  const method = (message as { method?: unknown }).method;
  if (typeof method !== "string") return "answer";
  return isProxySuccessor(method) ? "carried" : "wrapped";
}

/**
 * The call a guest hands on from `message`: the call a successor's envelope carries (`carried`),
 * or the predecessor's call itself (`wrapped`); null for an answer, or an envelope without one.
 */
export function callHandedOn(message: object, form: "carried" | "wrapped", marked: boolean): Call | null {
  if (!("method" in message)) return null;
  const call = message as Call;
  if (form === "wrapped") return call;
  // An envelope the router built carries its call. One that arrived as text (a parent
  // conductor's, in proxy mode) is read for it where the marker names no text to compare.
  const unwrapped = carriedBy(call) ?? (marked ? unwrap(call) : undefined);
  return unwrapped === undefined || typeof unwrapped === "string" ? null : unwrapped;
}

/** `call` handed on under the guest's `id` in `form`; null when the id does not fit it (a request needs one, a notification has none). */
export function handOn(call: Call, form: "carried" | "wrapped", id: JsonRpcId | undefined): object | null {
  if (isRequest(call) !== (id !== undefined)) return null;
  if (form === "carried") return id === undefined ? call : withMember(call, "id", id);
  const envelope = wrap(call, "rfd");
  return id === undefined ? envelope : withId(envelope, id);
}
