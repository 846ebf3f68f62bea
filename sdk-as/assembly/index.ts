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
// Build with `cordon-build-proxy context.ts -o context.wasm` (sdk-as/tools/build-proxy.mjs).
export { JSON } from "json-as";
export { send } from "./abi";
export { Config } from "./config";
export { ContentBlock, Editable, ResourceLinkBlock, TextBlock } from "./content";
export { Builder, RawObject, arrObj, arrString, getArr, getBool, getJson, getNumber, getObj, getString, quote, typeOf } from "./json";
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
export { McpErrorCode, McpServer, NO_ARGUMENTS, ServedServer, Tool, ToolCall, isSessionSetup, textResult } from "./mcp";
export { ErrorCode, LogLevel, Proxy, register } from "./proxy";
export { Clock, Datetime, Random } from "./wasi";
