/**
 * Method names the conductor itself looks at. Everything else is forwarded without interpretation.
 *
 * The ACP names are checked against `@agentclientprotocol/sdk`'s own constants at compile time
 * (`satisfies` a type-only import): a rename in the SDK fails `tsc`, and the router loads nothing
 * from the SDK at run time.
 */
import type { AGENT_METHODS, CLIENT_METHODS, PROTOCOL_METHODS } from "@agentclientprotocol/sdk";
import type { PROXY_METHODS } from "@agentclientprotocol/sdk/unstable";

type Agent = typeof AGENT_METHODS;
type Client = typeof CLIENT_METHODS;

export const Methods = {
  initialize: "initialize" satisfies Agent["initialize"],
  sessionPrompt: "session/prompt" satisfies Agent["session_prompt"],
  requestPermission: "session/request_permission" satisfies Client["session_request_permission"],
  elicitationCreate: "elicitation/create" satisfies Client["elicitation_create"],
  sessionCancel: "session/cancel" satisfies Agent["session_cancel"],
  cancelRequest: "$/cancel_request" satisfies (typeof PROTOCOL_METHODS)["cancel_request"],
  /** Proxy-chains RFD names: what Cordon sends. */
  proxyInitialize: "proxy/initialize" satisfies (typeof PROXY_METHODS)["proxy_initialize"],
  proxySuccessor: "proxy/successor" satisfies (typeof PROXY_METHODS)["proxy_successor"],
  /** Rust SDK spellings, accepted on input. */
  legacyProxyInitialize: "_proxy/initialize",
  legacyProxySuccessor: "_proxy/successor",
  /** Cordon's own extensions on the proxy channel (see wit/README.md). */
  cordonConfigure: "_cordon/configure",
  cordonLog: "_cordon/log",
  /** Proxy → host, in a `receive`: hand on the message just delivered, unchanged (components/unchanged-forward.ts). */
  cordonForward: "_cordon/forward",
  /** Conductor → client: something happened to a component (a proxy failed, restarted, was bypassed). */
  cordonNotice: "_cordon/notice",
} as const;

/**
 * The marker a guest sends to hand on, unchanged, the notification it was just delivered, written
 * exactly so (components/unchanged-forward.ts; a request's marker carries the guest's id). The
 * sandbox hands this very string over when a guest writes it (canonical-host.ts), so the marker is
 * neither copied out of the guest nor taken apart to be recognised.
 */
export const FORWARD_MARKER = `{"jsonrpc":"2.0","method":"${Methods.cordonForward}"}`;

export const isProxyInitialize = (method: string) => method === Methods.proxyInitialize || method === Methods.legacyProxyInitialize;
export const isProxySuccessor = (method: string) => method === Methods.proxySuccessor || method === Methods.legacyProxySuccessor;
