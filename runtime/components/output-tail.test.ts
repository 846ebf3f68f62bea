import { describe, expect, it } from "vitest";
import { OutputTail } from "./output-tail.js";

describe("OutputTail", () => {
  it("keeps the latest 20 lines, escaped, blank ones skipped", () => {
    const tail = new OutputTail();
    tail.push("\x1b[1mWelcome\x1b[0m");
    tail.push("   ");
    expect(tail.text()).toBe("\\x1b[1mWelcome\\x1b[0m");
    for (let i = 1; i <= 25; i++) tail.push(`line ${i}`);
    expect(tail.lines()).toHaveLength(20);
    expect(tail.lines()[0]).toBe("line 6");
    expect(tail.text()).toMatch(/line 24 \| line 25$/);
  });

  it("keeps at most 4 KiB, and cuts a long line", () => {
    const tail = new OutputTail();
    for (let i = 0; i < 20; i++) tail.push(`${i} ${"x".repeat(1000)}`);
    expect(tail.lines().join("").length).toBeLessThanOrEqual(4096);
    expect(tail.lines().at(-1)).toMatch(/^19 x+… \(\d+ more chars\)$/);
  });
});
