/**
 * # Cordon as a library
 *
 * `import { connect } from "@cordon/cli"` starts a Cordon chain — the same conductor, WebAssembly
 * sandboxes, proxies and MCP bridge as `cordon run` — inside your process, in front of an agent
 * command, and gives you a typed ACP client connection to drive it. Nothing is written to stdout.
 *
 * ```ts
 * import { connect } from "@cordon/cli";
 *
 * const cordon = await connect({
 *   chain: { proxies: [{ name: "redact", wasm: "proxies/dist/redact.wasm" }] },
 *   agent: ["cordon", "reference-agent"], // the installed binary, never `npx` of a registry name
 *   permissions: "deny",
 * });
 * const session = await cordon.newSession({ cwd: process.cwd() });
 * for await (const event of session.prompt("tool Run tests")) {
 *   if (event.type === "text") console.log(event.text);
 *   if (event.type === "tool_call_update") console.log(event.call.title, event.call.status);
 *   if (event.type === "stop") console.log("stop:", event.stopReason);
 * }
 * await cordon.close();
 * ```
 *
 * - {@link connect} / {@link Connection}: sessions (`newSession`, `loadSession`, `resumeSession`,
 *   `forkSession`, `listSessions`, `closeSession`, `deleteSession`), each refused with an
 *   {@link UnsupportedError} before sending when the agent did not advertise it.
 * - {@link Session}: `prompt` → {@link PromptRun} (typed {@link PromptEvent}s, `.text()`),
 *   `setMode` / `setConfigOption` validated against what the session announced, `cancel`.
 * - Permissions: `permissions: "allow" | "deny" | (request) => decision` ({@link PermissionPolicy}).
 * - Capabilities: pass `fs` / `terminal` implementations to declare them; a handler (or
 *   `onRequest`) answers with an error code by throwing a {@link RequestError}
 *   (`RequestError.resourceNotFound(path)`, `RequestError.invalidParams(data)`, …).
 * - {@link startChain}: the raw layer (JSON-RPC in and out) for clients of your own.
 */

export type * as acp from "@agentclientprotocol/sdk/unstable";
export { type ChainConfig, ChainConfigSchema, ConfigError } from "./cli/chain-config.js";
export type { FileSystemHandlers, TerminalHandlers } from "./embed/capabilities.js";
export {
  type AgentInput,
  type ChainConfigInput,
  type ChainExit,
  type ChainOptions,
  type LogOption,
  type NativeProxyInput,
  type RunningChain,
  resolveChainConfig,
  startChain,
  type WasmProxyInput,
} from "./embed/chain.js";
export { Connection, type ConnectOptions, connect, type SessionOptions, type Supports } from "./embed/client.js";
export {
  AbortError,
  AgentError,
  ChainStartError,
  ConnectionClosedError,
  CordonError,
  InvalidRequestError,
  PromptOverflowError,
  UnsupportedError,
} from "./embed/errors.js";
export { type PermissionDecision, type PermissionPolicy, type PermissionRequest, resolveDecision } from "./embed/permissions.js";
export {
  type PermissionEvent,
  type PromptEvent,
  type PromptResult,
  PromptRun,
  type StopEvent,
  ToolCallTracker,
  type ToolCallView,
  toEvent,
  type UsageEvent,
} from "./embed/prompt-stream.js";
export { RequestError, RequestErrorCodes } from "./embed/request-error.js";
export type { RequestOptions } from "./embed/rpc.js";
export { type PromptInput, Session } from "./embed/session.js";
