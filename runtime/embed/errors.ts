/**
 * The errors the embedding API throws. Each says what went wrong in words a developer can act on;
 * the class (and `code`) says which kind of problem it is, so callers can branch without parsing
 * messages:
 *
 * | class | `code` | when |
 * |---|---|---|
 * | {@link UnsupportedError} | `unsupported` | the agent did not advertise what the call needs; **nothing was sent** |
 * | {@link InvalidRequestError} | `invalid` | the call is malformed or names something the session did not announce (an unknown mode, a value not among an option's choices, a relative path); **nothing was sent** |
 * | {@link AgentError} | `agent` | the agent (or a proxy, or Cordon on their behalf) answered with a JSON-RPC error |
 * | {@link ConnectionClosedError} | `closed` | the chain is gone (closed by the application, or the agent exited) |
 * | {@link AbortError} | `aborted` | the caller's `AbortSignal` fired |
 * | {@link ChainStartError} | `start` | a component of the chain could not start (missing file, pin mismatch, agent not found, agent exited or silent before answering `initialize`, …) |
 * | {@link PromptOverflowError} | `overflow` | a prompt run's events waited unread past its bound and were dropped (the turn itself goes on) |
 * | `ConfigError` (the CLI's, re-exported) | `config` | the chain config cannot be read or does not validate, or names no agent; **nothing was started** |
 */

/** The base class of every error the embedding API throws. */
export class CordonError extends Error {
  constructor(
    message: string,
    /** Which kind of problem: `unsupported`, `invalid`, `agent`, `closed`, `aborted`, `start`, `overflow` or `config`. */
    readonly code: "unsupported" | "invalid" | "agent" | "closed" | "aborted" | "start" | "overflow" | "config",
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The agent did not advertise the capability this call needs; nothing was sent. */
export class UnsupportedError extends CordonError {
  constructor(
    message: string,
    /** The capability that is missing, as a path in the `initialize` answer (`agentCapabilities.sessionCapabilities.fork`). */
    readonly capability: string,
  ) {
    super(message, "unsupported");
  }
}

/** The call is malformed or names something the session did not announce; nothing was sent. */
export class InvalidRequestError extends CordonError {
  constructor(message: string) {
    super(message, "invalid");
  }
}

/** A JSON-RPC error answer from the chain: the agent's, a proxy's, or Cordon's on their behalf. */
export class AgentError extends CordonError {
  constructor(
    /** The request that failed (`session/prompt`). */
    readonly method: string,
    /** The JSON-RPC error code (`-32602` invalid params, `-32002` not found, …). */
    readonly rpcCode: number,
    /** The error's own message, as the chain sent it. */
    readonly rpcMessage: string,
    /** The error's `data`, if any. */
    readonly data?: unknown,
  ) {
    super(`${method} failed: ${rpcMessage} (${rpcCode})`, "agent");
  }
}

/** The chain is gone: closed by the application, or the agent exited. */
export class ConnectionClosedError extends CordonError {
  constructor(message = "the Cordon chain is closed") {
    super(message, "closed");
  }
}

/** The caller's `AbortSignal` fired before the call completed. */
export class AbortError extends CordonError {
  constructor(message = "aborted") {
    super(message, "aborted");
  }
}

/**
 * A component of the chain (a proxy, the agent) could not start — which includes an agent that
 * exited or stayed silent before answering `initialize`; the message then ends with what it wrote
 * (its stdout lines that were not JSON-RPC, its stderr tail), and `data` is the error's `data`
 * (`{cordon: {component, failure, stdout?, stderr?}}`).
 */
export class ChainStartError extends CordonError {
  constructor(
    message: string,
    readonly data?: unknown,
  ) {
    super(message, "start");
  }
}

/** A prompt run's events waited unread past its bound and were dropped; the turn goes on and `result` still resolves. */
export class PromptOverflowError extends CordonError {
  constructor(message: string) {
    super(message, "overflow");
  }
}
