import { describe, expect, it } from "vitest";
import { PromptRun, ToolCallTracker, toEvent } from "./prompt-stream.js";

describe("toEvent", () => {
  it("maps each v1 update kind to its typed event", () => {
    const t = new ToolCallTracker();
    expect(toEvent({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" }, messageId: "m1" }, t)).toEqual({
      type: "text",
      text: "hi",
      messageId: "m1",
    });
    const image = { type: "image", data: "AA==", mimeType: "image/png" };
    expect(toEvent({ sessionUpdate: "agent_message_chunk", content: image }, t)).toEqual({ type: "message", content: image });
    expect(toEvent({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } }, t)).toMatchObject({
      type: "thought",
      text: "hmm",
    });
    expect(toEvent({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "q" } }, t)).toEqual({
      type: "user",
      content: { type: "text", text: "q" },
    });
    const entries = [{ content: "a", priority: "high", status: "pending" }];
    expect(toEvent({ sessionUpdate: "plan", entries }, t)).toEqual({ type: "plan", entries });
    expect(toEvent({ sessionUpdate: "current_mode_update", currentModeId: "code" }, t)).toEqual({ type: "mode", modeId: "code" });
    expect(toEvent({ sessionUpdate: "config_option_update", configOptions: [] }, t)).toEqual({ type: "config", configOptions: [] });
    expect(toEvent({ sessionUpdate: "available_commands_update", availableCommands: [{ name: "x", description: "y" }] }, t)).toEqual({
      type: "commands",
      commands: [{ name: "x", description: "y" }],
    });
    expect(toEvent({ sessionUpdate: "session_info_update", title: "T" }, t)).toEqual({ type: "session_info", title: "T" });
  });

  it("reports usage with cost and currency only when the agent reported them", () => {
    const t = new ToolCallTracker();
    expect(toEvent({ sessionUpdate: "usage_update", used: 10, size: 100 }, t)).toEqual({ type: "usage", used: 10, size: 100 });
    expect(toEvent({ sessionUpdate: "usage_update", used: 10, size: 100, cost: { amount: 0.5, currency: "USD" } }, t)).toEqual({
      type: "usage",
      used: 10,
      size: 100,
      cost: { amount: 0.5, currency: "USD" },
    });
    expect(toEvent({ sessionUpdate: "usage_update", used: 10, size: 100, cost: null }, t)).not.toHaveProperty("cost");
  });

  it("hands unknown kinds and malformed known ones over raw, exactly as received", () => {
    const t = new ToolCallTracker();
    const future = { sessionUpdate: "future_kind", payload: { deep: [1, 2] }, _meta: { x: 1 } };
    expect(toEvent(future, t)).toEqual({ type: "raw", sessionUpdate: "future_kind", update: future });
    const bad = { sessionUpdate: "usage_update", used: "many" };
    expect(toEvent(bad, t)).toEqual({ type: "raw", sessionUpdate: "usage_update", update: bad });
    expect(toEvent({ sessionUpdate: "tool_call_update" }, t).type).toBe("raw");
  });

  it("correlates tool-call updates by id: fields present replace, absent ones stay", () => {
    const t = new ToolCallTracker();
    const first = toEvent(
      {
        sessionUpdate: "tool_call",
        toolCallId: "a",
        title: "Edit f",
        kind: "edit",
        status: "pending",
        locations: [{ path: "/w/f", line: 3 }],
      },
      t,
    );
    expect(first).toMatchObject({
      type: "tool_call",
      toolCallId: "a",
      call: { title: "Edit f", kind: "edit", status: "pending", locations: [{ path: "/w/f", line: 3 }] },
    });
    toEvent({ sessionUpdate: "tool_call", toolCallId: "b", title: "Other" }, t);
    const update = toEvent(
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "a",
        status: "completed",
        content: [
          { type: "content", content: { type: "text", text: "line 1" } },
          { type: "diff", path: "/w/f", oldText: "x", newText: "y" },
          { type: "terminal", terminalId: "t1" },
          { type: "content", content: { type: "text", text: "line 2" } },
        ],
      },
      t,
    );
    expect(update).toMatchObject({
      type: "tool_call_update",
      toolCallId: "a",
      call: {
        title: "Edit f",
        kind: "edit",
        status: "completed",
        text: "line 1\nline 2",
        diffs: [{ path: "/w/f", oldText: "x", newText: "y" }],
        terminalIds: ["t1"],
        locations: [{ path: "/w/f", line: 3 }],
      },
      update: { status: "completed" },
    });
    expect(t.get("b")?.title).toBe("Other");
    expect(t.all().map((c) => c.toolCallId)).toEqual(["a", "b"]);
    // A snapshot is not changed by later updates.
    const snapshot = (update as { call: { status: string } }).call;
    toEvent({ sessionUpdate: "tool_call_update", toolCallId: "a", status: "failed" }, t);
    expect(snapshot.status).toBe("completed");
    expect(t.get("a")?.status).toBe("failed");
  });
});

describe("PromptRun", () => {
  it("yields events in order up to the stop, and text() takes only the text", async () => {
    const run = new PromptRun(() => {});
    run.push({ type: "text", text: "a" });
    run.push({ type: "thought", text: "t", content: { type: "text", text: "t" } });
    run.push({ type: "raw", sessionUpdate: "x", update: { sessionUpdate: "x" } });
    run.push({ type: "text", text: "b" });
    run.push({ type: "stop", stopReason: "end_turn", response: { stopReason: "end_turn" } });
    expect(await run.text()).toBe("ab");
    expect((await run.result).stopReason).toBe("end_turn");
  });

  it("throws the failure after the events that came before it", async () => {
    const run = new PromptRun(() => {});
    run.push({ type: "text", text: "a" });
    setTimeout(() => run.fail(new Error("boom")), 5);
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const e of run) seen.push(e.type);
      })(),
    ).rejects.toThrow("boom");
    expect(seen).toEqual(["text"]);
    await expect(run.result).rejects.toThrow("boom");
  });

  it("is read once", async () => {
    const run = new PromptRun(() => {});
    run.push({ type: "stop", stopReason: "end_turn", response: { stopReason: "end_turn" } });
    await run.text();
    await expect(run.text()).rejects.toThrow("read only once");
  });
});
