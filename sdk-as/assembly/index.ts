// @cordon/sdk-as: write Cordon ACP proxies in AssemblyScript.
//
//   import { Proxy, PromptRequest, TextBlock, register } from "@cordon/sdk-as";
//   class Context extends Proxy {
//     onPrompt(prompt: PromptRequest): void {
//       prompt.prepend(TextBlock.of(this.config.getString("text")));
//       this.forward(prompt);
//     }
//   }
//   register(new Context());
//
// Build with `cordon-build-proxy context.ts -o context.wasm` (or `cordon build`). Every export below
// is documented in the SDK's README.md. The raw channel (`@cordon/sdk-as/raw`) is not part of this
// API: it exists for tests of the host.
export { JSON } from "json-as";
export { ErrorCode, LogLevel, McpErrorCode } from "./codes";
export { Config } from "./config";
export { ContentBlock, ResourceLinkBlock, TextBlock } from "./content";
export { arrObj, arrString, getArr, getBool, getJson, getNumber, getObj, getString, quote, stringValue, typeOf } from "./json";
export {
  InitializeRequest,
  InitializeResponse,
  Message,
  Notification,
  PermissionOption,
  PermissionOutcome,
  PermissionRequest,
  PromptRequest,
  Request,
  Response,
  SessionUpdate,
  Side,
  isObject,
} from "./messages";
export { Proxy, register } from "./proxy";
export { AvailableCommand, PerSession, SessionStore } from "./sessions";
export { McpClient, McpClientReply } from "./mcp-client";
export { McpPrompt, PromptArgument, Resource, ResourceTemplate } from "./catalog";
export { McpNotification, PromptGet, RESOURCE_NOT_FOUND, ResourceRead } from "./resources";
export { Subagent, SubagentError, SubagentState } from "./subagent";
export { McpCall, McpServer, NO_ARGUMENTS, ServedServer, Tool, ToolCall, isSessionSetup, textResult } from "./tools";
export { Clock, Datetime, Random } from "./wasi";
export { Glob, globMatch } from "./glob";
