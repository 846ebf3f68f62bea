/**
 * The loopback TCP listener behind stdio-bridged servers. An agent that advertises neither
 * `mcpCapabilities.acp` nor `http` is given a stdio server entry that runs `cordon mcp-bridge`
 * (see `bridge-command.ts`); that process connects here and relays its stdio line by line.
 *
 * Wire: newline-delimited JSON. The bridge command's first line is a hello,
 * `{"cordonBridge":1,"endpoint":"<id>","token":"<secret>"}`; a wrong endpoint or token (or no hello
 * within 5 s) gets `{"cordonBridge":"refused","reason":…}` and the connection is closed. Otherwise
 * the answer is `{"cordonBridge":"ok"}` and from then on every line is one MCP JSON-RPC message:
 * from the agent's MCP client in, to it out. One TCP connection is one MCP session (one
 * MCP-over-ACP connection); when it closes, the link closes (`link.ts`). A line that is not JSON
 * is answered with a `-32700` error, one that is not JSON-RPC with `-32600`; the connection stays.
 */
import { createServer, type Server, type Socket } from "node:net";
import { LineBuffer } from "../protocol/line-buffer.js";
import { classify, ErrorCodes, errorResponse, type JsonRpcMessage } from "../protocol/json-rpc.js";
import { listenOnLoopback, sameSecret, type Endpoint, type EndpointHost } from "./endpoints.js";
import type { McpLink } from "./link.js";

const HELLO_TIMEOUT_MS = 5000;
/** Longest line accepted from a bridge command. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

export class TcpEndpoint {
  private readonly server: Server;
  private readonly connections = new Map<Socket, { endpoint: Endpoint | null; link: McpLink | null }>();
  port = 0;

  constructor(private readonly host: EndpointHost) {
    this.server = createServer((socket) => this.accept(socket));
  }

  async listen(): Promise<void> {
    this.port = await listenOnLoopback(this.server);
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
    const state: { endpoint: Endpoint | null; link: McpLink | null } = { endpoint: null, link: null };
    this.connections.set(socket, state);
    const lines = new LineBuffer(MAX_LINE_BYTES);
    const write = (message: object) => {
      if (!socket.destroyed) socket.write(JSON.stringify(message) + "\n");
    };
    let refused = false;
    const refuse = (reason: string) => {
      if (refused) return;
      refused = true;
      this.host.log.warn(`MCP bridge: refused a stdio bridge connection: ${reason}`);
      write({ cordonBridge: "refused", reason });
      socket.end();
      setTimeout(() => socket.destroy(), 1000).unref();
    };
    const timer = setTimeout(() => refuse("no hello"), HELLO_TIMEOUT_MS);
    timer.unref();

    const hello = (text: string) => {
      clearTimeout(timer);
      let value: { endpoint?: unknown; token?: unknown } | null;
      try {
        value = JSON.parse(text) as { endpoint?: unknown; token?: unknown } | null;
      } catch {
        value = null;
      }
      const endpoint = typeof value?.endpoint === "string" ? this.host.endpoint(value.endpoint) : undefined;
      if (!endpoint || typeof value?.token !== "string" || !sameSecret(value.token, endpoint.secret)) {
        return refuse("unknown endpoint or wrong token");
      }
      state.endpoint = endpoint;
      write({ cordonBridge: "ok" });
      state.link = this.host.openLink(endpoint, (message) => write(message));
    };

    const line = (text: string) => {
      if (refused) return;
      if (!state.endpoint) return hello(text);
      if (!state.link) return; // refused: ignore the rest
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        return write(errorResponse(null, ErrorCodes.parseError, `Parse error: ${(error as Error).message}`));
      }
      const c = classify(value);
      if (c.kind === "invalid") return write(errorResponse(c.id, ErrorCodes.invalidRequest, `Invalid Request: ${c.reason}`));
      state.link.fromClient(c.message as JsonRpcMessage, write);
    };

    socket.on("data", (chunk: Buffer) => {
      for (const l of lines.push(chunk)) {
        if (l.kind === "oversized") write(errorResponse(null, ErrorCodes.invalidRequest, `line of ${l.bytes} bytes exceeds the limit`));
        else if (l.text.trim() !== "") line(l.text);
      }
    });
    socket.on("error", () => {}); // reported as close
    socket.once("close", () => {
      clearTimeout(timer);
      this.connections.delete(socket);
      state.link?.close("the stdio bridge connection closed");
    });
  }
}
