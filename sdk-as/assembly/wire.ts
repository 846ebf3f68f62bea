// The wire: the JSON-RPC texts a proxy sends, assembled from literal pieces and raw slices of what
// it received (an unedited message leaves as exactly the text that arrived; only the envelope and
// the id change; or, where the host offered to take so, `_cordon/forward` alone, or with the one
// value edited). Two settings here, the host's two offers; the bookkeeping is in channel.ts.
import { JSON } from "json-as";
import { takeDelivered } from "./abi";
import { Builder, RawObject, quote } from "./json";
import { Message, Side } from "./messages";

export const HEAD = '{"jsonrpc":"2.0"';

/** Key of a received request in the open map: side + the conductor's id (the two sides' ids are kept apart). */
export function key(from: Side, id: string): string {
  return (from == Side.Client ? "c" : "a") + id;
}

/** Points a message at its method and params in the received text `obj.src`. */
export function fill(m: Message, method: string, from: Side, obj: RawObject, pi: i32, mi: i32 = obj.indexOf("method")): void {
  m.method = method;
  m.from = from;
  m._src = obj.src;
  if (mi >= 0) {
    m._mStart = obj.valueStart(mi);
    m._mEnd = obj.valueEnd(mi);
    m._method = method;
  }
  if (pi >= 0) {
    m._pStart = obj.valueStart(pi);
    m._pEnd = obj.valueEnd(pi);
    if (pi == obj.nestedIndex) {
      const view = obj.nested!;
      m._view = view;
      m._viewGen = view.generation;
    }
  }
}

/**
 * The proxy's own numeric id from a response's raw id (the code units between two pointers, read
 * in place: a response's id is never kept), or 0 when it is not one of ours.
 */
export function parseId(start: usize, end: usize): i64 {
  const n = (end - start) >> 1;
  if (n == 0 || n > 18) return 0;
  let v: i64 = 0;
  for (let p = start; p < end; p += 2) {
    const c = load<u16>(p);
    if (c < 0x30 || c > 0x39) return 0;
    v = v * 10 + (c - 0x30);
  }
  return v;
}

/** An error response to the request with raw id `id` ("" → null). `data` is JSON text or "". */
export function errorResponse(id: string, code: i32, message: string, data: string): string {
  const b = Builder.begin()
    .str(HEAD)
    .str(',"id":')
    .str(id.length ? id : "null")
    .str(',"error":{"code":')
    .str(code.toString())
    .str(',"message":')
    .str(quote(message));
  if (data.length) b.str(',"data":').str(data);
  return b.str("}}").build();
}

/** A success response to the request with raw id `id`; `result` is JSON text. */
export function resultResponse(id: string, result: string): string {
  return Builder.begin().str(HEAD).str(',"id":').str(id).str(',"result":').str(result).str("}").build();
}

/** JSON text of a result or params value: a `JSON.Raw` as is, anything else through json-as. */
export function toJson<T>(value: T): string {
  if (isString<T>()) {
    ERROR("pass JSON.Raw.from(text) for JSON text, or a JSON.Obj / @json object");
  }
  if (value instanceof JSON.Raw) return changetype<JSON.Raw>(value).data;
  return JSON.stringify<T>(value);
}

/**
 * A request (`id` non-empty) or notification toward side `to` carrying a received message's
 * params: wrapped in `proxy/successor` toward the agent side, plain toward the client side. Its
 * pieces, not yet assembled: `sendBuilt` sends them with no string in between (`.build()` makes one).
 */
export function envelopeOf(to: Side, id: string, method: string, message: Message): Builder {
  const b = Builder.begin().str(HEAD);
  if (id.length) b.str(',"id":').str(id);
  b.str(to == Side.Agent ? ',"method":"proxy/successor","params":{"method":' : ',"method":');
  if (message._mStart != 0 && method == message._method) b.slice(message._src, message._mStart, message._mEnd);
  else b.str(quote(method));
  if (message.changed && message._params != null) {
    b.str(',"params":').str(JSON.stringify(message._params!));
  } else if (message._edit != null) {
    // one raw edit: the received params with one range replaced
    b.str(',"params":')
      .slice(message._src, message._pStart, message._editStart)
      .str(message._edit!)
      .slice(message._src, message._editEnd, message._pEnd);
  } else if (message._pStart != 0) {
    b.str(',"params":').slice(message._src, message._pStart, message._pEnd);
  }
  if (to == Side.Agent) b.str("}");
  return b.str("}");
}

/** The host offered `_cordon/forward` in its `_cordon/configure` (`forwardOffered`). */
let forwardMarkerOn = false;
/** The host offered `_cordon/forward` with an edit too (`forwardEdit`, see `handOnEdit`). */
let forwardEditOn = false;

/** Set from `_cordon/configure`: whether the host takes `_cordon/forward` (see `handOnMarker`), and with an edit (`handOnEdit`). */
export function forwardOffered(on: bool, edits: bool): void {
  forwardMarkerOn = on;
  forwardEditOn = on && edits;
}

/** Whether the host takes `_cordon/forward` with an edit (`handOnEdit`). */
export function editsOffered(): bool {
  return forwardEditOn;
}

/**
 * The methods whose answers the proxy sees when it forwards such a request (`answers` in
 * `_cordon/configure`, from its manifest's `watches.answers`); null when the host offered none, so
 * every answer comes back through the proxy.
 */
let watchedAnswers: Set<string> | null = null;

/** Set from `_cordon/configure`: its `answers`, or null when absent. */
export function answersOffered(list: string[] | null): void {
  if (list == null) {
    watchedAnswers = null;
    return;
  }
  const set = new Set<string>();
  for (let i = 0; i < list.length; i++) set.add(list[i]);
  watchedAnswers = set;
}

/** Whether the host offered `answers` (some request's answer may go past the proxy). */
export function answersPassing(): bool {
  return watchedAnswers != null;
}

/**
 * Whether the answer to a forwarded request of `method` may go past the proxy, straight to whoever
 * sent the request: the host offered it and the manifest does not name the method in `answers`.
 */
export function answerMayPass(method: string): bool {
  const watched = watchedAnswers;
  return watched != null && !watched.has(method);
}

/**
 * Whether `src` — the text a message or answer was read from, which it leaves as it came — may go
 * as `_cordon/forward` instead of being written out: the host offered it, and `src` is what it
 * delivered in this `receive`, not yet handed on by a marker (true once per `receive`). `id`, the
 * id the guest hands it on under, must be one the host reads in the marker: digits, or none.
 * Written out, the same message would be compared by the host with what it holds; the marker
 * spares the guest the copy and the host the copy out and the comparison.
 */
export function mayMark(src: string, id: string): bool {
  if (!forwardMarkerOn || id.length > 15) return false;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c < 0x30 || c > 0x39 || (i == 0 && c == 0x30 && id.length > 1)) return false;
  }
  return takeDelivered(src); // last: it is used up
}

/**
 * `{"jsonrpc":"2.0"[,"id":ID],"method":"_cordon/forward"}`: the message delivered in this `receive`,
 * handed on unchanged. `pass`: a request whose answer goes past the proxy (`answerMayPass`), marked
 * `…"_cordon/forward","params":{"pass":true}}`.
 */
export function handOnMarker(id: string, pass: bool = false): Builder {
  const b = Builder.begin().str(HEAD);
  if (id.length) b.str(',"id":').str(id);
  return b.str(pass ? ',"method":"_cordon/forward","params":{"pass":true}}' : ',"method":"_cordon/forward"}');
}

/**
 * `{"jsonrpc":"2.0"[,"id":ID],"method":"_cordon/forward","params":{"at":S,"end":E,"value":V}}`: the
 * message delivered in this `receive`, handed on with its one raw edit — code units [S, E) of its
 * params text replaced by the JSON value V (the host puts the comma an inserted element needs) —
 * instead of the whole edited text (the host's `runtime/components/edited-forward.ts`). `pass`: as
 * for `handOnMarker`, written `"params":{"pass":true,"at":…`.
 */
export function handOnEdit(id: string, message: Message, pass: bool = false): Builder {
  const b = Builder.begin().str(HEAD);
  if (id.length) b.str(',"id":').str(id);
  return b
    .str(pass ? ',"method":"_cordon/forward","params":{"pass":true,"at":' : ',"method":"_cordon/forward","params":{"at":')
    .str(((message._editStart - message._pStart) >> 1).toString())
    .str(',"end":')
    .str(((message._editEnd - message._pStart) >> 1).toString())
    .str(',"value":')
    .str(message._editValue!)
    .str("}}");
}

/** Like `envelope`, with params given as JSON text ("" for none). */
export function build(to: Side, id: string, method: string, params: string): string {
  const b = Builder.begin().str(HEAD);
  if (id.length) b.str(',"id":').str(id);
  if (to == Side.Agent) b.str(',"method":"proxy/successor","params":{"method":').str(quote(method));
  else b.str(',"method":').str(quote(method));
  if (params.length) b.str(',"params":').str(params);
  if (to == Side.Agent) b.str("}");
  return b.str("}").build();
}

/** A `_cordon/log` notification. */
export function logText(level: string, message: string): string {
  return Builder.begin()
    .str(HEAD)
    .str(',"method":"_cordon/log","params":{"level":')
    .str(quote(level))
    .str(',"message":')
    .str(quote(message))
    .str("}}")
    .build();
}

/** `{"sessionId":…,"update":<update JSON>}`: the params of a `session/update`. */
export function updateParams(sessionId: string, update: string): string {
  return Builder.begin().str('{"sessionId":').str(quote(sessionId)).str(',"update":').str(update).str("}").build();
}

/** A content chunk update (`agent_message_chunk`, `agent_thought_chunk`, …) with one text block. */
export function textChunkUpdate(kind: string, text: string): string {
  return Builder.begin()
    .str('{"sessionUpdate":')
    .str(quote(kind))
    .str(',"content":{"type":"text","text":')
    .str(quote(text))
    .str("}}")
    .build();
}
