/**
 * `cordon mcp-bridge --port <port> --endpoint <id>` (secret in `$CORDON_BRIDGE_TOKEN`): the stdio
 * MCP server an agent without `mcpCapabilities.acp` or `http` is told to launch for a bridged
 * MCP-over-ACP server. It connects to the conductor's loopback TCP listener (`tcp-endpoint.ts`),
 * says hello with the endpoint and the secret, and then relays newline-delimited MCP JSON-RPC
 * between its stdio (the agent's MCP client) and the conductor, line by line.
 *
 * - Lines the agent writes before the conductor accepted the hello wait; if the conductor refuses
 *   (or cannot be reached after a few tries), every request among them is answered with an error
 *   and the command exits 1.
 * - If the connection to the conductor drops, every request still waiting for its answer is
 *   answered with an error on stdout, and the command exits 1 (the agent's MCP client sees the
 *   server end; a new launch gets a new connection).
 * - When stdin ends (the agent closes the server), it closes the connection and exits 0.
 */
import { connect, type Socket } from "node:net";
import { parseArgs } from "node:util";
import { LineBuffer } from "../protocol/line-buffer.js";

const CONNECT_TRIES = 8;
const MAX_LINE_BYTES = 64 * 1024 * 1024;

const USAGE = "usage: cordon mcp-bridge --port <port> --endpoint <id>   (the secret in $CORDON_BRIDGE_TOKEN)\n";

export async function runBridgeCommand(argv: string[]): Promise<number> {
  let port: number;
  let endpoint: string;
  try {
    const { values } = parseArgs({ args: argv, options: { port: { type: "string" }, endpoint: { type: "string" } }, strict: true });
    port = Number(values.port);
    endpoint = values.endpoint ?? "";
    if (!Number.isInteger(port) || port <= 0 || port > 65535 || !endpoint) throw new Error("--port and --endpoint are required");
  } catch (error) {
    process.stderr.write(`cordon mcp-bridge: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const token = process.env.CORDON_BRIDGE_TOKEN ?? "";
  return new Bridge(port, endpoint, token).run();
}

class Bridge {
  /** Requests from the agent's client not answered yet, by their id as JSON. */
  private readonly waiting = new Map<string, unknown>();
  private readonly early: string[] = [];
  private socket: Socket | null = null;
  private accepted = false;
  private finish!: (code: number) => void;
  private readonly done = new Promise<number>((resolve) => (this.finish = resolve));
  private stdinEnded = false;

  constructor(
    private readonly port: number,
    private readonly endpoint: string,
    private readonly token: string,
  ) {}

  async run(): Promise<number> {
    const input = new LineBuffer(MAX_LINE_BYTES);
    process.stdin.on("data", (chunk: Buffer) => {
      for (const line of input.push(chunk)) if (line.kind === "line" && line.text.trim() !== "") this.fromAgent(line.text);
    });
    process.stdin.once("end", () => {
      this.stdinEnded = true;
      for (const line of input.end()) if (line.kind === "line" && line.text.trim() !== "") this.fromAgent(line.text);
      if (this.accepted) this.socket?.end();
      this.finish(0);
    });
    void this.connect();
    const code = await this.done;
    this.socket?.destroy();
    return code;
  }

  private fromAgent(text: string): void {
    this.track(text);
    if (this.accepted) this.socket!.write(text + "\n");
    else this.early.push(text);
  }

  /** Remembers requests so they can be answered if the conductor goes away. */
  private track(text: string): void {
    try {
      const m = JSON.parse(text) as { id?: unknown; method?: unknown };
      if (typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number")) this.waiting.set(JSON.stringify(m.id), m.id);
    } catch {
      // Not JSON: the conductor answers it.
    }
  }

  private toAgent(text: string): void {
    try {
      const m = JSON.parse(text) as { id?: unknown; method?: unknown };
      if (m.method === undefined && m.id !== undefined) this.waiting.delete(JSON.stringify(m.id));
    } catch {
      // Relayed as is.
    }
    process.stdout.write(text + "\n");
  }

  /** Answers every waiting request with an error and ends. */
  private fail(reason: string): void {
    if (this.stdinEnded) return this.finish(0);
    // Quiet when nothing was waiting: the conductor going away first is how a chain usually ends.
    if (this.waiting.size > 0 || !this.accepted) process.stderr.write(`cordon mcp-bridge: ${reason}\n`);
    for (const id of this.waiting.values()) {
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: `Cordon MCP bridge: ${reason}` } }) + "\n");
    }
    this.waiting.clear();
    this.finish(1);
  }

  private async connect(): Promise<void> {
    let socket: Socket | null = null;
    for (let attempt = 0; attempt < CONNECT_TRIES && !socket; attempt++) {
      socket = await new Promise<Socket | null>((resolve) => {
        const s = connect({ host: "127.0.0.1", port: this.port });
        s.once("connect", () => resolve(s));
        s.once("error", () => resolve(null));
      });
      if (!socket) await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 1000)));
    }
    if (!socket) return this.fail(`cannot reach the conductor on 127.0.0.1:${this.port}`);
    this.socket = socket;
    const lines = new LineBuffer(MAX_LINE_BYTES);
    socket.on("data", (chunk: Buffer) => {
      for (const line of lines.push(chunk)) {
        if (line.kind !== "line" || line.text.trim() === "") continue;
        if (this.accepted) {
          this.toAgent(line.text);
          continue;
        }
        let hello: { cordonBridge?: unknown; reason?: unknown } = {};
        try {
          hello = JSON.parse(line.text) as typeof hello;
        } catch {
          // Treated as a refusal.
        }
        if (hello.cordonBridge !== "ok") {
          socket.destroy();
          return this.fail(`the conductor refused the bridge connection (${typeof hello.reason === "string" ? hello.reason : "no reason given"})`);
        }
        this.accepted = true;
        for (const text of this.early.splice(0)) socket.write(text + "\n");
        if (this.stdinEnded) socket.end();
      }
    });
    socket.on("error", () => {}); // reported as close
    socket.once("close", () => this.fail(this.accepted ? "the connection to the conductor closed" : "the conductor closed the connection before accepting it"));
    socket.write(JSON.stringify({ cordonBridge: 1, endpoint: this.endpoint, token: this.token }) + "\n");
  }
}
