/**
 * The loopback TCP listener behind stdio-bridged servers. An agent that advertises neither
 * `mcpCapabilities.acp` nor `http` is given a stdio server entry that runs `cordon mcp-bridge`
 * (see `bridge-command.ts`); that process connects here and relays its stdio line by line.
 *
 * Wire: newline-delimited JSON. The bridge command's first line is a hello,
 * `{"cordonBridge":1,"endpoint":"<id>","token":"<secret>"}`; a wrong endpoint or token (or no hello
 * within {@link HELLO_TIMEOUT_MS}) gets `{"cordonBridge":"refused","reason":…}` and the connection
 * is closed. Otherwise the answer is `{"cordonBridge":"ok"}` and from then on every line is one MCP
 * JSON-RPC message: from the agent's MCP client in, to it out. One TCP connection is one MCP
 * session (one link, `link.ts`); when it closes, the link closes. A line that is
 * not JSON is answered with a `-32700` error, one that is not JSON-RPC or nests deeper than
 * {@link MAX_NESTING_DEPTH} with `-32600`; the connection stays.
 *
 * Anyone on the machine can connect to a loopback port, so what an unauthenticated connection can
 * cost is bounded: it may buffer at most {@link MAX_HELLO_BYTES} (a hello is ~120 bytes; a longer
 * one is refused at once), must say hello within {@link HELLO_TIMEOUT_MS}, and at most
 * {@link MAX_UNAUTHENTICATED} connections may be waiting to authenticate at a time — one more is
 * answered `{"cordonBridge":"busy"}` and closed without a byte of it being read (the bridge
 * command tries again). Only after the hello do the per-message limits (64 MiB a line) apply.
 */
import { createServer, type Server, type Socket } from "node:net";
import { classify, ErrorCodes, errorResponse, type JsonRpcMessage } from "../protocol/json-rpc.js";
import { LineBuffer } from "../protocol/line-buffer.js";
import { MAX_NESTING_DEPTH, nestsDeeperThan } from "../protocol/nesting.js";
import { type Endpoint, type EndpointHost, guarded, listenOnLoopback, sameSecret, throttledWarn } from "./endpoints.js";
import type { McpLink } from "./link.js";
import { MAX_PRE_AUTH_BYTES, MAX_WAITING, PRE_AUTH_TIMEOUT_MS } from "./waiting-room.js";

/** Time a connection has to say hello. */
const HELLO_TIMEOUT_MS = PRE_AUTH_TIMEOUT_MS;
/** Longest hello line (and so the most an unauthenticated connection buffers). */
export const MAX_HELLO_BYTES = MAX_PRE_AUTH_BYTES;
/** Connections waiting to authenticate at one time. */
const MAX_UNAUTHENTICATED = MAX_WAITING;
/** Longest line accepted from an authenticated bridge command. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
/**
 * Output a bridge command may leave unread: beyond it the agent's MCP client is not reading, and
 * the connection is closed (its calls fail with errors) rather than buffered without bound.
 */
const MAX_UNREAD_OUTPUT_BYTES = 64 * 1024 * 1024;

export interface TcpEndpointLimits {
  helloTimeoutMs?: number;
  maxHelloBytes?: number;
  maxUnauthenticated?: number;
  maxUnreadOutputBytes?: number;
}

interface Connection {
  endpoint: Endpoint | null;
  link: McpLink | null;
}

export class TcpEndpoint {
  private readonly server: Server;
  private readonly connections = new Map<Socket, Connection>();
  private unauthenticated = 0;
  private readonly limits: Required<TcpEndpointLimits>;
  private readonly warnRefused: (message: string) => void;
  private readonly warnBusy: (message: string) => void;
  port = 0;

  constructor(
    private readonly host: EndpointHost,
    limits: TcpEndpointLimits = {},
  ) {
    this.limits = {
      helloTimeoutMs: limits.helloTimeoutMs ?? HELLO_TIMEOUT_MS,
      maxHelloBytes: limits.maxHelloBytes ?? MAX_HELLO_BYTES,
      maxUnauthenticated: limits.maxUnauthenticated ?? MAX_UNAUTHENTICATED,
      maxUnreadOutputBytes: limits.maxUnreadOutputBytes ?? MAX_UNREAD_OUTPUT_BYTES,
    };
    this.warnRefused = throttledWarn(host.log);
    this.warnBusy = throttledWarn(host.log);
    this.server = createServer((socket) => this.accept(socket));
  }

  async listen(): Promise<void> {
    this.port = await listenOnLoopback(this.server);
  }

  /** Connections open now, and how many of them have not authenticated (for tests and diagnostics). */
  get stats(): { open: number; unauthenticated: number } {
    return { open: this.connections.size, unauthenticated: this.unauthenticated };
  }

  /** Closes every bridge connection of an endpoint that is going away. */
  drop(endpoint: Endpoint): void {
    for (const [socket, state] of this.connections) if (state.endpoint === endpoint) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.connections.keys()) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    socket.on("error", () => {}); // reported as close
    if (this.unauthenticated >= this.limits.maxUnauthenticated) {
      // Not a byte of it is read: what it sends stays in the kernel's buffer until it is closed.
      this.warnBusy(
        `MCP bridge: refused a stdio bridge connection: ${this.unauthenticated} connections are already waiting to authenticate`,
      );
      socket.end(JSON.stringify({ cordonBridge: "busy", reason: "too many connections waiting to authenticate; try again" }) + "\n");
      setTimeout(() => socket.destroy(), 200).unref();
      return;
    }
    const state: Connection = { endpoint: null, link: null };
    this.connections.set(socket, state);
    this.unauthenticated++;
    let waiting = true; // counted in `unauthenticated`
    const authenticated = () => {
      if (!waiting) return;
      waiting = false;
      this.unauthenticated--;
    };

    const write = (message: object) => {
      if (socket.destroyed) return;
      if (socket.writableLength > this.limits.maxUnreadOutputBytes) {
        this.host.log.warn(
          `MCP bridge: the agent's MCP client for "${state.endpoint?.name ?? "?"}" leaves more than ${this.limits.maxUnreadOutputBytes} bytes unread; closing its bridge connection`,
        );
        socket.destroy();
        return;
      }
      socket.write(JSON.stringify(message) + "\n");
    };
    let refused = false;
    const refuse = (reason: string) => {
      if (refused) return;
      refused = true;
      clearTimeout(timer);
      socket.pause();
      this.warnRefused(`MCP bridge: refused a stdio bridge connection: ${reason}`);
      write({ cordonBridge: "refused", reason });
      socket.end();
      setTimeout(() => socket.destroy(), 200).unref();
    };
    // A timer that fires after the event loop was blocked may run before the hello that arrived
    // meanwhile is read: look once more after the pending I/O.
    const timer = setTimeout(() => setImmediate(() => state.endpoint === null && refuse("no hello in time")), this.limits.helloTimeoutMs);
    timer.unref();

    const hello: Buffer[] = [];
    let helloBytes = 0;
    const lines = new LineBuffer(MAX_LINE_BYTES);

    /** The hello line: authenticates the connection, or refuses it. */
    const greet = (text: string): boolean => {
      let value: { endpoint?: unknown; token?: unknown } | null;
      try {
        value = JSON.parse(text) as { endpoint?: unknown; token?: unknown } | null;
      } catch {
        value = null;
      }
      const endpoint = typeof value?.endpoint === "string" ? this.host.endpoint(value.endpoint) : undefined;
      if (!endpoint || typeof value?.token !== "string" || !sameSecret(value.token, endpoint.secret)) {
        refuse("unknown endpoint or wrong token");
        return false;
      }
      clearTimeout(timer);
      authenticated();
      state.endpoint = endpoint;
      write({ cordonBridge: "ok" });
      state.link = this.host.openLink(endpoint, (message) => write(message));
      return true;
    };

    const line = (text: string) => {
      if (!state.link) return; // refused: ignore the rest
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        return write(errorResponse(null, ErrorCodes.parseError, `Parse error: ${(error as Error).message}`));
      }
      if (nestsDeeperThan(value))
        return write(errorResponse(null, ErrorCodes.invalidRequest, `Invalid Request: nests deeper than ${MAX_NESTING_DEPTH} levels`));
      const c = classify(value);
      if (c.kind === "invalid") return write(errorResponse(c.id, ErrorCodes.invalidRequest, `Invalid Request: ${c.reason}`));
      const link = state.link;
      guarded(
        this.host.log,
        "a message from a stdio bridge",
        () => link.fromClient(c.message as JsonRpcMessage, write),
        () => {
          if (c.kind === "request") write(errorResponse(c.message.id, ErrorCodes.internalError, "Internal error in Cordon's MCP bridge"));
        },
      );
    };

    const relay = (chunk: Buffer) => {
      for (const l of lines.push(chunk)) {
        if (l.kind === "oversized")
          write(errorResponse(null, ErrorCodes.invalidRequest, `line of ${l.bytes} bytes exceeds the limit of ${MAX_LINE_BYTES}`));
        else if (l.text.trim() !== "") line(l.text);
        if (socket.destroyed) return;
      }
    };

    const data = (chunk: Buffer) => {
      if (refused) return;
      if (state.endpoint) return relay(chunk);
      // Before the hello: at most maxHelloBytes are kept.
      const nl = chunk.indexOf(0x0a);
      const part = nl < 0 ? chunk : chunk.subarray(0, nl);
      if (helloBytes + part.length > this.limits.maxHelloBytes) return refuse(`hello longer than ${this.limits.maxHelloBytes} bytes`);
      hello.push(part);
      helloBytes += part.length;
      if (nl < 0) return;
      const text = Buffer.concat(hello, helloBytes).toString("utf8").trim();
      hello.length = 0;
      if (greet(text) && nl + 1 < chunk.length) relay(chunk.subarray(nl + 1));
    };

    socket.on("data", (chunk: Buffer) =>
      guarded(
        this.host.log,
        "input from a stdio bridge",
        () => data(chunk),
        () => socket.destroy(),
      ),
    );
    socket.once("close", () => {
      clearTimeout(timer);
      authenticated();
      this.connections.delete(socket);
      guarded(this.host.log, "the end of a stdio bridge connection", () => state.link?.close("the stdio bridge connection closed"));
    });
  }
}
