/**
 * The proxy-chain envelope: `proxy/successor {method, params}` wraps a message a proxy sends to, or
 * receives from, its successor. Only the envelope is built or taken apart here; the inner message
 * is carried as it is.
 */
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest } from "../protocol/json-rpc.js";
import { paramsObject } from "../protocol/json-rpc.js";
import { attachRaw, objectMembers, rawOf } from "../protocol/raw-json.js";
import { Methods } from "../protocol/methods.js";
import type { Dialect } from "./hop.js";

export type Call = JsonRpcRequest | JsonRpcNotification;

export const isRequest = (m: Call): m is JsonRpcRequest => "id" in m;

/**
 * Wraps a call in a `proxy/successor` envelope (in the peer's dialect). The envelope's own `_meta`
 * is hop-local. The inner params keep the text they arrived as (see raw-json.ts).
 */
export function wrap(message: Call, dialect: Dialect): Call {
  const params: Record<string, unknown> = { method: message.method };
  if (message.params !== undefined) params.params = message.params;
  const method = dialect === "rust" ? Methods.legacyProxySuccessor : Methods.proxySuccessor;
  const envelope: Call = isRequest(message) ? { jsonrpc: "2.0", id: message.id, method, params } : { jsonrpc: "2.0", method, params };
  const text = rawOf(message);
  const range = text === undefined || message.params === undefined ? undefined : objectMembers(text)?.get("params");
  if (range) {
    const inner = `{"method":${JSON.stringify(message.method)},"params":${text!.slice(range[0], range[1])}}`;
    attachRaw(envelope, `{"jsonrpc":"2.0",${idText(message)}"method":"${method}","params":${inner}}`);
  }
  return envelope;
}

/**
 * Takes a `proxy/successor` (or `_proxy/successor`) envelope apart; returns an error text if
 * malformed. The inner message is laid out as ACP peers write theirs (`jsonrpc`, `id`, `method`,
 * `params`), its params spelled as they arrived inside the envelope.
 */
export function unwrap(envelope: Call): Call | string {
  const p = paramsObject(envelope.params);
  if (!p || typeof p.method !== "string") return `${envelope.method} needs params {method, params?}`;
  const inner: Call = isRequest(envelope) ? { jsonrpc: "2.0", id: envelope.id, method: p.method } : { jsonrpc: "2.0", method: p.method };
  if (p.params !== undefined) inner.params = p.params;
  const text = rawOf(envelope);
  const outer = text === undefined ? undefined : objectMembers(text)?.get("params");
  const range = outer && p.params !== undefined ? objectMembers(text!, outer[0])?.get("params") : undefined;
  if (range) attachRaw(inner, `{"jsonrpc":"2.0",${idText(envelope)}"method":${JSON.stringify(p.method)},"params":${text!.slice(range[0], range[1])}}`);
  return inner;
}

const idText = (message: Call): string => (isRequest(message) ? `"id":${JSON.stringify(message.id)},` : "");

export function stripId(message: Call): JsonRpcMessage {
  if (!("id" in message)) return message;
  const { id: _id, ...rest } = message as JsonRpcRequest;
  return rest as JsonRpcNotification;
}

