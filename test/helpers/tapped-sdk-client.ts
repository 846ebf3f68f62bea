/**
 * An official `@agentclientprotocol/sdk` client on a spawned command, with a raw tap: every line
 * it writes to the child's stdin and reads from its stdout is recorded as the exact JSON on the
 * wire (the streams are wrapped before `ndJsonStream`). Requests from the agent side are answered
 * through SDK handlers by `answer`; what the SDK handed to them is kept in `calls`.
 *
 * Pairs with `test/peers/sdk-agent.mjs`: `takeRaw()` returns what both ends wrote and read since
 * the previous `takeRaw()` (the agent's side through its `_test/raw` extension request, which
 * neither tap records), so a test compares one exchange at a time.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { endChild } from "../../runtime/client/end-child.js";

export type Json = Record<string, any>;

/** Recorded lines, per direction, as seen by one peer. */
export interface RawLines {
  read: string[];
  wrote: string[];
}

/** Raw lines on both ends of a chain for one window of time. */
export interface RawWindow {
  client: RawLines;
  agent: RawLines;
}

/** Answers a request from the agent side; throw an `acp.RequestError` to answer with an error. */
export type Answer = (method: string, params: any, signal: AbortSignal) => unknown;

const CLIENT_REQUEST_METHODS = [
  acp.methods.client.session.requestPermission,
  acp.methods.client.fs.readTextFile,
  acp.methods.client.fs.writeTextFile,
  acp.methods.client.terminal.create,
  acp.methods.client.terminal.output,
  acp.methods.client.terminal.waitForExit,
  acp.methods.client.terminal.kill,
  acp.methods.client.terminal.release,
  acp.methods.client.elicitation.create,
] as const;

/** Splits a byte stream into lines and hands each non-blank one to `onLine`. */
function lineSplitter(onLine: (line: string) => void): (chunk: Uint8Array) => void {
  const decoder = new TextDecoder();
  let buffer = "";
  return (chunk) => {
    buffer += decoder.decode(chunk, { stream: true });
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim()) onLine(line);
    }
  };
}

const parse = (line: string): Json | null => {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
};

export class TappedSdkClient {
  readonly child: ChildProcess;
  readonly connection: acp.ClientConnection;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr = "";
  /** Lines since the last `takeRaw()` (or since the start). */
  raw: RawLines = { read: [], wrote: [] };
  /** What the SDK handed to the client's handlers: requests, `session/update`s and other notifications. */
  readonly calls: { method: string; params: any }[] = [];
  answer: Answer = () => {
    throw acp.RequestError.methodNotFound("(no answer set)");
  };
  private readonly hiddenIds = new Set<string>();

  constructor(command: string, args: string[], env: Record<string, string> = {}) {
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, CORDON_LOG: "warn", ...env } });
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (this.stderr += chunk));

    const tapWrote = lineSplitter((line) => {
      const m = parse(line);
      if (m?.method === "_test/raw" && "id" in m) return void this.hiddenIds.add(JSON.stringify(m.id));
      this.raw.wrote.push(line);
    });
    const tapRead = lineSplitter((line) => {
      const m = parse(line);
      if (m && !("method" in m) && this.hiddenIds.delete(JSON.stringify(m.id))) return;
      this.raw.read.push(line);
    });
    const stdin = (Writable.toWeb(this.child.stdin!) as WritableStream<Uint8Array>).getWriter();
    const output = new WritableStream<Uint8Array>({
      async write(chunk) {
        tapWrote(chunk);
        await stdin.write(chunk);
      },
      async close() {
        await stdin.close();
      },
    });
    const input = (Readable.toWeb(this.child.stdout!) as ReadableStream<Uint8Array>).pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          tapRead(chunk);
          controller.enqueue(chunk);
        },
      }),
    );

    let app = acp.client({ name: "cordon-sdk-peer-test" });
    for (const method of CLIENT_REQUEST_METHODS) {
      app = app.onRequest(
        method as any,
        (async ({ params, signal }: { params: any; signal: AbortSignal }) => {
          this.calls.push({ method, params });
          return this.answer(method, params, signal);
        }) as any,
      );
    }
    app = app
      .onNotification(
        acp.methods.client.session.update,
        ({ params }) => void this.calls.push({ method: acp.methods.client.session.update, params }),
      )
      .onNotification(
        acp.methods.client.elicitation.complete,
        ({ params }) => void this.calls.push({ method: acp.methods.client.elicitation.complete, params }),
      )
      .onRequest("*", async ({ method, params, signal }) => {
        this.calls.push({ method, params });
        return this.answer(method, params, signal);
      })
      .onNotification("*", ({ method, params }) => void this.calls.push({ method, params }));
    this.connection = app.connect(acp.ndJsonStream(output, input));
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  /**
   * What both ends wrote and read since the previous call, and starts a new window. Call it only
   * when the chain is quiet (every request of the exchange answered).
   */
  async takeRaw(): Promise<RawWindow> {
    const agent = await this.agent.request<RawLines>("_test/raw", {});
    const client = this.raw;
    this.raw = { read: [], wrote: [] };
    return { client, agent };
  }

  /** Closes stdin (as an editor does) and waits for the process to end (SIGKILL after `timeoutMs`). */
  async close(timeoutMs = 5000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.connection.close();
    return endChild(this.child, this.exited, timeoutMs);
  }
}

/** Parsed lines with the JSON-RPC `id` removed (ids are re-issued on every hop). */
export function withoutIds(lines: string[]): Json[] {
  return lines.map((line) => {
    const { id: _id, ...rest } = JSON.parse(line) as Json;
    return rest;
  });
}

/** The parsed messages of a list of raw lines. */
export const parsed = (lines: string[]): Json[] => lines.map((line) => JSON.parse(line) as Json);
