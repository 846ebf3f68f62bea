/**
 * The loopback streamable-HTTP MCP server of the bridge (MCP 2025-03-26 … 2025-11-25 transport),
 * for agents that advertise `mcpCapabilities.http`. One listener on 127.0.0.1 serves every bridged
 * server at `/mcp/<endpoint id>`; every request must carry `Authorization: Bearer <secret>` (else
 * 401), a loopback `Host` and no foreign `Origin` (else 403, against DNS rebinding).
 *
 * - `POST` an `initialize` request without `Mcp-Session-Id`: opens an MCP session (one link, see
 *   `link.ts`) and answers with its `Mcp-Session-Id` header.
 * - `POST` other messages with that header: requests are answered with a JSON body
 *   (`application/json`, never an SSE stream), notifications and responses with `202`. A batch
 *   (array) is answered with an array. Not JSON → 400 with a `-32700` body; not JSON-RPC → 400
 *   `-32600`; missing session header → 400; unknown or ended session → 404.
 * - `GET` with the header opens the session's SSE stream: every message the server side sends to
 *   the client (notifications, requests such as `ping`, sampling or elicitation) goes there as an
 *   `event: message`. Messages sent while no stream is open wait for one (bounded). One stream per
 *   session (a second → 409).
 * - `DELETE` with the header ends the session (`mcp/disconnect` in the connection form).
 *
 * A `POST` whose client goes away before its answer withdraws the call upstream
 * (`$/cancel_request`): without resumable streams nobody could receive the answer.
 *
 * Bounds (anyone on the machine can connect to a loopback port): at most {@link MAX_CONNECTIONS}
 * connections. Before a connection has sent a complete request head with the right bearer secret
 * it is in a {@link WaitingRoom}: the head is at most {@link MAX_PRE_AUTH_BYTES} (else 431), it must
 * come within {@link PRE_AUTH_TIMEOUT_MS} (else the connection is closed — Node's own
 * `headersTimeout` is only checked every 30 s), and at most {@link MAX_WAITING} connections wait at
 * once (one more closes the oldest waiting, so silent connections cannot crowd the agent out of
 * `maxConnections`). An authenticated connection's idle time is Node's keep-alive timeout; its
 * later heads have {@link HEADERS_TIMEOUT_MS}. Nothing of a body is
 * read before the request is authorized, and a refused request's connection is closed (so its body
 * is never streamed in); an authorized body is cut off at {@link MAX_BODY_BYTES} (413) and all bodies
 * being read at once share {@link MAX_BODIES_BYTES} (503 beyond); a batch holds at most
 * {@link MAX_BATCH} messages; a message nested deeper than {@link MAX_NESTING_DEPTH} is refused (400).
 * What waits for an SSE stream (none open, or the open one not reading) is bounded in bytes.
 */

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { classify, ErrorCodes, type JsonRpcMessage, type JsonRpcResponse } from "../protocol/json-rpc.js";
import { MAX_NESTING_DEPTH, nestsDeeperThan } from "../protocol/nesting.js";
import { type Endpoint, type EndpointHost, guarded, listenOnLoopback, sameSecret, throttledWarn } from "./endpoints.js";
import type { McpLink } from "./link.js";
import { MAX_PRE_AUTH_BYTES, MAX_WAITING, PRE_AUTH_TIMEOUT_MS, WaitingRoom } from "./waiting-room.js";

/** Largest request body accepted. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** All request bodies being read at one time. */
const MAX_BODIES_BYTES = 64 * 1024 * 1024;
/** Open connections (beyond, the listener accepts none until one closes). */
const MAX_CONNECTIONS = 64;
/** Time for an authenticated connection's next request head to arrive. */
const HEADERS_TIMEOUT_MS = 10_000;
/** Time for a whole request (headers and body) to arrive; an SSE response may then last forever. */
const REQUEST_TIMEOUT_MS = 60_000;
/** Messages in one batch. */
const MAX_BATCH = 1000;
/** Messages kept for a session while it has no SSE stream open, or while the open one does not read. */
const MAX_QUEUED = 1000;
const MAX_QUEUED_CHARS = 32 * 1024 * 1024;
/** Bytes an SSE stream may have unsent before messages wait in the queue instead. */
const STREAM_HIGH_WATER = 8 * 1024 * 1024;

export interface HttpEndpointLimits {
  maxConnections?: number;
  maxBodyBytes?: number;
  maxBodiesBytes?: number;
  /** Time a connection has to send a complete, authenticated request head. */
  preAuthTimeoutMs?: number;
  /** Connections waiting to authenticate at once. */
  maxUnauthenticated?: number;
}

interface HttpSession {
  readonly id: string;
  readonly endpoint: Endpoint;
  readonly link: McpLink;
  stream: ServerResponse | null;
  /** Serialized SSE events waiting for a stream that reads. */
  readonly queue: string[];
  queuedChars: number;
}

export class HttpEndpoint {
  private readonly server: Server;
  private readonly sessions = new Map<string, HttpSession>();
  private readonly limits: Required<HttpEndpointLimits>;
  /** Bytes of request bodies being read now. */
  private reading = 0;
  private readonly warnRefused: (message: string) => void;
  private readonly warnExpelled: (message: string) => void;
  /** Connections that have not sent an authenticated request yet. */
  private readonly room: WaitingRoom;
  port = 0;

  constructor(
    private readonly host: EndpointHost,
    limits: HttpEndpointLimits = {},
  ) {
    this.limits = {
      maxConnections: limits.maxConnections ?? MAX_CONNECTIONS,
      maxBodyBytes: limits.maxBodyBytes ?? MAX_BODY_BYTES,
      maxBodiesBytes: limits.maxBodiesBytes ?? MAX_BODIES_BYTES,
      preAuthTimeoutMs: limits.preAuthTimeoutMs ?? PRE_AUTH_TIMEOUT_MS,
      maxUnauthenticated: limits.maxUnauthenticated ?? MAX_WAITING,
    };
    this.warnRefused = throttledWarn(host.log);
    this.warnExpelled = throttledWarn(host.log);
    this.room = new WaitingRoom({ timeoutMs: this.limits.preAuthTimeoutMs, maxWaiting: this.limits.maxUnauthenticated }, (why) =>
      this.warnExpelled(
        why === "timeout"
          ? `MCP bridge: closed an HTTP connection that sent no authenticated request within ${this.limits.preAuthTimeoutMs} ms`
          : `MCP bridge: closed the oldest of ${this.limits.maxUnauthenticated} HTTP connections waiting to authenticate, to make room for a new one`,
      ),
    );
    this.server = createServer(
      { maxHeaderSize: MAX_PRE_AUTH_BYTES },
      (req, res) =>
        void this.handle(req, res).catch((error: Error) => {
          this.host.log.warn(`MCP bridge: HTTP request failed: ${error?.message ?? String(error)}`);
          if (!res.headersSent) reply(res, 500, rpcError(ErrorCodes.internalError, "Internal error"));
          else res.destroy();
        }),
    );
    this.server.on("connection", (socket: Socket) => this.room.enter(socket));
    this.server.maxConnections = this.limits.maxConnections;
    this.server.headersTimeout = HEADERS_TIMEOUT_MS;
    this.server.requestTimeout = REQUEST_TIMEOUT_MS;
  }

  /** Connections waiting to authenticate now (for tests and diagnostics). */
  get unauthenticated(): number {
    return this.room.size;
  }

  /** Bytes of request bodies being read now (for tests and diagnostics). */
  get bodiesBeingRead(): number {
    return this.reading;
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

  /** Answers a request that is not let in, and closes its connection: its body is never read. */
  private refuse(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
    this.warnRefused(`MCP bridge: refused an HTTP request (${status}): ${message}`);
    const socket = req.socket;
    socket.pause(); // what follows (the body) stays in the kernel until the connection is closed
    res.setHeader("Connection", "close");
    reply(res, status, rpcError(-32000, message));
    res.once("finish", () => {
      socket.end();
      setTimeout(() => socket.destroy(), 200).unref();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const loopback = [`127.0.0.1:${this.port}`, `localhost:${this.port}`];
    if (!loopback.includes(req.headers.host ?? "")) return this.refuse(req, res, 403, "Forbidden: not a loopback Host");
    const origin = req.headers.origin;
    if (origin !== undefined && !loopback.some((h) => origin === `http://${h}`))
      return this.refuse(req, res, 403, "Forbidden: foreign Origin");
    const match = /^\/mcp\/([^/?#]+)(?:[?#].*)?$/.exec(req.url ?? "");
    let id: string | null = null;
    try {
      id = match ? decodeURIComponent(match[1]) : null;
    } catch {
      // A malformed %-escape names no endpoint.
    }
    const endpoint = id === null ? undefined : this.host.endpoint(id);
    if (!endpoint) return this.refuse(req, res, 404, "Not Found: no such MCP endpoint");
    if (!authorized(req, endpoint)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="cordon-mcp-bridge"');
      return this.refuse(req, res, 401, "Unauthorized: this endpoint needs the bearer secret it was declared with");
    }
    this.room.admit(req.socket);
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
    const body = await this.readBody(req);
    if (typeof body !== "string") return this.refuse(req, res, body.status, body.message);
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch (error) {
      return reply(res, 400, rpcError(ErrorCodes.parseError, `Parse error: ${(error as Error).message}`));
    }
    if (nestsDeeperThan(value))
      return reply(res, 400, rpcError(ErrorCodes.invalidRequest, `Invalid Request: nests deeper than ${MAX_NESTING_DEPTH} levels`));
    const batch = Array.isArray(value);
    const items = batch ? (value as unknown[]) : [value];
    if (items.length > MAX_BATCH)
      return reply(res, 400, rpcError(ErrorCodes.invalidRequest, `Invalid Request: a batch of more than ${MAX_BATCH} messages`));
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
      if (messages.length > 1)
        return reply(res, 400, rpcError(ErrorCodes.invalidRequest, "Invalid Request: initialize must be sent alone"));
      session = this.open(endpoint);
    } else {
      session = this.session(req, res, endpoint);
      if (!session) return;
    }

    const isCall = (m: JsonRpcMessage) => "method" in m && "id" in m;
    const requests = messages.filter(isCall);
    const answers = messages.map(
      (m) =>
        new Promise<JsonRpcResponse | null>((resolve) => {
          session!.link.fromClient(m, resolve);
          if (!isCall(m)) resolve(null);
        }),
    );
    if (requests.length === 0) {
      res.writeHead(202).end();
      return;
    }
    // The client may give up before the answers come: withdraw what it was waiting for.
    let answered = false;
    res.once("close", () => {
      if (answered) return;
      guarded(this.host.log, "an HTTP request that went away", () => {
        for (const m of requests) session!.link.abandon((m as { id: string | number }).id);
      });
    });
    const responses = (await Promise.all(answers)).filter((r): r is JsonRpcResponse => r !== null);
    answered = true;
    if (initialize) {
      if (session.link.refused === true || session.link.closed === true) {
        // The link refused (its mcp/connect failed): no session was created; the body says why.
        this.sessions.delete(session.id);
        session.link.close("the MCP session could not be opened");
      } else if (res.destroyed) this.end(session, "the agent went away before it learned its session id");
      else res.setHeader("Mcp-Session-Id", session.id);
    }
    if (res.destroyed) return;
    reply(res, 200, batch ? responses : responses[0]);
  }

  private open(endpoint: Endpoint): HttpSession {
    const id = randomUUID();
    const session: HttpSession = {
      id,
      endpoint,
      queue: [],
      queuedChars: 0,
      stream: null,
      link: this.host.openLink(endpoint, (message) => this.toStream(session, message)),
    };
    this.sessions.set(id, session);
    return session;
  }

  /**
   * A message for the agent's SSE stream: written when a stream is open and reading, else queued
   * (bounded in count and size: the oldest is dropped, with a warning).
   */
  private toStream(session: HttpSession, message: JsonRpcMessage): void {
    const event = `event: message\ndata: ${JSON.stringify(message)}\n\n`;
    const stream = session.stream;
    if (stream && session.queue.length === 0 && stream.writableLength < STREAM_HIGH_WATER) {
      stream.write(event);
      return;
    }
    session.queue.push(event);
    session.queuedChars += event.length;
    let dropped = 0;
    while (session.queue.length > 1 && (session.queue.length > MAX_QUEUED || session.queuedChars > MAX_QUEUED_CHARS)) {
      session.queuedChars -= session.queue.shift()!.length;
      dropped++;
    }
    if (dropped > 0)
      this.host.log.warn(
        `MCP bridge: server "${session.endpoint.name}" sends faster than the agent reads its SSE stream; dropped the oldest message${dropped > 1 ? `s (${dropped})` : ""}`,
      );
    if (stream) this.flush(session);
  }

  /** Writes what waits for the session's stream while the stream takes it. */
  private flush(session: HttpSession): void {
    const stream = session.stream;
    if (!stream) return;
    while (session.queue.length > 0 && stream.writableLength < STREAM_HIGH_WATER) {
      const event = session.queue.shift()!;
      session.queuedChars -= event.length;
      stream.write(event);
    }
  }

  private get(req: IncomingMessage, res: ServerResponse, endpoint: Endpoint): void {
    const accept = req.headers.accept ?? "";
    if (!accept.includes("text/event-stream"))
      return reply(res, 406, rpcError(-32000, "Not Acceptable: GET needs Accept: text/event-stream"));
    const session = this.session(req, res, endpoint);
    if (!session) return;
    if (session.stream) return reply(res, 409, rpcError(-32000, "Conflict: this MCP session already has an SSE stream"));
    res.writeHead(200, {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      Connection: "keep-alive",
      "Mcp-Session-Id": session.id,
    });
    res.flushHeaders();
    session.stream = res;
    res.on("drain", () => this.flush(session));
    res.once("close", () => {
      if (session.stream === res) session.stream = null;
    });
    this.flush(session);
  }

  /**
   * The body as text, or why not: over the per-request limit (413), or over what all bodies being
   * read at once may take (503). Reading stops at the first byte too many.
   */
  private readBody(req: IncomingMessage): Promise<string | { status: number; message: string }> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const finish = (outcome: string | { status: number; message: string }) => {
        if (done) return;
        done = true;
        this.reading -= size;
        req.removeListener("data", data);
        if (typeof outcome !== "string") req.pause();
        resolve(outcome);
      };
      const data = (chunk: Buffer) => {
        if (size + chunk.length > this.limits.maxBodyBytes)
          return finish({ status: 413, message: `Payload Too Large: more than ${this.limits.maxBodyBytes} bytes` });
        if (this.reading + chunk.length > this.limits.maxBodiesBytes)
          return finish({ status: 503, message: "Service Unavailable: too many request bodies being read at once; try again" });
        size += chunk.length;
        this.reading += chunk.length;
        chunks.push(chunk);
      };
      req.on("data", data);
      req.once("end", () => finish(Buffer.concat(chunks, size).toString("utf8")));
      req.once("error", (error) => {
        if (!done) {
          done = true;
          this.reading -= size;
          reject(error);
        }
      });
      req.once("close", () => finish({ status: 400, message: "Bad Request: the body was cut short" }));
    });
  }
}

function authorized(req: IncomingMessage, endpoint: Endpoint): boolean {
  const header = req.headers.authorization;
  const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match !== null && sameSecret(match[1], endpoint.secret);
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
