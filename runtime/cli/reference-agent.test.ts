import { describe, expect, it } from "vitest";
import { parseReferenceAgentArgs } from "./reference-agent.js";

describe("cordon reference-agent arguments", () => {
  it("parses every option, in both --flag value and --flag=value forms", () => {
    expect(parseReferenceAgentArgs([])).toStrictEqual({ verbose: false, help: false });
    expect(parseReferenceAgentArgs(["--store", "/s", "--page-size=2", "--mcp", "acp,http", "-v"])).toStrictEqual({
      verbose: true,
      help: false,
      store: "/s",
      pageSize: 2,
      mcp: { acp: true, http: true },
    });
    expect(parseReferenceAgentArgs(["-h"]).help).toBe(true);
    expect(parseReferenceAgentArgs(["--store", "/a", "--store", "/b"]).store).toBe("/b");
  });

  it("refuses what it does not know and values out of range", () => {
    expect(() => parseReferenceAgentArgs(["--nope"])).toThrow("unknown argument --nope");
    expect(() => parseReferenceAgentArgs(["-x"])).toThrow("unknown argument -x");
    expect(() => parseReferenceAgentArgs(["extra"])).toThrow("unknown argument extra");
    expect(() => parseReferenceAgentArgs(["--", "x"])).toThrow("unknown argument --");
    expect(() => parseReferenceAgentArgs(["--store"])).toThrow("--store needs a folder");
    expect(() => parseReferenceAgentArgs(["--mcp"])).toThrow("--mcp needs a list of transports, e.g. acp,http");
    expect(() => parseReferenceAgentArgs(["--store="])).toThrow("--store needs a folder");
    for (const n of ["0", "1001", "x", "1.5"])
      expect(() => parseReferenceAgentArgs(["--page-size", n])).toThrow("--page-size needs a whole number from 1 to 1000");
    expect(() => parseReferenceAgentArgs(["--mcp", "sse"])).toThrow(/unknown transport "sse"/);
  });
});
