// Named codes: JSON-RPC / ACP error codes a proxy answers with, MCP error codes, and log levels.

/**
 * JSON-RPC and ACP error codes, for `respondError` / `deny`. `Denied` is the SDK's application code
 * for "this proxy refused the request by policy" (JSON-RPC's implementation-defined range), so a
 * client or a test can tell a refusal from a failure.
 */
export namespace ErrorCode {
  export const ParseError: i32 = -32700;
  export const InvalidRequest: i32 = -32600;
  export const MethodNotFound: i32 = -32601;
  export const InvalidParams: i32 = -32602;
  export const InternalError: i32 = -32603;
  /** ACP: the request was cancelled (`$/cancel_request`, `session/cancel`). */
  export const RequestCancelled: i32 = -32800;
  /** ACP: authentication is required before this request. */
  export const AuthRequired: i32 = -32000;
  /** Application: a proxy refused the request by policy (tool-guard's deny list, a read-only guard). */
  export const Denied: i32 = -32001;
  /** ACP: a resource (session, file) does not exist. */
  export const ResourceNotFound: i32 = -32002;
}

/** Error codes of MCP (inner) and of the MCP-over-ACP binding (outer). */
export namespace McpErrorCode {
  export const InvalidParams: i32 = -32602;
  export const MethodNotFound: i32 = -32601;
  export const InternalError: i32 = -32603;
  /** Outer: no such server registration (the ACP SDK's `serverUnavailable`). */
  export const ServerUnavailable: i32 = -33001;
}

/** Levels for `log`. */
export namespace LogLevel {
  export const Error: string = "error";
  export const Warn: string = "warn";
  export const Info: string = "info";
  export const Debug: string = "debug";
}
