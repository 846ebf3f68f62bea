/**
 * A real ACP client session against a spawned command, built on the official
 * `@agentclientprotocol/sdk` client: the demo, the benchmarks and the tests all drive Cordon (or
 * an agent directly) through this, the way an editor would.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { endChild } from "./end-child.js";

export type PermissionResponder = (
  request: acp.RequestPermissionRequest,
) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;

export type ClientEvent =
  | { kind: "update"; notification: acp.SessionNotification }
  | { kind: "permission"; request: acp.RequestPermissionRequest; response: acp.RequestPermissionResponse };

export interface SpawnOptions {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Answers `session/request_permission`; default: choose the first allow option. */
  permission?: PermissionResponder;
  /** Sees every update and permission exchange as it happens. */
  onEvent?: (event: ClientEvent) => void;
  /** Receives the child's stderr (default: kept in `stderr` only). */
  onStderr?: (chunk: string) => void;
}

export const allowFirst: PermissionResponder = (request) => {
  const option = request.options.find((o) => o.kind.startsWith("allow")) ?? request.options[0];
  return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : { outcome: { outcome: "cancelled" } };
};

export const rejectFirst: PermissionResponder = (request) => {
  const option = request.options.find((o) => o.kind.startsWith("reject"));
  return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : { outcome: { outcome: "cancelled" } };
};

export class SpawnedAgent {
  readonly events: ClientEvent[] = [];
  stderr = "";
  readonly child: ChildProcess;
  readonly connection: acp.ClientConnection;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(options: SpawnOptions) {
    this.child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (chunk: string) => {
      this.stderr += chunk;
      options.onStderr?.(chunk);
    });
    const record = (event: ClientEvent) => {
      this.events.push(event);
      options.onEvent?.(event);
    };
    const policy = options.permission ?? allowFirst;
    const app = acp
      .client({ name: "cordon-test-client" })
      .onNotification(acp.methods.client.session.update, ({ params }) => record({ kind: "update", notification: params }))
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
        const response = await policy(params);
        record({ kind: "permission", request: params, response });
        return response;
      });
    const stream = acp.ndJsonStream(
      Writable.toWeb(this.child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(this.child.stdout!) as ReadableStream<Uint8Array>,
    );
    this.connection = app.connect(stream);
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  /** initialize with the given client capabilities (default: none). */
  initialize(clientCapabilities: acp.ClientCapabilities = {}): Promise<acp.InitializeResponse> {
    return this.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities });
  }

  async newSession(cwd = process.cwd()): Promise<string> {
    const response = await this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    return response.sessionId;
  }

  /** Sends a text prompt and returns the stop reason; updates land in `events`. */
  async prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  /** Text of the agent_message_chunk updates recorded for a session, in order. */
  messageText(sessionId: string, since = 0): string {
    return this.events
      .slice(since)
      .map((e) =>
        e.kind === "update" &&
        e.notification.sessionId === sessionId &&
        e.notification.update.sessionUpdate === "agent_message_chunk" &&
        e.notification.update.content.type === "text"
          ? e.notification.update.content.text
          : "",
      )
      .join("");
  }

  /** Closes stdin (as an editor does) and waits for the process to end. */
  async close(timeoutMs = 5000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.connection.close();
    return endChild(this.child, this.exited, timeoutMs);
  }
}
