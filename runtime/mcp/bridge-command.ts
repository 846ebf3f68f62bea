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
import { sanitizeForLog } from "../log.js";
import { LineBuffer } from "../protocol/line-buffer.js";

const CONNECT_TRIES = 8;
const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** The conductor's answer to the hello is one short line; nothing longer is buffered before it. */
const MAX_ANSWER_BYTES = 4096;
/** What the agent may write before the conductor accepted the hello; then stdin waits. */
const MAX_EARLY_BYTES = 1024 * 1024;

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

/** How one connection attempt ended. */
type Attempt = { kind: "accepted"; socket: Socket; rest: Buffer } | { kind: "retry"; reason: string } | { kind: "refused"; reason: string };

class Bridge {
  /** Requests from the agent's client not answered yet, by their id as JSON. */
  private readonly waiting = new Map<string, unknown>();
  private readonly early: string[] = [];
  private earlyBytes = 0;
  private socket: Socket | null = null;
  private accepted = false;
  private finish!: (code: number) => void;
  private readonly done = new Promise<number>((resolve) => (this.finish = resolve));
  private stdinEnded = false;
  /** Why stdin is paused (the early buffer is full, the socket is congested); read again when none. */
  private readonly stdinHolds = new Set<"early" | "socket">();

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

  private hold(why: "early" | "socket", on: boolean): void {
    if (on) this.stdinHolds.add(why);
    else this.stdinHolds.delete(why);
    if (this.stdinHolds.size > 0) process.stdin.pause();
    else if (!this.stdinEnded) process.stdin.resume();
  }

  private fromAgent(text: string): void {
    this.track(text);
    if (this.accepted) return this.toConductor(text);
    this.early.push(text);
    this.earlyBytes += text.length;
    if (this.earlyBytes > MAX_EARLY_BYTES) this.hold("early", true);
  }

  private toConductor(text: string): void {
    const socket = this.socket!;
    if (!socket.write(text + "\n") && !this.stdinHolds.has("socket")) {
      this.hold("socket", true);
      socket.once("drain", () => this.hold("socket", false));
    }
  }

  /** Remembers requests so they can be answered if the conductor goes away. */
  private track(text: string): void {
    try {
      const m = JSON.parse(text) as { id?: unknown; method?: unknown } | null;
      if (typeof m?.method === "string" && (typeof m.id === "string" || typeof m.id === "number"))
        this.waiting.set(JSON.stringify(m.id), m.id);
    } catch {
      // Not JSON: the conductor answers it.
    }
  }

  private toAgent(text: string): void {
    try {
      const m = JSON.parse(text) as { id?: unknown; method?: unknown } | null;
      if (m?.method === undefined && (typeof m?.id === "string" || typeof m?.id === "number")) this.waiting.delete(JSON.stringify(m.id));
    } catch {
      // Relayed as is.
    }
    if (!process.stdout.write(text + "\n") && this.socket && !this.socket.isPaused()) {
      const socket = this.socket;
      socket.pause();
      process.stdout.once("drain", () => socket.resume());
    }
  }

  /** Answers every waiting request with an error and ends. */
  private fail(reason: string): void {
    if (this.stdinEnded) return this.finish(0);
    // Quiet when nothing was waiting: the conductor going away first is how a chain usually ends.
    if (this.waiting.size > 0 || !this.accepted) process.stderr.write(`cordon mcp-bridge: ${sanitizeForLog(reason)}\n`);
    for (const id of this.waiting.values()) {
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: `Cordon MCP bridge: ${reason}` } }) + "\n");
    }
    this.waiting.clear();
    this.finish(1);
  }

  /**
   * Connects and says hello, trying again (with backoff) while the conductor cannot be reached or
   * is busy (too many connections waiting to authenticate — someone may be flooding the port).
   */
  private async connect(): Promise<void> {
    let last = "";
    for (let attempt = 0; attempt < CONNECT_TRIES; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 1000)));
      const outcome = await this.attempt();
      if (outcome.kind === "refused") return this.fail(`the conductor refused the bridge connection (${outcome.reason})`);
      if (outcome.kind === "retry") {
        last = outcome.reason;
        continue;
      }
      return this.relay(outcome.socket, outcome.rest);
    }
    this.fail(last);
  }

  private attempt(): Promise<Attempt> {
    return new Promise<Attempt>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port: this.port });
      let answer: Buffer = Buffer.alloc(0);
      let settled = false;
      const settle = (outcome: Attempt) => {
        if (settled) return;
        settled = true;
        socket.removeListener("data", data);
        if (outcome.kind !== "accepted") socket.destroy();
        resolve(outcome);
      };
      const data = (chunk: Buffer) => {
        answer = Buffer.concat([answer, chunk]);
        const nl = answer.indexOf(0x0a);
        if (nl < 0) {
          if (answer.length > MAX_ANSWER_BYTES) settle({ kind: "refused", reason: "an answer to the hello that is not one" });
          return;
        }
        type Hello = { cordonBridge?: unknown; reason?: unknown } | null;
        let hello: Hello = null;
        try {
          hello = JSON.parse(answer.subarray(0, nl).toString("utf8")) as Hello;
        } catch {
          // Treated as a refusal.
        }
        const reason = typeof hello?.reason === "string" ? hello.reason : "no reason given";
        if (hello?.cordonBridge === "ok") settle({ kind: "accepted", socket, rest: answer.subarray(nl + 1) });
        else if (hello?.cordonBridge === "busy") settle({ kind: "retry", reason: `the conductor is busy (${reason})` });
        else settle({ kind: "refused", reason });
      };
      socket.once("connect", () => socket.write(JSON.stringify({ cordonBridge: 1, endpoint: this.endpoint, token: this.token }) + "\n"));
      socket.on("data", data);
      socket.on("error", () => {}); // reported as close
      socket.once("close", () => settle({ kind: "retry", reason: `cannot reach the conductor on 127.0.0.1:${this.port}` }));
    });
  }

  /** The hello was accepted: relay both ways until either side ends. */
  private relay(socket: Socket, rest: Buffer): void {
    this.socket = socket;
    const lines = new LineBuffer(MAX_LINE_BYTES);
    const data = (chunk: Buffer) => {
      for (const line of lines.push(chunk)) if (line.kind === "line" && line.text.trim() !== "") this.toAgent(line.text);
    };
    socket.on("data", data);
    socket.once("close", () => this.fail("the connection to the conductor closed"));
    this.accepted = true;
    for (const text of this.early.splice(0)) this.toConductor(text);
    this.earlyBytes = 0;
    this.hold("early", false);
    if (this.stdinEnded) socket.end();
    if (rest.length > 0) data(rest);
  }
}
