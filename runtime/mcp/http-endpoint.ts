/**
 * The loopback streamable-HTTP MCP server of the bridge (MCP 2025-03-26 … 2025-11-25 transport),
 * for agents that advertise `mcpCapabilities.http`. One listener on 127.0.0.1 serves every bridged
 * server at `/mcp/<endpoint id>`; every request must carry `Authorization: Bearer <secret>` (else
 * 401), a loopback `Host` and no foreign `Origin` (else 403, against DNS rebinding).
 *
 * - `POST` an `initialize` request without `Mcp-Session-Id`: opens an MCP session (one MCP-over-ACP
 *   connection, see `link.ts`) and answers with its `Mcp-Session-Id` header.
 * - `POST` other messages with that header: requests are answered with a JSON body
 *   (`application/json`, never an SSE stream), notifications and responses with `202`. A batch
 *   (array) is answered with an array. Not JSON → 400 with a `-32700` body; not JSON-RPC → 400
 *   `-32600`; missing session header → 400; unknown or ended session → 404.
 * - `GET` with the header opens the session's SSE stream: every message the server side sends to
 *   the client (notifications, requests such as `ping`, sampling or elicitation) goes there as an
 *   `event: message`. Messages sent while no stream is open wait for one (bounded). One stream per
 *   session (a second → 409).
 * - `DELETE` with the header ends the session (`mcp/disconnect`).
 *
 * A `POST` whose client goes away before its answer withdraws the call upstream
 * (`$/cancel_request`): without resumable streams nobody could receive the answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { classify, ErrorCodes, type JsonRpcMessage, type JsonRpcResponse } from "../protocol/json-rpc.js";
import { listenOnLoopback, sameSecret, type Endpoint, type EndpointHost } from "./endpoints.js";
import type { McpLink } from "./link.js";

/** Largest request body accepted. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Messages kept for a session while it has no SSE stream open. */
const MAX_QUEUED = 1000;

interface HttpSession {
  readonly id: string;
  readonly endpoint: Endpoint;
  readonly link: McpLink;
  stream: ServerResponse | null;
  readonly queue: JsonRpcMessage[];
}

export class HttpEndpoint {
  private readonly server: Server;
  private readonly sessions = new Map<string, HttpSession>();
  port = 0;

  constructor(private readonly host: EndpointHost) {
    this.server = createServer((req, res) => void this.handle(req, res).catch((error: Error) => {
      this.host.log.warn(`MCP bridge: HTTP request failed: ${error.message}`);
      if (!res.headersSent) reply(res, 500, rpcError(ErrorCodes.internalError, "Internal error"));
      else res.destroy();
    }));
  }

  async listen(): Promise<void> {
    this.port = await listenOnLoopback(this.server);
  }

  url(endpoint: Endpoint): string {
    return `http://127.0.0.1:${this.port}/mcp/${endpoint.id}`;
  }

  /** Ends every MCP session of an endpoint that is going away. */
  drop(endpoint: Endpoint): void {
    for (const session of [...this.sessions.values()]) if (session.endpoint === endpoint) this.end(session, "the ACP session ended");
  }

  async close(): Promise<void> {
    for (const session of [...this.sessions.values()]) this.end(session, "Cordon is shutting down");
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private end(session: HttpSession, reason: string): void {
    this.sessions.delete(session.id);
    session.stream?.end();
    session.stream = null;
    session.link.close(reason);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const loopback = [`127.0.0.1:${this.port}`, `localhost:${this.port}`];
    if (!loopback.includes(req.headers.host ?? "")) return reply(res, 403, rpcError(-32000, "Forbidden: not a loopback Host"));
    const origin = req.headers.origin;
    if (origin !== undefined && !loopback.some((h) => origin === `http://${h}`)) return reply(res, 403, rpcError(-32000, "Forbidden: foreign Origin"));
    const match = /^\/mcp\/([^/?#]+)(?:[?#].*)?$/.exec(req.url ?? "");
    const endpoint = match ? this.host.endpoint(decodeURIComponent(match[1])) : undefined;
    if (!endpoint) return reply(res, 404, rpcError(-32000, "Not Found: no such MCP endpoint"));
    if (!authorized(req, endpoint)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="cordon-mcp-bridge"');
      return reply(res, 401, rpcError(-32000, "Unauthorized: this endpoint needs the bearer secret it was declared with"));
    }
    switch (req.method) {
      case "POST":
        return this.post(req, res, endpoint);
      case "GET":
        return this.get(req, res, endpoint);
      case "DELETE": {
        const session = this.session(req, res, endpoint);
        if (!session) return;
        this.end(session, "the agent ended the MCP session");
        return reply(res, 200);
      }
      default:
        res.setHeader("Allow", "GET, POST, DELETE");
        return reply(res, 405, rpcError(-32000, "Method Not Allowed"));
    }
  }

  /** The session named by the `Mcp-Session-Id` header, or an error answer (400 / 404). */
  private session(req: IncomingMessage, res: ServerResponse, endpoint: Endpoint): HttpSession | null {
    const id = req.headers["mcp-session-id"];
    if (typeof id !== "string") {
      reply(res, 400, rpcError(-32000, "Bad Request: Mcp-Session-Id header is required"));
      return null;
    }
    const session = this.sessions.get(id);
    if (!session || session.endpoint !== endpoint) {
      reply(res, 404, rpcError(-32001, "Session not found"));
      return null;
    }
    return session;
  }

  private async post(req: IncomingMessage, res: ServerResponse, endpoint: Endpoint): Promise<void> {
    const body = await readBody(req);
    if (body === null) return reply(res, 413, rpcError(-32000, `Payload Too Large: more than ${MAX_BODY_BYTES} bytes`));
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch (error) {
      return reply(res, 400, rpcError(ErrorCodes.parseError, `Parse error: ${(error as Error).message}`));
    }
    const batch = Array.isArray(value);
    const items = batch ? (value as unknown[]) : [value];
    const messages: JsonRpcMessage[] = [];
    for (const item of items) {
      const c = classify(item);
      if (c.kind === "invalid") return reply(res, 400, rpcError(ErrorCodes.invalidRequest, `Invalid Request: ${c.reason}`, c.id));
      messages.push(c.message);
    }
    if (messages.length === 0) return reply(res, 400, rpcError(ErrorCodes.invalidRequest, "Invalid Request: empty batch"));

    let session: HttpSession | null;
    const initialize = messages.find((m) => "method" in m && m.method === "initialize" && "id" in m);
    if (initialize) {
      if (messages.length > 1) return reply(res, 400, rpcError(ErrorCodes.invalidRequest, "Invalid Request: initialize must be sent alone"));
      session = this.open(endpoint);
    } else {
      session = this.session(req, res, endpoint);
      if (!session) return;
    }

    const requests = messages.filter((m) => "method" in m && "id" in m);
    const answers = messages.map((m) => new Promise<JsonRpcResponse | null>((resolve) => {
      session!.link.fromClient(m, resolve);
      if (!requests.includes(m)) resolve(null);
    }));
    if (requests.length === 0) {
      res.writeHead(202).end();
      return;
    }
    // The client may give up before the answers come: withdraw what it was waiting for.
    let answered = false;
    res.once("close", () => {
      if (answered) return;
      for (const m of requests) session!.link.abandon((m as { id: string | number }).id);
    });
    const responses = (await Promise.all(answers)).filter((r): r is JsonRpcResponse => r !== null);
    answered = true;
    if (initialize) {
      if (session.link.connectionId === null) {
        // mcp/connect failed: no session was created; the body says why.
        this.sessions.delete(session.id);
        session.link.close("mcp/connect failed");
      } else if (res.destroyed) this.end(session, "the agent went away before it learned its session id");
      else res.setHeader("Mcp-Session-Id", session.id);
    }
    if (res.destroyed) return;
    reply(res, 200, batch ? responses : responses[0]);
  }

  private open(endpoint: Endpoint): HttpSession {
    const id = randomUUID();
    const queue: JsonRpcMessage[] = [];
    const session: HttpSession = {
      id,
      endpoint,
      queue,
      stream: null,
      link: this.host.openLink(endpoint, (message) => {
        if (session.stream) return writeEvent(session.stream, message);
        if (queue.length >= MAX_QUEUED) {
          queue.shift();
          this.host.log.warn(`MCP bridge: server "${endpoint.name}" sends faster than the agent opens its SSE stream; dropped the oldest message`);
        }
        queue.push(message);
      }),
    };
    this.sessions.set(id, session);
    return session;
  }

  private get(req: IncomingMessage, res: ServerResponse, endpoint: Endpoint): void {
    const accept = req.headers.accept ?? "";
    if (!accept.includes("text/event-stream")) return reply(res, 406, rpcError(-32000, "Not Acceptable: GET needs Accept: text/event-stream"));
    const session = this.session(req, res, endpoint);
    if (!session) return;
    if (session.stream) return reply(res, 409, rpcError(-32000, "Conflict: this MCP session already has an SSE stream"));
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive", "Mcp-Session-Id": session.id });
    res.flushHeaders();
    session.stream = res;
    res.once("close", () => {
      if (session.stream === res) session.stream = null;
    });
    for (const message of session.queue.splice(0)) writeEvent(res, message);
  }
}

function authorized(req: IncomingMessage, endpoint: Endpoint): boolean {
  const header = req.headers.authorization;
  const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match !== null && sameSecret(match[1], endpoint.secret);
}

/** The body as text, or null when it is larger than {@link MAX_BODY_BYTES}. */
function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.once("end", () => resolve(tooLarge ? null : Buffer.concat(chunks).toString("utf8")));
    req.once("error", reject);
  });
}

function rpcError(code: number, message: string, id: string | number | null = null): JsonRpcResponse {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

function reply(res: ServerResponse, status: number, body?: unknown): void {
  if (res.destroyed) return;
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }).end(text);
}

function writeEvent(res: ServerResponse, message: JsonRpcMessage): void {
  res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}
