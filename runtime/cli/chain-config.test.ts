import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseChainConfig, readChainConfig } from "./chain-config.js";

describe("chain config", () => {
  it("accepts proxies with per-proxy config and an agent with env, with defaults filled in", () => {
    const config = parseChainConfig(
      JSON.stringify({ proxies: [{ wasm: "a.wasm", config: { text: "x" } }], agent: { command: "node", env: { KEY: "v" } } }),
      "chain.json",
    );
    expect(config).toEqual({
      proxies: [{ wasm: "a.wasm", config: { text: "x" }, grants: [] }],
      agent: { command: "node", args: [], env: { KEY: "v" } },
    });
  });

  it("names the file and the offending field", () => {
    const bad = JSON.stringify({ proxies: [{ wasm: "a.wasm" }, { wasm: 3 }], agent: { command: "node", args: "nope" } });
    expect(() => parseChainConfig(bad, "chain.json")).toThrow(ConfigError);
    try {
      parseChainConfig(bad, "chain.json");
    } catch (error) {
      const text = (error as Error).message;
      expect(text).toMatch(/^chain\.json: invalid chain config/);
      expect(text).toMatch(/proxies\[1\]\.wasm: .*expected string/);
      expect(text).toMatch(/agent\.args: .*expected array/);
    }
  });

  it("grants only the harmless WASI and the client-side grants; never filesystem, sockets or environment", () => {
    const ok = parseChainConfig(
      JSON.stringify({ proxies: [{ wasm: "a.wasm", grants: ["wasi:clocks", "wasi:random", "fs:read"] }] }),
      "c.json",
    );
    expect(ok.proxies[0]).toMatchObject({ grants: ["wasi:clocks", "wasi:random", "fs:read"] });
    for (const bad of ["wasi:filesystem", "wasi:sockets", "wasi:cli", "env"]) {
      expect(() => parseChainConfig(JSON.stringify({ proxies: [{ wasm: "a.wasm", grants: [bad] }] }), "c.json")).toThrow(
        /proxies\[0\]\.grants\[0\]/,
      );
    }
  });

  it("rejects unknown fields (a typo must not be silently ignored) and bad JSON", () => {
    expect(() => parseChainConfig(JSON.stringify({ proxys: [] }), "c.json")).toThrow(/Unrecognized key.*proxys/);
    expect(() => parseChainConfig(JSON.stringify({ proxies: [{ wasm: "a.wasm", confg: {} }] }), "c.json")).toThrow(/proxies\[0\]/);
    expect(() => parseChainConfig("{", "c.json")).toThrow(/^c\.json:1:2: not valid JSON: Expected property name/);
  });

  it("suggests the nearest valid key for a typo, at every level", () => {
    const issues = (config: unknown) => {
      try {
        parseChainConfig(JSON.stringify(config, null, 2), "c.json");
      } catch (error) {
        return (error as Error).message
          .split("\n")
          .slice(1)
          .map((l) => l.trim());
      }
      throw new Error("it validated");
    };
    expect(issues({ proxys: [] })).toEqual(['(top level): Unrecognized key: "proxys" (did you mean "proxies"?)']);
    expect(issues({ proxies: [{ wams: "a.wasm" }] })).toContain('proxies[0]: Unrecognized key: "wams" (did you mean "wasm"?)');
    expect(issues({ proxies: [{ wasm: "a.wasm", limits: { receiveTimeout: 5, colour: 1 } }] })).toEqual([
      'proxies[0].limits: Unrecognized keys: "receiveTimeout" (did you mean "receiveTimeoutMs"?), "colour"',
    ]);
    expect(issues({ agent: { command: "a", argz: [] } })).toEqual(['agent: Unrecognized key: "argz" (did you mean "args"?)']);
    expect(issues({ proxies: [{ command: "p", trusted: true, dialekt: "rust" }] })).toEqual([
      'proxies[0]: Unrecognized key: "dialekt" (did you mean "dialect"?)',
    ]);
  });

  it("reports a JSON syntax error by line and column", () => {
    const text = '{\n  "proxies": [\n    { "wasm": "a.wasm", }\n  ]\n}\n';
    expect(() => parseChainConfig(text, "chain.json")).toThrow(/^chain\.json:3:25: not valid JSON: Expected double-quoted property name$/);
  });

  it("resolves proxy paths against the config file's folder", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-config-"));
    writeFileSync(join(dir, "chain.json"), JSON.stringify({ proxies: [{ wasm: "p/x.wasm" }, { wasm: "/abs/y.wasm" }] }));
    const config = await readChainConfig(join(dir, "chain.json"));
    expect(config.proxies.map((p) => ("wasm" in p ? p.wasm : p.command))).toEqual([join(dir, "p/x.wasm"), "/abs/y.wasm"]);
    await expect(readChainConfig(join(dir, "missing.json"))).rejects.toThrow(/cannot read chain config .*missing\.json: ENOENT/);
  });
});
