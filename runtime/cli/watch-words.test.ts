import { describe, expect, it } from "vitest";
import { watchLines } from "./watch-words.js";

describe("watchLines", () => {
  it("names the methods and update kinds a proxy sees, and says the rest passes it unseen", () => {
    const redact = { methods: ["session/request_permission"], updates: ["agent_message_chunk", "tool_call"] };
    expect(watchLines(redact, "  ", false)).toEqual([
      "only method session/request_permission; session/update kinds agent_message_chunk, tool_call",
      "  everything else passes it without entering its sandbox (it never sees it)",
    ]);
    expect(watchLines({ methods: ["session/prompt", "session/update"], updates: ["tool_call"] }, "", false)[0]).toBe(
      "only method session/prompt; every session/update",
    );
    expect(watchLines({ methods: [], updates: [] }, "", false)[0]).toBe("nothing: it declares no method and no update kind");
  });

  it("says which answers pass it when the manifest declares `answers`", () => {
    expect(watchLines({ methods: ["session/prompt"], updates: [], answers: [] }, "  ", false)).toEqual([
      "only method session/prompt",
      "  everything else passes it without entering its sandbox (it never sees it)",
      "  the answers to what it forwards pass it too",
    ]);
    expect(watchLines({ methods: ["session/new", "session/prompt"], answers: ["session/new"] }, "", false).at(-1)).toBe(
      "of the answers to what it forwards, it sees only those to session/new; the rest pass it",
    );
    expect(watchLines({ methods: ["session/prompt"] }, "", false)).toHaveLength(2);
  });

  it("says a proxy without watches sees everything, and when filters are turned off", () => {
    expect(watchLines(undefined, "  ", false)).toEqual(["every message (its manifest declares no watches)"]);
    expect(watchLines({ methods: ["session/prompt"] }, "  ", true).at(-1)).toMatch(/CORDON_INTEREST_FILTERS=off/);
  });
});
