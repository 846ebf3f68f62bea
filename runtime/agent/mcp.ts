/**
 * The reference agent's MCP client: a real `@modelcontextprotocol/sdk` {@link Client} per (session,
 * server), connected over whichever transport the server's declaration in `session/new` (or load,
 * resume, fork) names:
 *
 * - stdio `{name, command, args, env}`: the SDK's `StdioClientTransport` launches it (in the session's
 *   cwd when that exists);
 * - `{"type":"http", name, url, headers}`: the SDK's `StreamableHTTPClientTransport`, with the headers;
 * - `{"type":"acp", name, serverId}`: MCP-over-ACP through the agent's own ACP connection, in the
 *   connectionless form, with the ACP SDK's {@link McpOverAcpCaller}: every MCP request becomes an
 *   `mcp/message {serverId, requestId, method, params}` request to the client, answered `{result}` or
 *   `{error}`. That form has no client→server notifications: `notifications/initialized` is not sent,
 *   and `notifications/cancelled` withdraws the outer request (`$/cancel_request`) instead.
 *
 * Which transports the agent accepts is what it advertises (`--mcp`): stdio always, `http` and `acp`
 * on request. Each client declares MCP's `roots` capability and answers `roots/list` with the
 * session's cwd (the one root it works in); it declares no sampling (it has no model of its own to
 * lend) and no elicitation (it has no user to ask). Clients connect on first use and are closed when their session is closed, deleted or
 * re-set-up (load/resume), and when the ACP connection ends.
 */
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import { type AgentContext, type McpCapabilities, McpOverAcpCaller, type McpServer } from "@agentclientprotocol/sdk/unstable";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  ErrorCode,
  type GetPromptResult,
  type JSONRPCMessage,
  ListRootsRequestSchema,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

/** The MCP transports the agent supports beyond stdio (which every agent must support). */
export interface McpSupport {
  http: boolean;
  acp: boolean;
}

export const STDIO_ONLY: McpSupport = { http: false, acp: false };

/** Parses `--mcp acp,http` (also `stdio` / `none` for stdio only). Throws on an unknown word. */
export function parseMcpSupport(text: string): McpSupport {
  const support = { ...STDIO_ONLY };
  for (const word of text
    .split(",")
    .map((w) => w.trim().toLowerCase())
    .filter(Boolean)) {
    if (word === "http") support.http = true;
    else if (word === "acp") support.acp = true;
    else if (word !== "stdio" && word !== "none") throw new Error(`--mcp: unknown transport "${word}" (choose from acp, http, stdio)`);
  }
  return support;
}

/** `agentCapabilities.mcpCapabilities` for what the agent supports (`acp` only when on: it is unstable). */
export function mcpCapabilities(support: McpSupport): McpCapabilities {
  return { http: support.http, sse: false, ...(support.acp ? { acp: true } : {}) };
}

/** Why a declaration cannot be accepted, or null. */
export function unsupportedServer(server: McpServer, support: McpSupport): string | null {
  if (!("type" in server)) return null;
  if (server.type === "http" && support.http) return null;
  if (server.type === "acp" && support.acp) return null;
  return `${server.type} MCP servers are not supported (this agent accepts ${["stdio", ...(support.http ? ["http"] : []), ...(support.acp ? ["acp"] : [])].join(", ")})`;
}

/** A server of a session, and the ACP connection an `acp` server is reached through. */
export interface McpTarget {
  sessionId: string;
  /** Where a stdio server runs (if the folder exists). */
  cwd: string;
  server: McpServer;
  peer: AgentContext;
}

interface Entry {
  client: Promise<Client>;
  close(): Promise<void>;
}

export class McpClients {
  private readonly entries = new Map<string, Entry>();
  /** One caller per agent app: it routes `mcp/message` notifications to the request they belong to. */
  readonly caller: McpOverAcpCaller;

  constructor(
    private readonly clientInfo: { name: string; version: string },
    private readonly log: (line: string) => void = () => {},
  ) {
    this.caller = new McpOverAcpCaller({ clientInfo });
  }

  async listTools(target: McpTarget, signal?: AbortSignal): Promise<Tool[]> {
    const client = await this.client(target);
    return allPages(
      (cursor) => client.listTools(cursor ? { cursor } : undefined, { signal }),
      (page) => page.tools,
    );
  }

  async callTool(target: McpTarget, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    const client = await this.client(target);
    return (await client.callTool({ name: tool, arguments: args }, undefined, { signal })) as CallToolResult;
  }

  /** Every resource the server lists, following `nextCursor`. */
  async listResources(target: McpTarget, signal?: AbortSignal): Promise<Resource[]> {
    const client = await this.client(target);
    return allPages(
      (cursor) => client.listResources(cursor ? { cursor } : undefined, { signal }),
      (page) => page.resources,
    );
  }

  async readResource(target: McpTarget, uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    const client = await this.client(target);
    return client.readResource({ uri }, { signal });
  }

  /** Every prompt the server lists, following `nextCursor`. */
  async listPrompts(target: McpTarget, signal?: AbortSignal): Promise<Prompt[]> {
    const client = await this.client(target);
    return allPages(
      (cursor) => client.listPrompts(cursor ? { cursor } : undefined, { signal }),
      (page) => page.prompts,
    );
  }

  async getPrompt(target: McpTarget, name: string, args: Record<string, string>, signal?: AbortSignal): Promise<GetPromptResult> {
    const client = await this.client(target);
    return client.getPrompt({ name, arguments: args }, { signal });
  }

  /** Closes the clients of one session (closed, deleted, or set up again with other servers). */
  async closeSession(sessionId: string): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [key, entry] of this.entries) {
      if (!key.startsWith(`${sessionId}\u0000`)) continue;
      this.entries.delete(key);
      closing.push(entry.close());
    }
    await Promise.allSettled(closing);
  }

  async closeAll(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.allSettled(entries.map((e) => e.close()));
  }

  /** The session's connected client for `server`, connecting on first use (and again after it closed). */
  private client({ sessionId, cwd, server, peer }: McpTarget): Promise<Client> {
    const key = `${sessionId}\u0000${server.name}`;
    const existing = this.entries.get(key);
    if (existing) return existing.client;
    const transport = this.transport(server, peer, cwd);
    const client = new Client(this.clientInfo, { capabilities: { roots: {} } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(cwd).href, name: basename(cwd) }] }));
    const entry: Entry = {
      client: client.connect(transport).then(
        () => client,
        async (error: unknown) => {
          if (this.entries.get(key) === entry) this.entries.delete(key);
          await client.close().catch(() => {});
          throw error;
        },
      ),
      close: () => client.close().catch(() => {}),
    };
    client.onclose = () => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
      this.log(`MCP server ${server.name} of ${sessionId} closed`);
    };
    this.entries.set(key, entry);
    return entry.client;
  }

  private transport(server: McpServer, peer: AgentContext, cwd: string): Transport {
    if (!("type" in server)) {
      return new StdioClientTransport({
        command: server.command,
        args: server.args,
        env: Object.fromEntries(server.env.map((v) => [v.name, v.value])),
        ...(existsSync(cwd) ? { cwd } : {}),
      });
    }
    if (server.type === "http") {
      const headers = Object.fromEntries(server.headers.map((h) => [h.name, h.value]));
      return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } });
    }
    if (server.type === "acp") return new AcpTransport(this.caller, peer, server.serverId);
    throw new Error(`${server.type} MCP servers are not supported`);
  }
}

/**
 * An MCP transport over the ACP connection, in MCP-over-ACP's connectionless form (the ACP SDK's
 * {@link McpOverAcpCaller}). Requests only: the form has no client→server notifications and no
 * server→client requests; request-scoped notifications from the server (progress) are delivered.
 */
class AcpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly inFlight = new Map<string | number, AbortController>();
  private closed = false;

  constructor(
    private readonly caller: McpOverAcpCaller,
    private readonly peer: AgentContext,
    private readonly serverId: string,
  ) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error("the MCP-over-ACP transport is closed");
    if (!("method" in message)) return; // an answer: the connectionless form has no server→client requests
    if (!("id" in message)) {
      if (message.method === "notifications/cancelled") {
        const requestId = (message.params as { requestId?: string | number } | undefined)?.requestId;
        if (requestId !== undefined) this.inFlight.get(requestId)?.abort();
      }
      return; // no client→server notifications in the connectionless form
    }
    const { id, method } = message;
    const controller = new AbortController();
    this.inFlight.set(id, controller);
    const deliver = (m: JSONRPCMessage) => {
      if (!this.closed) this.onmessage?.(m);
    };
    this.caller
      .request(this.peer, this.serverId, method, (message.params as Record<string, unknown> | undefined) ?? null, {
        signal: controller.signal,
        onNotification: (n) => deliver({ jsonrpc: "2.0", method: n.method, ...(n.params ? { params: n.params } : {}) } as JSONRPCMessage),
      })
      .then(
        (outcome) =>
          deliver(
            "result" in outcome
              ? ({ jsonrpc: "2.0", id, result: outcome.result } as JSONRPCMessage)
              : { jsonrpc: "2.0", id, error: outcome.error },
          ),
        (error: { code?: unknown; message?: unknown; data?: unknown }) =>
          deliver({
            jsonrpc: "2.0",
            id,
            error: {
              code: typeof error?.code === "number" ? error.code : ErrorCode.InternalError,
              message: String(error?.message ?? error),
              ...(error?.data !== undefined ? { data: error.data } : {}),
            },
          }),
      )
      .finally(() => this.inFlight.delete(id));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const controller of this.inFlight.values()) controller.abort();
    this.inFlight.clear();
    this.onclose?.();
  }
}

/** Every item of a paged MCP list: pages fetched one after another, following `nextCursor`. */
async function allPages<P extends { nextCursor?: string }, T>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  itemsOf: (page: P) => T[],
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    items.push(...itemsOf(page));
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}
