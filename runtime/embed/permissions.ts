/**
 * Permission bridging: how the application answers the agent's `session/request_permission`.
 *
 * A policy is a preset — `"allow"` (choose an allow option) or `"deny"` (choose a reject option)
 * — or a callback that decides per request. The callback gets the tool call (merged with what the
 * session already knew of it, so a title or diff reported earlier is there), the options, and an
 * `AbortSignal` that fires if the request is withdrawn: the turn was cancelled, the chain answered
 * it on the client's behalf, or the connection closed.
 *
 * Cancel maps to deny: a withdrawn request, a callback that throws, and a decision naming no
 * option the agent offered never select an allow option, so a cancelled request never runs the
 * tool. A withdrawn request is answered `cancelled`, as ACP requires after `session/cancel`.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { ToolCallView } from "./prompt-stream.js";

/**
 * What a policy decides:
 * - `"allow"` / `"allow_always"`: the allow option of that kind (the other allow kind if only it is offered);
 * - `"deny"` / `"reject_always"`: the reject option of that kind (likewise), or `cancelled` if the agent offered no reject option;
 * - `"cancel"`: the `cancelled` outcome;
 * - `{ optionId }`: that option (an id the agent did not offer counts as `"deny"`).
 */
export type PermissionDecision = "allow" | "allow_always" | "deny" | "reject_always" | "cancel" | { optionId: string };

/** What a permission callback is given. */
export interface PermissionRequest {
  sessionId: string;
  /** The tool call the agent asks about, with what the session already knew of it. */
  toolCall: ToolCallView;
  options: acp.PermissionOption[];
  /** The request exactly as the agent sent it. */
  raw: acp.RequestPermissionRequest;
  /** Fires when the request is withdrawn (turn cancelled, chain answered it, connection closed); the answer is then `cancelled`. */
  signal: AbortSignal;
}

/** `"allow"` / `"deny"` presets, or a callback deciding each request. */
export type PermissionPolicy = "allow" | "deny" | ((request: PermissionRequest) => PermissionDecision | Promise<PermissionDecision>);

/** An answer to the agent and how it reads. */
export interface ResolvedPermission {
  response: acp.RequestPermissionResponse;
  outcome: "allowed" | "denied" | "cancelled";
  optionId?: string;
}

const CANCELLED: ResolvedPermission = { response: { outcome: { outcome: "cancelled" } }, outcome: "cancelled" };

/** Turns a decision into the answer for these options (see {@link PermissionDecision}). */
export function resolveDecision(decision: PermissionDecision, options: acp.PermissionOption[]): ResolvedPermission {
  const byKind = (...kinds: acp.PermissionOptionKind[]) => kinds.map((k) => options.find((o) => o.kind === k)).find((o) => o !== undefined);
  const select = (option: acp.PermissionOption | undefined): ResolvedPermission => {
    if (!option) return CANCELLED;
    return {
      response: { outcome: { outcome: "selected", optionId: option.optionId } },
      outcome: option.kind === "allow_once" || option.kind === "allow_always" ? "allowed" : "denied",
      optionId: option.optionId,
    };
  };
  const deny = () => {
    const resolved = select(byKind("reject_once", "reject_always"));
    return resolved.outcome === "cancelled" ? { ...CANCELLED, outcome: "denied" as const } : resolved;
  };
  if (typeof decision === "object" && decision !== null) {
    const option = options.find((o) => o.optionId === decision.optionId);
    return option ? select(option) : deny();
  }
  switch (decision) {
    case "allow":
      return select(byKind("allow_once", "allow_always")).outcome === "allowed" ? select(byKind("allow_once", "allow_always")) : deny();
    case "allow_always":
      return select(byKind("allow_always", "allow_once")).outcome === "allowed" ? select(byKind("allow_always", "allow_once")) : deny();
    case "reject_always": {
      const resolved = select(byKind("reject_always", "reject_once"));
      return resolved.outcome === "cancelled" ? { ...CANCELLED, outcome: "denied" } : resolved;
    }
    case "cancel":
      return CANCELLED;
    default:
      return deny();
  }
}

/** Asks `policy` and resolves its decision; a withdrawn request, or a callback that throws, is never an allow. */
export async function decide(
  policy: PermissionPolicy,
  request: PermissionRequest,
  onError?: (error: unknown) => void,
): Promise<ResolvedPermission> {
  if (request.signal.aborted) return CANCELLED;
  if (policy === "allow" || policy === "deny") return resolveDecision(policy, request.options);
  const withdrawn = new Promise<ResolvedPermission>((resolve) =>
    request.signal.addEventListener("abort", () => resolve(CANCELLED), { once: true }),
  );
  const decided = (async () => {
    try {
      return resolveDecision(await policy(request), request.options);
    } catch (error) {
      onError?.(error);
      return resolveDecision("deny", request.options);
    }
  })();
  const resolved = await Promise.race([decided, withdrawn]);
  return request.signal.aborted ? CANCELLED : resolved;
}
