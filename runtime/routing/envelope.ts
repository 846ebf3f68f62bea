/**
 * The proxy-chain envelope: `proxy/successor {method, params}` wraps a message a proxy sends to, or
 * receives from, its successor. Only the envelope is built or taken apart here; the inner message
 * is carried as it is.
 */
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest } from "../protocol/json-rpc.js";
import { paramsObject } from "../protocol/json-rpc.js";
import { Methods } from "../protocol/methods.js";
import type { Dialect } from "./hop.js";

export type Call = JsonRpcRequest | JsonRpcNotification;

export const isRequest = (m: Call): m is JsonRpcRequest => "id" in m;

/** Wraps a call in a `proxy/successor` envelope (in the peer's dialect). The envelope's own `_meta` is hop-local. */
export function wrap(message: Call, dialect: Dialect): Call {
  const params: Record<string, unknown> = { method: message.method };
  if (message.params !== undefined) params.params = message.params;
  const method = dialect === "rust" ? Methods.legacyProxySuccessor : Methods.proxySuccessor;
  const envelope: Call = { jsonrpc: "2.0", method, params };
  if (isRequest(message)) (envelope as JsonRpcRequest).id = message.id;
  return envelope;
}

/** Takes a `proxy/successor` (or `_proxy/successor`) envelope apart; returns an error text if malformed. */
export function unwrap(envelope: Call): Call | string {
  const p = paramsObject(envelope.params);
  if (!p || typeof p.method !== "string") return `${envelope.method} needs params {method, params?}`;
  const inner: Call = { jsonrpc: "2.0", method: p.method };
  if (p.params !== undefined) inner.params = p.params;
  if (isRequest(envelope)) (inner as JsonRpcRequest).id = envelope.id;
  return inner;
}

export function stripId(message: Call): JsonRpcMessage {
  if (!("id" in message)) return message;
  const { id: _id, ...rest } = message as JsonRpcRequest;
  return rest as JsonRpcNotification;
}

