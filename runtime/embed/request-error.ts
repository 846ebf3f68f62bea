/**
 * The error an embedder's handlers throw to answer the agent with a JSON-RPC error of their
 * choosing: `fs`, `terminal` and `onRequest` handlers run for requests the agent sends, and what
 * they throw becomes the answer. A {@link RequestError} keeps its `code`, `message` and `data`;
 * anything else is answered `-32603` (internal error) with its message.
 *
 * ```ts
 * fs: {
 *   readTextFile: async ({ path }) => {
 *     if (!existsSync(path)) throw RequestError.resourceNotFound(path); // -32002: agents create the file
 *     return { content: await readFile(path, "utf8") };
 *   },
 * }
 * ```
 *
 * The codes are ACP's (JSON-RPC's, plus `-32000` auth required and `-32002` resource not found);
 * the constructors mirror the ACP SDK's `RequestError`, whose instances are answered alike.
 */
import { ErrorCodes, type JsonRpcError } from "../protocol/json-rpc.js";

/** ACP's error codes: JSON-RPC's and the two ACP adds. */
export const RequestErrorCodes = {
  ...ErrorCodes,
  authRequired: -32000,
  resourceNotFound: -32002,
} as const;

/** Thrown by a handler to answer the request with this JSON-RPC error. */
export class RequestError extends Error {
  constructor(
    /** The JSON-RPC error code (an integer). */
    readonly code: number,
    message: string,
    /** The error's `data`, sent as given (any JSON). */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RequestError";
  }

  /** -32700: what was received is not JSON. */
  static parseError(data?: unknown, detail?: string): RequestError {
    return new RequestError(RequestErrorCodes.parseError, withDetail("Parse error", detail), data);
  }

  /** -32600: not a valid request. */
  static invalidRequest(data?: unknown, detail?: string): RequestError {
    return new RequestError(RequestErrorCodes.invalidRequest, withDetail("Invalid request", detail), data);
  }

  /** -32601: the method does not exist here; `data.method` names it. */
  static methodNotFound(method: string): RequestError {
    return new RequestError(RequestErrorCodes.methodNotFound, `Method not found: ${method}`, { method });
  }

  /** -32602: the parameters are wrong. */
  static invalidParams(data?: unknown, detail?: string): RequestError {
    return new RequestError(RequestErrorCodes.invalidParams, withDetail("Invalid params", detail), data);
  }

  /** -32603: the handler failed. */
  static internalError(data?: unknown, detail?: string): RequestError {
    return new RequestError(RequestErrorCodes.internalError, withDetail("Internal error", detail), data);
  }

  /** -32800: the request was cancelled. */
  static requestCancelled(data?: unknown, detail?: string): RequestError {
    return new RequestError(RequestErrorCodes.requestCancelled, withDetail("Request cancelled", detail), data);
  }

  /** -32000: the agent must authenticate first. */
  static authRequired(data?: unknown, detail?: string): RequestError {
    return new RequestError(RequestErrorCodes.authRequired, withDetail("Authentication required", detail), data);
  }

  /** -32002: the file (or other resource) does not exist; `data.uri` names it when given. */
  static resourceNotFound(uri?: string): RequestError {
    return new RequestError(
      RequestErrorCodes.resourceNotFound,
      withDetail("Resource not found", uri),
      uri === undefined ? undefined : { uri },
    );
  }

  /** The `error` member of the answer. */
  toJsonRpc(): JsonRpcError {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

function withDetail(message: string, detail: string | undefined): string {
  return detail ? `${message}: ${detail}` : message;
}

/**
 * The `error` member answering a request whose handler threw `thrown`: a {@link RequestError}'s
 * own, the same for an error of the ACP SDK's shape (an integer `code` and a string `message`),
 * else -32603 with its message.
 */
export function errorAnswer(thrown: unknown): JsonRpcError {
  if (thrown instanceof RequestError) return thrown.toJsonRpc();
  if (thrown instanceof Error) {
    const { code, data } = thrown as Error & { code?: unknown; data?: unknown };
    if (Number.isSafeInteger(code)) return new RequestError(code as number, thrown.message, data).toJsonRpc();
  }
  return { code: RequestErrorCodes.internalError, message: (thrown as Error)?.message ?? String(thrown) };
}
