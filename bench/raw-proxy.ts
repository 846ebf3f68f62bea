/**
 * The benchmark's process proxy for `@thinkwell/conductor`: a raw NDJSON pass-through in its
 * dialect. From the predecessor, messages arrive plain and go on wrapped in
 * `_proxy/successor/request|notification`; from the successor they arrive wrapped and go back
 * plain. Requests get the proxy's own ids each way; `initialize` is answered with
 * `_meta.proxy: true` (the conductor checks each proxy accepted the proxy role).
 */
import { LineWriter, readMessages } from "./ndjson.js";

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const REQ = "_proxy/successor/request";
const NOTE = "_proxy/successor/notification";
const out = new LineWriter(process.stdout);
let next = 1;
/** Our request id → the id (and method) it answers. */
const pending = new Map<number, { id: unknown; method: string }>();

function forward(method: string, params: unknown, id: unknown, toSuccessor: boolean): void {
  if (id === undefined) {
    out.write(toSuccessor ? { jsonrpc: "2.0", method: NOTE, params: { method, params } } : { jsonrpc: "2.0", method, params });
    return;
  }
  const own = next++;
  pending.set(own, { id, method });
  out.write(
    toSuccessor ? { jsonrpc: "2.0", id: own, method: REQ, params: { method, params } } : { jsonrpc: "2.0", id: own, method, params },
  );
}

readMessages(process.stdin, (m: Json) => {
  if (typeof m.method !== "string") {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error !== undefined) return out.write({ jsonrpc: "2.0", id: p.id, error: m.error });
    const result = p.method === "initialize" ? { ...m.result, _meta: { ...(m.result?._meta ?? {}), proxy: true } } : m.result;
    return out.write({ jsonrpc: "2.0", id: p.id, result });
  }
  if (m.method === REQ || m.method === NOTE) forward(m.params.method, m.params.params, m.id, false);
  else forward(m.method, m.params, m.id, true);
});
process.stdin.on("end", () => process.exit(0));
