/**
 * Building the messages of a proxy test, in the conductor's words. A proxy sits between the
 * client side (its predecessor: messages arrive and leave plain) and the agent side (its successor:
 * messages arrive and leave inside `proxy/successor` envelopes).
 *
 * To deliver:  fromClient, fromAgent, agentUpdate, clientPrompt, answer, answerError
 * To expect:   toClient, toAgent, clientUpdate, clientRequest, agentNotification, result, error
 * Parts:       textChunk, thoughtChunk, textBlock
 */
// biome-ignore lint/suspicious/noExplicitAny: messages in tests are read field by field, whatever their shape
export type Json = any;
export type Id = number | string;

const jsonrpc = "2.0" as const;

/** JSON-RPC / ACP error codes, as the SDK's `ErrorCode` names them. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestCancelled: -32800,
  AuthRequired: -32000,
  Denied: -32001,
  ResourceNotFound: -32002,
} as const;

function message(method: string, params: Json, id: Id | undefined): Json {
  const m: Json = id === undefined ? { jsonrpc, method } : { jsonrpc, id, method };
  if (params !== undefined) m.params = params;
  return m;
}

/** A request (with `id`) or notification as it travels on the client side: plain. */
export function fromClient(method: string, params?: Json, id?: Id): Json {
  return message(method, params, id);
}

/** A request (with `id`) or notification from the agent side: inside a `proxy/successor` envelope. */
export function fromAgent(method: string, params?: Json, id?: Id, envelopeMeta?: Json): Json {
  const inner: Json = { method };
  if (params !== undefined) inner.params = params;
  if (envelopeMeta !== undefined) inner._meta = envelopeMeta;
  return message("proxy/successor", inner, id);
}

/** What a proxy sends toward the client side (plain): a notification, or a request with `id`. */
export function toClient(method: string, params?: Json, id?: Id): Json {
  return message(method, params, id);
}

/** What a proxy sends toward the agent side (in `proxy/successor`): a notification, or a request with `id`. */
export function toAgent(method: string, params?: Json, id?: Id): Json {
  return fromAgent(method, params, id);
}

/** A request the proxy sends toward the client side (`fs/read_text_file`, a permission request…). */
export function clientRequest(method: string, params: Json, id: Id): Json {
  return message(method, params, id);
}

/** A notification the proxy sends toward the agent side (enveloped). */
export function agentNotification(method: string, params?: Json): Json {
  return fromAgent(method, params);
}

/** A `session/update` from the agent side (enveloped), as the conductor delivers it. */
export function agentUpdate(update: Json, sessionId = "sess-1"): Json {
  return fromAgent("session/update", { sessionId, update });
}

/** A `session/update` toward the client (what a proxy forwards or makes up). */
export function clientUpdate(update: Json, sessionId = "sess-1"): Json {
  return message("session/update", { sessionId, update }, undefined);
}

/** A `session/prompt` request from the client side with one text block. */
export function clientPrompt(text: string, sessionId = "sess-1", id: Id = 1): Json {
  return message("session/prompt", { sessionId, prompt: [textBlock(text)] }, id);
}

/** A success answer (to deliver to the proxy, or to expect from it). */
export function result(id: Id, value: Json): Json {
  return { jsonrpc, id, result: value };
}

/** An error answer. */
export function error(id: Id, code: number, messageText: string, data?: Json): Json {
  const e: Json = { code, message: messageText };
  if (data !== undefined) e.data = data;
  return { jsonrpc, id, error: e };
}

/** Answers one of the proxy's requests (`sent` is the request it sent, or its id). */
export function answer(sent: Json | Id, value: Json): Json {
  return result(typeof sent === "object" ? sent.id : sent, value);
}

/** Answers one of the proxy's requests with an error. */
export function answerError(sent: Json | Id, code: number, messageText: string): Json {
  return error(typeof sent === "object" ? sent.id : sent, code, messageText);
}

export function textBlock(text: string): Json {
  return { type: "text", text };
}

/** A content chunk update with one text block (`agent_message_chunk` unless `kind` says otherwise). */
export function textChunk(text: string, kind = "agent_message_chunk"): Json {
  return { sessionUpdate: kind, content: textBlock(text) };
}

/** An `agent_thought_chunk` with one text block. */
export function thoughtChunk(text: string): Json {
  return textChunk(text, "agent_thought_chunk");
}

/** The inner message of a `proxy/successor` envelope (`{method, params}` as JSON-RPC), or the message itself. */
export function unwrap(m: Json): Json {
  if (m?.method !== "proxy/successor" && m?.method !== "_proxy/successor") return m;
  const { method, params } = m.params ?? {};
  return message(method, params, m.id);
}
