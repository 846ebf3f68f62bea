import { describe, expect, it } from "vitest";
import { editDistance, nearestName } from "./nearest-name.js";

describe("nearestName", () => {
  const proxyKeys = [
    "name",
    "onFailure",
    "wasm",
    "sha256",
    "grants",
    "config",
    "limits",
    "isolation",
    "package",
    "command",
    "args",
    "env",
    "cwd",
    "trusted",
  ];
  const limitKeys = ["receiveTimeoutMs", "startTimeoutMs", "maxMemoryMiB", "maxMessageUnits", "maxSendsPerReceive"];

  it("finds swaps, slips, case and a missing unit suffix", () => {
    expect(nearestName("wams", proxyKeys)).toBe("wasm");
    expect(nearestName("grant", proxyKeys)).toBe("grants");
    expect(nearestName("onfailure", proxyKeys)).toBe("onFailure");
    expect(nearestName("confg", proxyKeys)).toBe("config");
    expect(nearestName("receiveTimeout", limitKeys)).toBe("receiveTimeoutMs");
    expect(nearestName("maxMemoryMB", limitKeys)).toBe("maxMemoryMiB");
  });

  it("says nothing when nothing is near", () => {
    expect(nearestName("colour", proxyKeys)).toBeNull();
    expect(nearestName("x", proxyKeys)).toBeNull();
    expect(nearestName("timeout", limitKeys)).toBeNull();
  });

  it("counts a swap of neighbours as one edit", () => {
    expect(editDistance("wams", "wasm")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
  });
});
