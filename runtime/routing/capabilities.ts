/**
 * The capability contract at the chain's entrance: the client learns from the chain's
 * `initialize` answer (after every proxy had its say) what prompts may carry, and a prompt with
 * content outside that is refused whole, before any of it reaches a proxy or the agent.
 */
import type { PromptCapabilities as AcpPromptCapabilities } from "@agentclientprotocol/sdk";
import { paramsObject } from "../protocol/json-rpc.js";

/** The flags of ACP's `PromptCapabilities` the contract gates on (its `_meta` is not needed here). */
export type PromptCapabilities = Pick<AcpPromptCapabilities, "image" | "audio" | "embeddedContext">;

export function promptCapabilitiesOf(result: unknown): PromptCapabilities {
  const caps = paramsObject(paramsObject(paramsObject(result)?.agentCapabilities)?.promptCapabilities);
  return { image: caps?.image === true, audio: caps?.audio === true, embeddedContext: caps?.embeddedContext === true };
}

/** Content the client was not told the agent accepts (text and resource links always are). */
const GATED = new Map<string, keyof PromptCapabilities>([
  ["image", "image"],
  ["audio", "audio"],
  ["resource", "embeddedContext"],
]);

/** Why a prompt carries content the chain did not advertise, or null when it does not. */
export function unsupportedContent(params: unknown, caps: PromptCapabilities): string | null {
  const prompt = paramsObject(params)?.prompt;
  if (!Array.isArray(prompt)) return null;
  for (const [i, block] of prompt.entries()) {
    const type = paramsObject(block)?.type;
    const gate = typeof type === "string" ? GATED.get(type) : undefined;
    if (gate && !caps[gate]) {
      const what = type === "resource" ? "embedded resource" : type;
      return `prompt block ${i} is an ${what}, but the agent did not advertise promptCapabilities.${gate}; nothing was sent`;
    }
  }
  return null;
}
