#!/usr/bin/env node
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
// A raw-JSON ACP agent that speaks MCP-over-ACP itself in the connection form (advertises
// `mcpCapabilities.acp`), with the MCP TypeScript SDK's own `Client` as its MCP client: the client
// declares `roots`, `sampling` and `elicitation` and answers them as an agent would — its roots
// are the session's cwd, its "model" (this agent has none: it echoes) writes `model saw: <text>`,
// and its user accepts every elicitation with `{"name":"Ada"}`.
//
// - `session/new`: remembers the `{"type":"acp"}` declarations it was given, and the cwd.
// - `session/prompt`: each line `call <server> <tool> [<json arguments>]` calls that tool through
//   the server's MCP client (connected on first use: `mcp/connect {serverId}`, then
//   `mcp/message {connectionId, method, params?}` both ways); each answer is one
//   `agent_message_chunk`: `<tool>: <text>` (`<tool> failed: <text>` for a tool error). `notes`
//   reports the MCP notifications the server sent the client (`list_changed`), in order;
//   `roots changed` sends the server `notifications/roots/list_changed`.
// Requests from the client side other than `mcp/message` for a connection are answered method-not-found.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const out = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
const sessions = new Map(); // sessionId → {cwd, servers: [{name, serverId}], clients: Map<name, Promise<Client>>, notes: []}
const pending = new Map(); // my id → resolve
const transports = new Map(); // connectionId → transport
let nextId = 1;
let n = 0;

function request(method, params) {
  const id = `a${nextId++}`;
  out({ id, method, params });
  return new Promise((resolve) => pending.set(id, resolve));
}

/** An MCP transport over the ACP connection, in MCP-over-ACP's connection form. */
class ConnectionTransport {
  constructor(serverId) {
    this.serverId = serverId;
    this.connectionId = null;
    this.asked = new Map(); // local MCP id → the ACP request id to answer
  }
  async start() {
    const answer = await request("mcp/connect", { serverId: this.serverId });
    if (answer.error) throw new Error(`mcp/connect refused: ${answer.error.message}`);
    this.connectionId = answer.result.connectionId;
    transports.set(this.connectionId, this);
  }
  async send(message) {
    if (!("method" in message)) {
      // The client's answer to the server's request.
      const acpId = this.asked.get(message.id);
      this.asked.delete(message.id);
      return out("error" in message ? { id: acpId, error: message.error } : { id: acpId, result: message.result });
    }
    const params = { connectionId: this.connectionId, method: message.method };
    if (message.params !== undefined) params.params = message.params;
    if (!("id" in message)) return out({ method: "mcp/message", params });
    const answer = await request("mcp/message", params);
    this.onmessage?.(
      answer.error ? { jsonrpc: "2.0", id: message.id, error: answer.error } : { jsonrpc: "2.0", id: message.id, result: answer.result },
    );
  }
  /** An `mcp/message` for this connection from the client side. */
  fromServer(acpId, p) {
    const inner = { jsonrpc: "2.0", method: p.method };
    if (p.params !== undefined && p.params !== null) inner.params = p.params;
    if (acpId !== undefined) {
      const local = `srv-${nextId++}`;
      this.asked.set(local, acpId);
      inner.id = local;
    }
    this.onmessage?.(inner);
  }
  async close() {
    transports.delete(this.connectionId);
    this.onclose?.();
  }
}

function clientFor(session, name) {
  if (!session.clients.has(name)) {
    const server = session.servers.find((s) => s.name === name);
    if (!server) throw new Error(`no MCP server ${name} in this session`);
    const client = new Client(
      { name: "connection-agent", version: "1.0.0" },
      { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} } },
    );
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(session.cwd).href, name: "cwd" }] }));
    client.setRequestHandler(CreateMessageRequestSchema, (r) => ({
      role: "assistant",
      content: { type: "text", text: `model saw: ${r.params.messages.map((m) => m.content.text).join(" ")}` },
      model: "echo",
      stopReason: "endTurn",
    }));
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { name: "Ada" } }));
    client.fallbackNotificationHandler = async (notification) => void session.notes.push(notification.method);
    session.clients.set(
      name,
      client.connect(new ConnectionTransport(server.serverId)).then(() => client),
    );
  }
  return session.clients.get(name);
}

async function step(session, line) {
  if (line === "notes") return `notes: ${session.notes.join(" ")}`;
  const [word, name, tool, ...rest] = line.split(" ");
  if (word === "roots") {
    for (const c of session.clients.values()) await (await c).sendRootsListChanged();
    return "roots changed";
  }
  if (word !== "call") return `unknown step ${line}`;
  const client = await clientFor(session, name);
  const result = await client.callTool({ name: tool, arguments: rest.length ? JSON.parse(rest.join(" ")) : {} });
  const text = result.content.map((b) => b.text).join("\n");
  return result.isError ? `${tool} failed: ${text}` : `${tool}: ${text}`;
}

createInterface({ input: process.stdin }).on("line", async (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (!("method" in msg)) {
    const resolve = pending.get(msg.id);
    pending.delete(msg.id);
    return resolve?.(msg);
  }
  if (msg.method === "mcp/message" && transports.has(msg.params?.connectionId)) {
    return transports.get(msg.params.connectionId).fromServer(msg.id, msg.params);
  }
  if (!("id" in msg)) return;
  switch (msg.method) {
    case "initialize":
      return out({ id: msg.id, result: { protocolVersion: 1, agentCapabilities: { mcpCapabilities: { acp: true } }, authMethods: [] } });
    case "session/new": {
      const sessionId = `conn-sess-${++n}`;
      const servers = (msg.params.mcpServers ?? []).filter((s) => s.type === "acp");
      sessions.set(sessionId, { cwd: msg.params.cwd, servers, clients: new Map(), notes: [] });
      return out({ id: msg.id, result: { sessionId } });
    }
    case "session/prompt": {
      const session = sessions.get(msg.params.sessionId);
      const text = msg.params.prompt.map((b) => b.text).join("\n");
      for (const line of text.split("\n").filter((l) => l.trim())) {
        let report;
        try {
          report = await step(session, line.trim());
        } catch (error) {
          report = `error: ${error?.message ?? error}`;
        }
        out({
          method: "session/update",
          params: {
            sessionId: msg.params.sessionId,
            update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: report } },
          },
        });
      }
      return out({ id: msg.id, result: { stopReason: "end_turn" } });
    }
    default:
      return out({ id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
  }
});
