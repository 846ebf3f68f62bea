/**
 * A client that speaks raw NDJSON to a spawned process, for tests that must see the exact JSON
 * on the wire (the SDK client parses through typed models and would hide what was dropped).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { endChild } from "../../runtime/client/end-child.js";
import { LineBuffer } from "../../runtime/protocol/line-buffer.js";

export type Json = Record<string, any>;

export class RawClient {
  readonly child: ChildProcess;
  readonly received: Json[] = [];
  /** Set to `[]` to keep every line from then on as written (`received` holds them parsed); off, as floods would double. */
  lines: string[] | null = null;
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private nextId = 1;
  private waiters: { test: (m: Json) => boolean; resolve: (m: Json) => void }[] = [];
  /** Answers requests from the agent side; default: method not found. */
  onRequest: (m: Json) => unknown = (m) => ({ error: { code: -32601, message: `client has no ${m.method}` } });

  constructor(command: string, args: string[], env: Record<string, string> = {}) {
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, CORDON_LOG: "warn", ...env } });
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.child.stderr!.setEncoding("utf8").on("data", (c: string) => (this.stderr += c));
    const lines = new LineBuffer();
    this.child.stdout!.on("data", (chunk: Buffer) => {
      for (const line of lines.push(chunk)) {
        if (line.kind !== "line") throw new Error("oversized line from the conductor");
        this.lines?.push(line.text);
        const msg = JSON.parse(line.text) as Json;
        this.received.push(msg);
        if ("method" in msg && "id" in msg) void this.answer(msg);
        this.waiters = this.waiters.filter((w) => (w.test(msg) ? (w.resolve(msg), false) : true));
      }
    });
  }

  private async answer(m: Json) {
    const reply = (await this.onRequest(m)) as Json;
    this.send("error" in reply ? { jsonrpc: "2.0", id: m.id, error: reply.error } : { jsonrpc: "2.0", id: m.id, result: reply.result });
  }

  send(message: Json | string): void {
    this.child.stdin!.write((typeof message === "string" ? message : JSON.stringify(message)) + "\n");
  }

  /** Resolves with the first message (already received or future) that passes `test`. */
  waitFor(test: (m: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
    const seen = this.received.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            // the last few only: a flood test may have received hundreds of MB
            new Error(
              `timed out waiting; received: ${JSON.stringify(this.received.slice(-5)).slice(-2000)}\nstderr: ${this.stderr.slice(-2000)}`,
            ),
          ),
        timeoutMs,
      );
      this.waiters.push({ test, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  }

  /** Sends a request and resolves with its response message (result or error). */
  request(method: string, params?: unknown, id: string | number = this.nextId++, timeoutMs?: number): Promise<Json> {
    this.send(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
    return this.waitFor((m) => m.id === id && !("method" in m), timeoutMs);
  }

  notify(method: string, params?: unknown): void {
    this.send(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
  }

  async close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return endChild(this.child, this.exited);
  }
}
