#!/usr/bin/env node
// A raw-JSON ACP agent that speaks MCP-over-ACP itself (advertises `mcpCapabilities.acp`), for
// probing how a proxy serves the connectionless form, malformed messages included (the SDK's
// `McpOverAcpCaller` would never send those).
//
// - `session/new` (load/resume/fork too): remembers the `{"type":"acp"}` declarations it was given.
// - `session/prompt`: each text block is one JSON probe; the answer to each is reported, in order,
//   as an `agent_message_chunk` whose text is JSON `{answer}` (`{timeout:true}` after 5 s):
//     {"send": <mcp/message params>}                     a request; `"$server:<name>"` anywhere in
//                                                         it becomes that server's serverId
//     {"send": …, "cancelAfterMs": n}                     then `$/cancel_request` for it after n ms
//     {"parallel": [<params>, …]}                         several requests at once; reports all answers
//     {"notify": <mcp/message params>}                    a notification (nothing to report: `{answer:null}`)
// Requests from the client side are answered method-not-found; notifications are collected and
// reported with the next answer as `notifications`.
import { createInterface } from "node:readline";

const out = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
const sessions = new Map(); // sessionId → [{name, serverId}]
const pending = new Map(); // my id → resolve
let nextId = 1;
let n = 0;
const inbox = []; // mcp/message notifications from the client side

function request(method, params) {
  const id = `a${nextId++}`;
  const answer = new Promise((resolve) => {
    pending.set(id, resolve);
    setTimeout(() => pending.has(id) && (pending.delete(id), resolve({ timeout: true })), 5000);
  });
  out({ id, method, params });
  return { id, answer };
}

function substitute(value, servers) {
  if (typeof value === "string" && value.startsWith("$server:"))
    return servers.find((s) => s.name === value.slice(8))?.serverId ?? "not-declared";
  if (Array.isArray(value)) return value.map((v) => substitute(v, servers));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, servers)]));
  return value;
}

const strip = (m) => ("error" in m ? { error: m.error } : "result" in m ? { result: m.result } : m);

async function probe(text, servers) {
  const p = substitute(JSON.parse(text), servers);
  if (p.notify) {
    out({ method: "mcp/message", params: p.notify });
    return { answer: null };
  }
  if (p.parallel) {
    const sent = p.parallel.map((params) => request("mcp/message", params));
    return { answers: (await Promise.all(sent.map((s) => s.answer))).map(strip) };
  }
  const sent = request("mcp/message", p.send);
  if (p.cancelAfterMs !== undefined) setTimeout(() => out({ method: "$/cancel_request", params: { requestId: sent.id } }), p.cancelAfterMs);
  return { answer: strip(await sent.answer) };
}

createInterface({ input: process.stdin }).on("line", async (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (!("method" in msg)) {
    const resolve = pending.get(msg.id);
    pending.delete(msg.id);
    return resolve?.(msg);
  }
  if (!("id" in msg)) {
    if (msg.method === "mcp/message") inbox.push(msg.params);
    return;
  }
  switch (msg.method) {
    case "initialize":
      return out({ id: msg.id, result: { protocolVersion: 1, agentCapabilities: { mcpCapabilities: { acp: true } }, authMethods: [] } });
    case "session/new":
    case "session/fork": {
      const sessionId = `raw-sess-${++n}`;
      sessions.set(
        sessionId,
        (msg.params.mcpServers ?? []).filter((s) => s.type === "acp"),
      );
      return out({ id: msg.id, result: { sessionId } });
    }
    case "session/prompt": {
      const servers = sessions.get(msg.params.sessionId) ?? [];
      for (const block of msg.params.prompt) {
        let report;
        try {
          report = await probe(block.text, servers);
        } catch (error) {
          report = { failed: String(error) };
        }
        if (inbox.length) report.notifications = inbox.splice(0);
        out({
          method: "session/update",
          params: {
            sessionId: msg.params.sessionId,
            update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: JSON.stringify(report) } },
          },
        });
      }
      return out({ id: msg.id, result: { stopReason: "end_turn" } });
    }
    default:
      return out({ id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
  }
});
