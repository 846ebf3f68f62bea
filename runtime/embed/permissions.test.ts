import type * as acp from "@agentclientprotocol/sdk/unstable";
import { describe, expect, it } from "vitest";
import { decide, type PermissionRequest, resolveDecision } from "./permissions.js";

const options: acp.PermissionOption[] = [
  { optionId: "once", name: "Allow once", kind: "allow_once" },
  { optionId: "always", name: "Allow always", kind: "allow_always" },
  { optionId: "no", name: "Reject", kind: "reject_once" },
];
const allowOnly: acp.PermissionOption[] = [{ optionId: "ok", name: "OK", kind: "allow_once" }];

function request(opts = options, signal = new AbortController().signal): PermissionRequest {
  return {
    sessionId: "s",
    toolCall: { toolCallId: "t", status: "pending", text: "", diffs: [], terminalIds: [], locations: [], content: [] },
    options: opts,
    raw: {} as acp.RequestPermissionRequest,
    signal,
  };
}

describe("resolveDecision", () => {
  it("maps presets and option ids to the agent's options", () => {
    expect(resolveDecision("allow", options)).toMatchObject({ outcome: "allowed", optionId: "once" });
    expect(resolveDecision("allow_always", options)).toMatchObject({ outcome: "allowed", optionId: "always" });
    expect(resolveDecision("deny", options)).toMatchObject({
      outcome: "denied",
      optionId: "no",
      response: { outcome: { outcome: "selected", optionId: "no" } },
    });
    expect(resolveDecision({ optionId: "always" }, options)).toMatchObject({ outcome: "allowed", optionId: "always" });
    expect(resolveDecision("cancel", options)).toEqual({ outcome: "cancelled", response: { outcome: { outcome: "cancelled" } } });
  });

  it("never allows by accident: an unknown option or a missing reject option denies without selecting an allow", () => {
    expect(resolveDecision({ optionId: "nope" }, options)).toMatchObject({ outcome: "denied", optionId: "no" });
    expect(resolveDecision("deny", allowOnly)).toEqual({ outcome: "denied", response: { outcome: { outcome: "cancelled" } } });
    expect(resolveDecision("allow", [{ optionId: "no", name: "No", kind: "reject_once" }])).toMatchObject({
      outcome: "denied",
      optionId: "no",
    });
  });
});

describe("decide", () => {
  it("answers a withdrawn request cancelled, even while the callback still thinks", async () => {
    const controller = new AbortController();
    const pending = decide(() => new Promise(() => {}), request(options, controller.signal));
    controller.abort();
    expect(await pending).toMatchObject({ outcome: "cancelled" });
  });

  it("treats a callback that throws as deny", async () => {
    const errors: unknown[] = [];
    const resolved = await decide(
      () => {
        throw new Error("bug");
      },
      request(),
      (e) => errors.push(e),
    );
    expect(resolved).toMatchObject({ outcome: "denied", optionId: "no" });
    expect(errors).toHaveLength(1);
  });

  it("uses presets without a callback", async () => {
    expect(await decide("allow", request())).toMatchObject({ outcome: "allowed" });
    expect(await decide("deny", request())).toMatchObject({ outcome: "denied" });
  });
});
