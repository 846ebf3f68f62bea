/** Method names the conductor itself looks at. Everything else is forwarded without interpretation. */
export const Methods = {
  initialize: "initialize",
  sessionPrompt: "session/prompt",
  requestPermission: "session/request_permission",
  elicitationCreate: "elicitation/create",
  sessionCancel: "session/cancel",
  cancelRequest: "$/cancel_request",
  /** Proxy-chains RFD names: what Cordon sends. */
  proxyInitialize: "proxy/initialize",
  proxySuccessor: "proxy/successor",
  /** Rust SDK spellings, accepted on input. */
  legacyProxyInitialize: "_proxy/initialize",
  legacyProxySuccessor: "_proxy/successor",
  /** Cordon's own extensions on the proxy channel (see wit/README.md). */
  cordonConfigure: "_cordon/configure",
  cordonLog: "_cordon/log",
  /** Conductor → client: something happened to a component (a proxy failed, restarted, was bypassed). */
  cordonNotice: "_cordon/notice",
} as const;

export const isProxyInitialize = (method: string) =>
  method === Methods.proxyInitialize || method === Methods.legacyProxyInitialize;
export const isProxySuccessor = (method: string) =>
  method === Methods.proxySuccessor || method === Methods.legacyProxySuccessor;
