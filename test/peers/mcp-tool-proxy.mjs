#!/usr/bin/env node
// A trusted native proxy (`cordon run --proxy-cmd`) that provides MCP tools over MCP-over-ACP,
// in raw JSON, standing in for the AssemblyScript tool proxies until those exist.
//
// `--servers tools[,more…]` (default `tools`): in every session setup request it forwards
// (session/new, load, resume, fork) it appends one `{"type":"acp","name":<name>,"serverId":<id>}`
// per server name, with a serverId unique on the connection, and remembers which ACP session the
// id was declared for (from the params for load/resume, from the answer for new/fork).
//
// It serves those servers in both MCP-over-ACP forms, whichever the agent side uses (with
// `--forms connection`, only the connection form: a connectionless `mcp/message` for one of its
// servers gets -32602, as from a proxy written before the schema changed; with `--forms
// connectionless`, only the connectionless form: `mcp/connect` for one of its servers gets -32601,
// as from the ACP SDK's McpOverAcpProvider, which has no mcp/connect):
// - connection form: `mcp/connect {serverId}` → `{connectionId}`; `mcp/message {connectionId,
//   method, params?}` answered with the raw MCP result (an MCP error is the outer error);
//   `mcp/disconnect {connectionId}` → `{}`. Also the legacy `_mcp/*` names.
// - connectionless form: `mcp/message {serverId, requestId, method, params?}` answered
//   `{result}` or `{error}`; outer -32602 for a missing or non-string `requestId`, one already
//   active for the server, or params that are not an object or null; a cancelled call is answered
//   with the outer -32800 (as the ACP SDK's McpOverAcpProvider does).
// Unknown connection or server ids are not this proxy's: the message travels on toward the client.
// An `mcp/message` for one of its ids without a string `method` → -32602.
//
// MCP methods: initialize, notifications/initialized, ping, tools/list, tools/call. Tools:
//   echo {text}      → "echo: <text>"
//   whoami           → "session=<acp session id> server=<name> serverId=<id> form=<connection|connectionless>"
//   slow {ms}        → waits (≤ 30 s) then "slept <ms>"; `$/cancel_request` for the outer
//                      request ends it with a -32800 error
//   fail             → a tool error (isError: true)
//   ping-client      → sends MCP `ping` to the agent's MCP client through the connection, reports the answer
//   stats            → JSON of what this proxy saw: connects, disconnects, cancels, notifications
// `$/cancel_request` is translated per hop for everything it forwards.
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";

const serverNames = (() => {
  const i = process.argv.indexOf("--servers");
  return (i >= 0 ? process.argv[i + 1] : "tools").split(",").filter(Boolean);
})();
const nonce = randomUUID().slice(0, 8);
const forms = (() => {
  const i = process.argv.indexOf("--forms");
  return i >= 0 ? process.argv[i + 1] : "both";
})();
const connectionOnly = forms === "connection";

const out = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
const key = (id) => JSON.stringify(id);
let nextId = 1;
const pending = new Map(); // my request id → (answer message) => void
const forwarded = new Map(); // "s|p" + their id key → my id (for $/cancel_request)

const servers = new Map(); // serverId → { name, sessionId }
const connections = new Map(); // connectionId → { serverId }
const running = new Map(); // their request id key → { cancel() }
const active = new Set(); // connectionless: serverId + requestId of the calls in progress
const stats = { connects: [], disconnects: [], cancels: [], notifications: [] };
let serial = 0;

function request(message, onAnswer) {
  const id = `t${nextId++}`;
  pending.set(id, onAnswer);
  out({ ...message, id });
  return id;
}
const wrap = (method, params) => ({ method: "proxy/successor", params: params === undefined ? { method } : { method, params } });

/** Forwards a call to the successor (wrapped) or the predecessor (plain); `then` may edit the answer. */
function forward(msg, toSuccessor, then = (a) => a) {
  const plain = { method: msg.method, ...(msg.params !== undefined ? { params: msg.params } : {}) };
  const outgoing = toSuccessor ? wrap(msg.method, msg.params) : plain;
  if (!("id" in msg)) return out(outgoing);
  const dir = toSuccessor ? "s|" : "p|";
  const mine = request(outgoing, (answer) => {
    forwarded.delete(dir + key(msg.id));
    const edited = then(answer);
    out("error" in edited ? { id: msg.id, error: edited.error } : { id: msg.id, result: edited.result });
  });
  forwarded.set(dir + key(msg.id), mine);
}

function cancelForwarded(params, fromSuccessor) {
  const theirs = params?.requestId;
  const held = running.get(key(theirs));
  if (held) return held.cancel("$/cancel_request");
  const mine = forwarded.get((fromSuccessor ? "p|" : "s|") + key(theirs));
  if (mine === undefined) return;
  const cancel = { method: "$/cancel_request", params: { ...params, requestId: mine } };
  out(fromSuccessor ? cancel : wrap(cancel.method, cancel.params));
}

// ---- session setup -------------------------------------------------------------------------

const SETUP = new Set(["session/new", "session/load", "session/resume", "session/fork"]);

function setup(msg) {
  const params = { ...(msg.params ?? {}) };
  const declared = serverNames.map((name) => {
    const serverId = `${name}:${nonce}:${++serial}`;
    servers.set(serverId, { name, sessionId: msg.method === "session/load" || msg.method === "session/resume" ? params.sessionId : null });
    return { type: "acp", name, serverId };
  });
  params.mcpServers = [...(Array.isArray(params.mcpServers) ? params.mcpServers : []), ...declared];
  forward({ ...msg, params }, true, (answer) => {
    for (const d of declared) {
      if ("error" in answer) servers.delete(d.serverId);
      else if (typeof answer.result?.sessionId === "string") servers.get(d.serverId).sessionId = answer.result.sessionId;
    }
    return answer;
  });
}

// ---- MCP ------------------------------------------------------------------------------------

const TOOLS = [
  { name: "echo", description: "echoes its text", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
  { name: "whoami", description: "the ACP session this server was declared for", inputSchema: { type: "object", properties: {} } },
  { name: "slow", description: "waits ms milliseconds", inputSchema: { type: "object", properties: { ms: { type: "number" } } } },
  { name: "fail", description: "always fails", inputSchema: { type: "object", properties: {} } },
  { name: "ping-client", description: "pings the agent's MCP client", inputSchema: { type: "object", properties: {} } },
  { name: "stats", description: "what this proxy saw", inputSchema: { type: "object", properties: {} } },
];
const VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const text = (t, isError = false) => ({ result: { content: [{ type: "text", text: t }], ...(isError ? { isError: true } : {}) } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One MCP request → {result} or {error}. `ctx`: {serverId, connectionId?, outerId}. */
async function mcp(ctx, method, params) {
  const server = servers.get(ctx.serverId);
  switch (method) {
    case "initialize": {
      const asked = params?.protocolVersion;
      return {
        result: {
          protocolVersion: VERSIONS.includes(asked) ? asked : "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: `test-${server.name}`, version: "1.0.0" },
        },
      };
    }
    case "ping":
      return { result: {} };
    case "tools/list":
      return { result: { tools: TOOLS } };
    case "tools/call":
      break;
    default:
      return { error: { code: -32601, message: `Method not found: ${method}` } };
  }
  const args = params?.arguments ?? {};
  switch (params?.name) {
    case "echo":
      return text(`echo: ${args.text ?? ""}`);
    case "whoami": {
      for (let i = 0; i < 500 && !server.sessionId; i++) await sleep(10); // declared in a session/new not answered yet
      return text(
        `session=${server.sessionId} server=${server.name} serverId=${ctx.serverId} form=${ctx.connectionId ? "connection" : "connectionless"}`,
      );
    }
    case "slow": {
      const ms = Math.min(Number(args.ms) || 0, 30_000);
      const outcome = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve("done"), ms);
        const entry = {
          cancel: (how) => {
            clearTimeout(timer);
            stats.cancels.push({ how, serverId: ctx.serverId });
            resolve("cancelled");
          },
        };
        running.set(key(ctx.outerId), entry);
      });
      running.delete(key(ctx.outerId));
      return outcome === "done" ? text(`slept ${ms}`) : { error: { code: -32800, message: "Request cancelled" } };
    }
    case "fail":
      return text("this tool always fails", true);
    case "ping-client": {
      if (!ctx.connectionId) return text("ping-client needs the connection form", true);
      const answer = await new Promise((resolve) =>
        request(wrap("mcp/message", { connectionId: ctx.connectionId, method: "ping" }), resolve),
      );
      return "error" in answer
        ? text(`client ping failed: ${answer.error.message}`, true)
        : text(`client answered ping: ${JSON.stringify(answer.result)}`);
    }
    case "stats":
      return text(JSON.stringify(stats));
    default:
      return { error: { code: -32602, message: `Unknown tool: ${params?.name}` } };
  }
}

/** `mcp/connect`, `mcp/message`, `mcp/disconnect` from the successor; false when not ours. */
function fromAgentSide(msg) {
  const p = msg.params ?? {};
  const method = msg.method.replace(/^_/, "");
  const answer = (m) => "id" in msg && out({ id: msg.id, ...m });
  if (method === "mcp/connect") {
    const serverId = p.serverId ?? p.acp_url;
    if (!servers.has(serverId)) return false;
    if (forms === "connectionless") {
      answer({ error: { code: -32601, message: "Method not found: mcp/connect" } });
      return true;
    }
    const connectionId = `conn:${nonce}:${++serial}`;
    connections.set(connectionId, { serverId });
    stats.connects.push({ serverId, connectionId });
    answer({ result: { connectionId } });
    return true;
  }
  if (method === "mcp/disconnect") {
    const connectionId = p.connectionId ?? p.connection_id;
    if (!connections.has(connectionId)) return false;
    connections.delete(connectionId);
    stats.disconnects.push(connectionId);
    answer({ result: {} });
    return true;
  }
  if (method !== "mcp/message") return false;
  const connection = typeof p.connectionId === "string" ? connections.get(p.connectionId) : undefined;
  const serverId = connection ? connection.serverId : p.serverId;
  if (!connection && (typeof p.connectionId === "string" || !servers.has(serverId))) return false;
  if (!connection && connectionOnly) {
    answer({ error: { code: -32602, message: "mcp/message needs params {connectionId, method, params?}" } });
    return true;
  }
  if (typeof p.method !== "string") {
    answer({ error: { code: -32602, message: "mcp/message needs a string method" } });
    return true;
  }
  if (!("id" in msg)) {
    stats.notifications.push({ connectionId: p.connectionId ?? null, method: p.method });
    return true;
  }
  const ctx = { serverId, connectionId: connection ? p.connectionId : null, outerId: msg.id };
  if (!connection) {
    const route = JSON.stringify([serverId, p.requestId]);
    const invalid =
      typeof p.requestId !== "string"
        ? "mcp/message needs a string requestId"
        : p.params !== undefined && p.params !== null && (typeof p.params !== "object" || Array.isArray(p.params))
          ? "mcp/message params must be an object or null"
          : active.has(route)
            ? "duplicate active MCP request ID"
            : null;
    if (invalid) {
      answer({ error: { code: -32602, message: invalid } });
      return true;
    }
    active.add(route);
    void mcp(ctx, p.method, p.params ?? undefined).then((outcome) => {
      active.delete(route);
      // Connectionless: the carrier {result} / {error}; a cancelled call is an outer error.
      answer(outcome.error?.code === -32800 ? { error: outcome.error } : { result: outcome });
    });
    return true;
  }
  void mcp(ctx, p.method, p.params).then((outcome) => answer("error" in outcome ? { error: outcome.error } : { result: outcome.result }));
  return true;
}

// ---- the loop -------------------------------------------------------------------------------

createInterface({ input: process.stdin }).on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (!("method" in msg)) {
    const handler = pending.get(msg.id);
    pending.delete(msg.id);
    return handler?.(msg);
  }
  if (msg.method === "proxy/initialize" || msg.method === "_proxy/initialize") {
    return request(wrap("initialize", msg.params), (answer) =>
      out("error" in answer ? { id: msg.id, error: answer.error } : { id: msg.id, result: answer.result }),
    );
  }
  if (msg.method === "proxy/successor" || msg.method === "_proxy/successor") {
    const inner = {
      method: msg.params.method,
      ...(msg.params.params !== undefined ? { params: msg.params.params } : {}),
      ...("id" in msg ? { id: msg.id } : {}),
    };
    if (inner.method === "$/cancel_request") return cancelForwarded(inner.params, true);
    if (fromAgentSide(inner)) return;
    return forward(inner, false);
  }
  // From the predecessor (client side).
  if (msg.method === "$/cancel_request") return cancelForwarded(msg.params, false);
  if (SETUP.has(msg.method) && "id" in msg) return setup(msg);
  forward(msg, true);
});
