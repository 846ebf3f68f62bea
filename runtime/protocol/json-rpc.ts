/**
 * JSON-RPC 2.0 message shapes, as plain parsed JSON.
 *
 * Messages stay the objects `JSON.parse` produced: the conductor reads `id`, `method` and
 * envelope fields and never maps params through a typed model, so unknown fields, `_meta` and
 * extension methods survive every hop. Only the top-level fields it rewrites (id, method,
 * params of an envelope) are replaced, on a shallow copy.
 */
import { UnreadNotification } from "./raw-json.js";

export type JsonRpcId = string | number;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: string;
  params?: unknown;
  [extra: string]: unknown;
}

export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: unknown;
  [extra: string]: unknown;
}

export interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: JsonRpcId | null;
  result?: unknown;
  error?: JsonRpcError;
  [extra: string]: unknown;
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export const ErrorCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  requestCancelled: -32800,
} as const;

export type Classified =
  | { kind: "request"; message: JsonRpcRequest }
  | { kind: "notification"; message: JsonRpcNotification }
  | { kind: "response"; message: JsonRpcResponse }
  | { kind: "invalid"; reason: string; id: JsonRpcId | null };

/**
 * Longest string id and method Cordon accepts. Both are kept while a request is in flight (in the
 * pending maps of two hops), so without a bound a peer could park megabytes per request; real
 * ones are a few dozen characters (a UUID is 36).
 */
export const MAX_ID_LENGTH = 1024;
export const MAX_METHOD_LENGTH = 1024;

const isId = (v: unknown): v is JsonRpcId =>
  (typeof v === "string" && v.length <= MAX_ID_LENGTH) || (typeof v === "number" && Number.isFinite(v));
const idProblem = (v: unknown): string =>
  typeof v === "string" ? `id longer than ${MAX_ID_LENGTH} characters` : "id must be a string or a number";

/** Sorts a parsed value into request / notification / response, or says why it is none of them. */
export function classify(value: unknown): Classified {
  // A streamed update read with its params unread (parse-line.ts) is a notification by its read:
  // its line began `{"jsonrpc":"2.0","method":"`, and the method has no id beside it. Only the
  // method's length is left to judge. Most messages routed are these, and the reads below, on a
  // site that sees every shape of message, cost ~60 ns against ~20 for this (measured).
  if (value instanceof UnreadNotification && value.method.length <= MAX_METHOD_LENGTH) {
    return { kind: "notification", message: value as unknown as JsonRpcNotification };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { kind: "invalid", reason: Array.isArray(value) ? "batches are not supported" : "a message must be a JSON object", id: null };
  }
  const msg = value as Record<string, unknown>;
  const id = isId(msg.id) ? msg.id : null;
  if (msg.jsonrpc !== "2.0") return { kind: "invalid", reason: 'missing "jsonrpc": "2.0"', id };
  if (typeof msg.method === "string") {
    if (msg.method.length > MAX_METHOD_LENGTH) return { kind: "invalid", reason: `method longer than ${MAX_METHOD_LENGTH} characters`, id };
    if (!("id" in msg)) return { kind: "notification", message: msg as JsonRpcNotification };
    if (isId(msg.id)) return { kind: "request", message: msg as JsonRpcRequest };
    return { kind: "invalid", reason: `request ${idProblem(msg.id)}`, id: null };
  }
  if ("method" in msg) return { kind: "invalid", reason: "method must be a string", id };
  if ("result" in msg || "error" in msg) {
    if (!("id" in msg)) return { kind: "invalid", reason: "response without a valid id", id: null };
    if (msg.id !== null && !isId(msg.id)) return { kind: "invalid", reason: `response ${idProblem(msg.id)}`, id: null };
    if ("error" in msg) {
      const e = msg.error as Record<string, unknown> | null;
      if (typeof e !== "object" || e === null || typeof e.code !== "number" || typeof e.message !== "string") {
        return { kind: "invalid", reason: "error must be {code: number, message: string}", id };
      }
    }
    return { kind: "response", message: msg as JsonRpcResponse };
  }
  return { kind: "invalid", reason: "neither a request, a notification nor a response", id };
}

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcResponse {
  const error: JsonRpcError = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: "2.0", id, error };
}

/** Map key for ids: 1 and "1" are different ids. */
export const idKey = (id: JsonRpcId): string => (typeof id === "number" ? `n${id}` : `s${id}`);
export const idFromKey = (key: string): JsonRpcId => (key[0] === "n" ? Number(key.slice(1)) : key.slice(1));

export const paramsObject = (params: unknown): Record<string, unknown> | undefined =>
  typeof params === "object" && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : undefined;
