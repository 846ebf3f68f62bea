/**
 * The client's JSON-RPC endpoint on the in-process link: its own request ids, answers matched
 * back, requests from the chain dispatched to handlers, `$/cancel_request` both ways.
 *
 * Answers are handled synchronously, in the order messages arrive: a request's `onResult` hook
 * runs before the next message is looked at. That matters because agents send updates right after
 * an answer (`available_commands_update` after `session/new`), and the session the answer creates
 * must exist by then; a promise continuation would run too late.
 */
import { classify, type JsonRpcId, type JsonRpcMessage, type JsonRpcResponse } from "../protocol/json-rpc.js";
import { AbortError, AgentError, ConnectionClosedError } from "./errors.js";
import { errorAnswer } from "./request-error.js";

export interface RequestOptions {
  /** Cancels the request: `$/cancel_request` goes to the chain and the call rejects with {@link AbortError}. */
  signal?: AbortSignal;
}

export interface IncomingHandlers {
  /** A request from the chain; the resolved value is the result, a thrown `RequestError` (or any error) the error answer (`errorAnswer`). */
  request(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  notification(method: string, params: unknown): void;
}

interface Pending {
  method: string;
  settle(response: JsonRpcResponse): void;
  fail(error: Error): void;
}

export class RpcEndpoint {
  private nextId = 1;
  private readonly pending = new Map<JsonRpcId, Pending>();
  private readonly incoming = new Map<string, AbortController>();
  private closedWith: Error | null = null;

  constructor(
    private readonly write: (message: JsonRpcMessage) => boolean,
    private readonly handlers: IncomingHandlers,
    /** Called whenever a request starts or stops waiting for its answer. */
    private readonly onPendingChange: () => void = () => {},
  ) {}

  get closed(): boolean {
    return this.closedWith !== null;
  }

  /** Requests waiting for their answer: `session/prompt` ones, and all others. */
  pendingCounts(): { prompts: number; others: number } {
    let prompts = 0;
    for (const p of this.pending.values()) if (p.method === "session/prompt") prompts++;
    return { prompts, others: this.pending.size - prompts };
  }

  /**
   * Sends a request. `onResult` runs synchronously with the result before the promise resolves
   * (and before any later message is handled); what it returns is what the promise resolves with.
   */
  request<R, T = R>(method: string, params: unknown, options: RequestOptions & { onResult?: (result: R) => T } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closedWith) return reject(this.closedWith);
      const signal = options.signal;
      if (signal?.aborted) return reject(new AbortError(`${method} was aborted before it was sent`));
      const id = this.nextId++;
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        this.onPendingChange();
        this.write({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
        reject(new AbortError(`${method} was aborted`));
      };
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.pending.set(id, {
        method,
        settle: (response) => {
          done();
          if (response.error) return reject(new AgentError(method, response.error.code, response.error.message, response.error.data));
          try {
            const result = response.result as R;
            resolve(options.onResult ? options.onResult(result) : (result as unknown as T));
          } catch (error) {
            reject(error);
          }
        },
        fail: (error) => {
          done();
          reject(error);
        },
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.onPendingChange();
      if (!this.write({ jsonrpc: "2.0", id, method, params })) {
        this.pending.delete(id);
        this.onPendingChange();
        done();
        reject(this.closedWith ?? new ConnectionClosedError());
      }
    });
  }

  notify(method: string, params: unknown): void {
    if (!this.closedWith) this.write({ jsonrpc: "2.0", method, params });
  }

  /** One message from the chain. */
  receive(value: unknown): void {
    const c = classify(value);
    switch (c.kind) {
      case "response": {
        const id = c.message.id;
        const pending = id === null ? undefined : this.pending.get(id);
        if (!pending || id === null) return;
        this.pending.delete(id);
        this.onPendingChange();
        pending.settle(c.message);
        return;
      }
      case "notification":
        if (c.message.method === "$/cancel_request") {
          const requestId = (c.message.params as { requestId?: unknown } | undefined)?.requestId;
          this.incoming.get(JSON.stringify(requestId))?.abort();
          return;
        }
        this.handlers.notification(c.message.method, c.message.params);
        return;
      case "request":
        void this.answer(c.message.id, c.message.method, c.message.params);
        return;
      case "invalid":
        return;
    }
  }

  private async answer(id: JsonRpcId, method: string, params: unknown): Promise<void> {
    const key = JSON.stringify(id);
    const controller = new AbortController();
    this.incoming.set(key, controller);
    let response: JsonRpcMessage;
    try {
      const result = await this.handlers.request(method, params, controller.signal);
      response = { jsonrpc: "2.0", id, result: result ?? {} };
    } catch (error) {
      response = { jsonrpc: "2.0", id, error: errorAnswer(error) };
    } finally {
      this.incoming.delete(key);
    }
    if (!this.closedWith) this.write(response);
  }

  /** The link is gone: every pending request rejects with `error`, handlers see their signals abort. */
  close(error: Error): void {
    if (this.closedWith) return;
    this.closedWith = error;
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      pending.fail(error);
    }
    this.onPendingChange();
    for (const controller of this.incoming.values()) controller.abort();
  }
}
