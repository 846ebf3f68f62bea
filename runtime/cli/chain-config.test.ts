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
    expect(() => parseChainConfig("{", "c.json")).toThrow(/c\.json: not valid JSON/);
  });

  it("resolves proxy paths against the config file's folder", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-config-"));
    writeFileSync(join(dir, "chain.json"), JSON.stringify({ proxies: [{ wasm: "p/x.wasm" }, { wasm: "/abs/y.wasm" }] }));
    const config = await readChainConfig(join(dir, "chain.json"));
    expect(config.proxies.map((p) => ("wasm" in p ? p.wasm : p.command))).toEqual([join(dir, "p/x.wasm"), "/abs/y.wasm"]);
    await expect(readChainConfig(join(dir, "missing.json"))).rejects.toThrow(/cannot read chain config .*missing\.json: ENOENT/);
  });
});
