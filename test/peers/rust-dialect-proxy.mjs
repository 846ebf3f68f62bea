#!/usr/bin/env node
// A native proxy that speaks only the Rust SDK's dialect of the proxy-chains protocol:
// `_proxy/initialize`, `_proxy/successor` with a legacy `meta` field. It answers the RFD's
// `proxy/initialize` with method-not-found, as such a proxy would. It marks every
// agent_message_chunk text with a leading "»" so tests can see it did its job.
// With --forward-unknown it behaves like a proxy built on the Rust SDK (sacp): every method it does
// not handle, `proxy/initialize` included, is forwarded to its successor. With --strict it exits
// (code 3) if it is ever sent the RFD's `proxy/initialize`.
import { createInterface } from "node:readline";

const out = (m) => process.stdout.write(JSON.stringify(m) + "\n");
let nextId = 1;
const pending = new Map(); // my id -> { id: the id to answer, then?: (result) => result }

function request(message, answerTo) {
  const id = `r${nextId++}`;
  pending.set(id, answerTo);
  out({ ...message, jsonrpc: "2.0", id });
}

createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (!("method" in msg)) {
    const to = pending.get(msg.id);
    pending.delete(msg.id);
    if (to) out("error" in msg ? { jsonrpc: "2.0", id: to, error: msg.error } : { jsonrpc: "2.0", id: to, result: msg.result });
    return;
  }
  if (msg.method === "proxy/initialize" && process.argv.includes("--strict")) process.exit(3);
  if (msg.method === "proxy/initialize" && !process.argv.includes("--forward-unknown"))
    return out({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } });
  if (msg.method === "_proxy/initialize") {
    return request({ method: "_proxy/successor", params: { method: "initialize", params: msg.params, meta: { hop: "local" } } }, msg.id);
  }
  if (msg.method === "_proxy/successor") {
    // From my successor (the agent side): mark message chunks, then hand it to my predecessor.
    const inner = msg.params;
    const update = inner.params?.update;
    if (inner.method === "session/update" && update?.sessionUpdate === "agent_message_chunk" && update.content?.type === "text") {
      update.content.text = `»${update.content.text}`;
    }
    const plain = { method: inner.method, params: inner.params };
    return "id" in msg ? request(plain, msg.id) : out({ jsonrpc: "2.0", ...plain });
  }
  // From my predecessor (the client side): forward to my successor.
  const wrapped = { method: "_proxy/successor", params: { method: msg.method, params: msg.params, meta: {} } };
  return "id" in msg ? request(wrapped, msg.id) : out({ jsonrpc: "2.0", ...wrapped });
});
