import { describe, expect, it } from "vitest";
import { withMemoryAtTrap } from "./memory-at-trap.js";

describe("withMemoryAtTrap", () => {
  it("says where memory stood when it was near the cap", () => {
    expect(withMemoryAtTrap("unreachable", 127 * 1024 * 1024, 2048)).toBe(
      "unreachable (with its linear memory at 127 of its 128 MiB cap: it may have run out of memory)",
    );
    expect(withMemoryAtTrap("unreachable", 96 * 1024 * 1024, 2048)).toContain("at 96 of its 128 MiB cap");
  });

  it("leaves the description alone below three quarters of the cap, or without a memory", () => {
    expect(withMemoryAtTrap("unreachable", 95 * 1024 * 1024, 2048)).toBe("unreachable");
    expect(withMemoryAtTrap("Key does not exist at ~lib/map.ts:105:17", 1024 * 1024, 2048)).toBe(
      "Key does not exist at ~lib/map.ts:105:17",
    );
    expect(withMemoryAtTrap("unreachable", undefined, 2048)).toBe("unreachable");
  });
});
