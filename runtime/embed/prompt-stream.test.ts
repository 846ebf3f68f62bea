import { describe, expect, it } from "vitest";
import { PromptOverflowError } from "./errors.js";
import { PROMPT_BUFFER_EVENTS, PromptRun, ToolCallTracker, toEvent } from "./prompt-stream.js";
import { ReadPressure } from "./read-pressure.js";

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

describe("ToolCallTracker bounds", () => {
  it("remembers a bounded number of calls and bytes, forgetting the oldest finished first", () => {
    const t = new ToolCallTracker();
    const content = [{ type: "content", content: { type: "text", text: "z".repeat(10_000) } }];
    toEvent({ sessionUpdate: "tool_call", toolCallId: "long-running", title: "Build", status: "in_progress" }, t);
    for (let i = 0; i < 5000; i++) {
      toEvent({ sessionUpdate: "tool_call", toolCallId: `c${i}`, title: "Read", status: "pending" }, t);
      toEvent({ sessionUpdate: "tool_call_update", toolCallId: `c${i}`, status: "completed", content }, t);
    }
    // 5000 calls of 10 KB each were reported (50 MB); a bounded number is kept.
    expect(t.held.calls).toBeLessThanOrEqual(512);
    expect(t.held.bytes).toBeLessThanOrEqual(16 * 1024 * 1024);
    // The unfinished call outlived the finished ones; the newest are kept.
    expect(t.get("long-running")?.status).toBe("in_progress");
    expect(t.get("c4999")?.text).toHaveLength(10_000);
    expect(t.get("c0")).toBeUndefined();
  });

  it("keeps the call just reported even when it alone is over the byte bound", () => {
    const t = new ToolCallTracker({ maxBytes: 1000 });
    toEvent({ sessionUpdate: "tool_call", toolCallId: "a", status: "completed", rawOutput: "o".repeat(5000) }, t);
    toEvent({ sessionUpdate: "tool_call", toolCallId: "b", status: "completed", rawOutput: "p".repeat(5000) }, t);
    expect(t.all().map((c) => c.toolCallId)).toEqual(["b"]);
  });
});

describe("PromptRun buffer bound", () => {
  const text = (i: number) => ({ type: "text" as const, text: `chunk ${i}` });
  const stop = { type: "stop" as const, stopReason: "end_turn" as const, response: { stopReason: "end_turn" as const } };

  it("a run nobody reads holds at most the bound, then drops what waits: iterating throws PromptOverflowError, result still resolves", async () => {
    const run = new PromptRun(() => {});
    let most = 0;
    for (let i = 0; i < 50_000; i++) {
      run.push(text(i));
      most = Math.max(most, run.buffered.events);
    }
    expect(most).toBeLessThanOrEqual(PROMPT_BUFFER_EVENTS);
    run.push(stop);
    expect(run.buffered.events).toBe(0);
    expect((await run.result).stopReason).toBe("end_turn");
    const error = await run.text().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PromptOverflowError);
    expect((error as PromptOverflowError).code).toBe("overflow");
    expect((error as Error).message).toMatch(/waited with nobody reading them .* they were dropped/);
  });

  it("bounds bytes too", () => {
    const run = new PromptRun(() => {}, undefined, { maxBytes: 100_000 });
    for (let i = 0; i < 100; i++) run.push({ type: "text", text: "b".repeat(10_000) });
    expect(run.buffered.bytes).toBeLessThanOrEqual(100_000);
  });

  it("a reader that falls behind pauses the chain until it has taken half, and loses nothing", async () => {
    const signals: boolean[] = [];
    const pressure = new ReadPressure((congested) => signals.push(congested));
    const run = new PromptRun(() => {}, pressure, { maxEvents: 100 });
    const it = run[Symbol.asyncIterator]();
    const first = it.next(); // the reader is there, waiting
    run.push(text(0));
    expect((await first).value).toEqual(text(0));
    for (let i = 1; i <= 150; i++) run.push(text(i)); // it does not read meanwhile
    expect(signals).toEqual([true]);
    expect(run.buffered.events).toBe(150);
    const seen: unknown[] = [];
    for (let i = 0; i < 100; i++) seen.push((await it.next()).value);
    expect(signals).toEqual([true, false]); // released at half
    run.push(stop);
    for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value);
    expect(seen).toEqual([...Array.from({ length: 150 }, (_, i) => text(i + 1)), stop]);
  });

  it("a reader behind by far more than the bound (events in flight past the pause) gets PromptOverflowError", async () => {
    const pressure = new ReadPressure(() => {});
    const run = new PromptRun(() => {}, pressure, { maxEvents: 10 });
    const it = run[Symbol.asyncIterator]();
    const first = it.next();
    run.push(text(0));
    await first;
    for (let i = 1; i <= 41; i++) run.push(text(i));
    expect(run.buffered.events).toBe(0);
    expect(pressure.congested).toBe(false);
    await expect(it.next()).rejects.toBeInstanceOf(PromptOverflowError);
  });

  it("a reader that leaves the loop releases what waits and holds nothing back", async () => {
    const signals: boolean[] = [];
    const run = new PromptRun(() => {}, new ReadPressure((c) => signals.push(c)), { maxEvents: 10 });
    run.push(text(0));
    for await (const _ of run) break;
    for (let i = 1; i < 1000; i++) run.push(text(i));
    expect(run.buffered.events).toBe(0);
    expect(signals).toEqual([]);
    run.push(stop);
    expect((await run.result).stopReason).toBe("end_turn");
  });
});
