/**
 * The proxy-chain envelope: `proxy/successor {method, params}` wraps a message a proxy sends to, or
 * receives from, its successor. Only the envelope is built or taken apart here; the inner message
 * is carried as it is.
 */

import { hiddenField } from "../protocol/hidden-field.js";
import type { JsonRpcId, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest } from "../protocol/json-rpc.js";
import { paramsObject } from "../protocol/json-rpc.js";
import { Methods } from "../protocol/methods.js";
import {
  attachLazyRaw,
  attachPieces,
  COMPACT_HEAD,
  CompactNotification,
  hasRaw,
  holderOf,
  jsonOf,
  layoutOf,
  lazyRawOf,
  memberRange,
  type Range,
  rawOf,
  rawParamsPieces,
  rawSlicePieces,
  type TextHolder,
  textOf,
  UnreadNotification,
  withMember,
} from "../protocol/raw-json.js";
import type { Dialect } from "./hop.js";

export type Call = JsonRpcRequest | JsonRpcNotification;

/**
 * Whether a call is a request (it has an id). A streamed update (`UnreadNotification`) is answered
 * by its class: routing asks this four times per proxy it crosses, of messages of many shapes, and
 * `in` on such a site is a lookup of ~17 ns, where the class test is a walk of two prototypes (~8 ns
 * for both tests, measured; an `UnreadNotification` never has an id).
 */
export const isRequest = (m: Call): m is JsonRpcRequest => !(m instanceof UnreadNotification) && "id" in m;

/**
 * An envelope built in this process keeps the message it carries, in a hidden field (like the text
 * in raw-json.ts: a spread copy does not carry it, and no WeakMap is touched per hop): an
 * in-process peer (the MCP bridge) unwrapping one gets the very message back — its text and key
 * order included — instead of a copy rebuilt from `{method, params}`.
 */
const CARRIED = hiddenField<Call>();
/**
 * The message an envelope built in this process carries (undefined for one that arrived as text).
 * An envelope with lazy text keeps it on the text's builder: one field defined per envelope, not two.
 */
export const carriedBy = (envelope: object): Call | undefined =>
  (lazyRawOf(envelope)?.carried as Call | undefined) ?? CARRIED.get(envelope);
/** `lazy`: the envelope's lazy text holder (`lazyRawOf`), where it keeps what it carries; without one, the hidden field. */
const carry = (envelope: object, inner: Call, lazy: TextHolder | undefined): void => {
  if (lazy) lazy.carried = inner;
  else CARRIED.set(envelope, inner);
};

/**
 * An envelope's params `{method, params}` around an `UnreadNotification`: `params` reads the
 * notification's, so they are parsed only if something reads them (a proxy gets the envelope's
 * text). Like the notification's, the accessor is enumerable and `toJSON` writes both members.
 */
class CarriedParams {
  readonly method: string;
  readonly #inner: UnreadNotification;

  constructor(inner: UnreadNotification) {
    this.method = inner.method;
    this.#inner = inner;
  }

  get params(): unknown {
    return #inner in this ? this.#inner.params : undefined;
  }

  toJSON(): { method: string; params: unknown } {
    return { method: this.method, params: this.params };
  }
}
Object.defineProperty(CarriedParams.prototype, "params", { enumerable: true });

/**
 * Wraps a call in a `proxy/successor` envelope (in the peer's dialect). The envelope's own `_meta`
 * is hop-local. The inner params keep the text they arrived as (see raw-json.ts).
 */
export function wrap(message: Call, dialect: Dialect): Call {
  const method = dialect === "rust" ? Methods.legacyProxySuccessor : Methods.proxySuccessor;
  return envelope(message, method, isRequest(message) ? message.id : undefined);
}

/**
 * An envelope `method` around `message`, with id `id` (none: a notification's). A notification's
 * envelope is the same at every proxy it crosses (no id, the same method), so it is made once per
 * message and kept beside its text: each further hop takes it as it is, its text built once,
 * instead of a new envelope, params object, text holder and builder per proxy (messages are never
 * changed in place, so sharing one is safe).
 */
function envelope(message: Call, method: string, id: JsonRpcId | undefined): Call {
  // A notification whose params are unread keeps them so: the envelope's text is built from theirs.
  // It always has text (parse-line.ts), and keeps its envelope itself.
  const unread = message instanceof UnreadNotification;
  if (unread && id === undefined) {
    const kept = message.envelopeIn(method);
    if (kept !== undefined) return kept as Call;
  }
  const carriesParams = unread || message.params !== undefined;
  // One look at the text field: another notification's holder is where its envelope is kept.
  const memo = id === undefined && carriesParams && !unread ? holderOf(message) : undefined;
  const withText = unread || memo !== undefined || (id !== undefined && carriesParams && hasRaw(message));
  if (memo?.wrapped !== undefined && memo.wrappedIn === method) return memo.wrapped as Call;
  let params: Record<string, unknown>;
  if (unread) params = new CarriedParams(message) as unknown as Record<string, unknown>;
  else {
    params = { method: message.method };
    if (message.params !== undefined) params.params = message.params;
  }
  const wrapped: Call = id !== undefined ? { jsonrpc: "2.0", id, method, params } : { jsonrpc: "2.0", method, params };
  if (withText) {
    // Built only when written: in-process peers take the envelope apart without reading it.
    const holder = attachLazyRaw(wrapped, () => {
      const head = `{"jsonrpc":"2.0",${id !== undefined ? `"id":${jsonOf(id)},` : ""}"method":"${method}","params":{"method":`;
      // A compact notification's text from its method's value on (`"M","params":P}`) is the
      // envelope's params up to its last brace: one slice, no walk to find its params. Its text is
      // the line it was read from (parse-line.ts): one flat string, never pieces.
      if (message instanceof UnreadNotification || message instanceof CompactNotification) {
        return textOf(holder, [head, rawOf(message)!.slice(COMPACT_HEAD.length - 1), "}"]);
      }
      const params = rawParamsPieces(message);
      if (params === undefined) return JSON.stringify(wrapped);
      return textOf(holder, [head, JSON.stringify(message.method), ',"params":', ...params, "}}"]);
    });
    holder.envelopeMethod = method;
    carry(wrapped, message, holder);
  } else carry(wrapped, message, undefined);
  if (unread && id === undefined) message.keepEnvelope(method, wrapped);
  else if (memo !== undefined) {
    memo.wrapped = wrapped;
    memo.wrappedIn = method;
  }
  return wrapped;
}

/**
 * A copy of `message` with another id (spliced in place, see raw-json.ts); an envelope keeps what
 * it carries. An envelope built by `wrap` is built again around what it carries, with the new id:
 * no walk of its text to find the id it had.
 */
export function withId<T extends object>(message: T, id: JsonRpcId): T {
  const lazy = lazyRawOf(message);
  if (lazy?.envelopeMethod !== undefined && lazy.carried !== undefined) return envelope(lazy.carried as Call, lazy.envelopeMethod, id) as T;
  const copy = withMember(message, "id", id);
  const inner = carriedBy(message);
  if (inner) carry(copy, inner, lazyRawOf(copy));
  return copy;
}

/**
 * Takes a `proxy/successor` (or `_proxy/successor`) envelope apart; returns an error text if
 * malformed. The inner message is laid out as ACP peers write theirs (`jsonrpc`, `id`, `method`,
 * `params`), its params spelled as they arrived inside the envelope.
 */
export function unwrap(envelope: Call): Call | string {
  const p = paramsObject(envelope.params);
  if (!p || typeof p.method !== "string") return `${envelope.method} needs params {method, params?}`;
  const original = carriedBy(envelope);
  if (original && isRequest(original) === isRequest(envelope))
    return isRequest(envelope) ? withMember(original, "id", envelope.id) : original;
  const inner: Call = isRequest(envelope) ? { jsonrpc: "2.0", id: envelope.id, method: p.method } : { jsonrpc: "2.0", method: p.method };
  if (p.params !== undefined) inner.params = p.params;
  const text = rawOf(envelope);
  if (text === undefined || p.params === undefined) return inner;
  // Where the inner params lie: recorded by admission's scan of a proxy's text, else found by walking it.
  const known = layoutOf(envelope)?.innerParams;
  const outer = known === undefined ? memberRange(text, "params") : undefined;
  const range = known ?? (outer && memberRange(text, "params", outer[0]));
  if (range) {
    const head = `{"jsonrpc":"2.0",${idText(envelope)}"method":${JSON.stringify(p.method)},"params":`;
    // Written here, so its layout is known: the next hop sets the id and wraps the params without a walk.
    const id: Range | undefined = isRequest(envelope) ? [ID_AT, ID_AT + jsonOf(envelope.id).length] : undefined;
    attachPieces(inner, [head, ...rawSlicePieces(envelope, range[0], range[1]), "}"], {
      id,
      params: [head.length, head.length + range[1] - range[0]],
    });
  }
  return inner;
}

/** Where the id's value starts in a text written `{"jsonrpc":"2.0","id":…`. */
const ID_AT = '{"jsonrpc":"2.0","id":'.length;

const idText = (message: Call): string => (isRequest(message) ? `"id":${jsonOf(message.id)},` : "");

/**
 * `$/cancel_request` for the request this hop knows as `requestId`. `params` are the cancel's own
 * params as received (their other fields, `_meta` included, travel on); the id is the hop's.
 */
export function cancelRequest(requestId: JsonRpcId, params?: Record<string, unknown>): JsonRpcNotification {
  return { jsonrpc: "2.0", method: Methods.cancelRequest, params: { ...params, requestId } };
}

export function stripId(message: Call): JsonRpcMessage {
  if (!("id" in message)) return message;
  const { id: _id, ...rest } = message as JsonRpcRequest;
  return rest as JsonRpcNotification;
}
