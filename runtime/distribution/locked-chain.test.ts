/**
 * A chain config's package entries as `cordon run` / `cordon check` read them: the locked
 * component from the store, or a refusal saying what to run.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, readChainConfig } from "../cli/chain-config.js";
import { sha256Hex } from "./digests.js";
import { type LockEntry, serializeLockfile } from "./lockfile.js";

const wasm = Buffer.from("stand-in bytes: only their hash matters here");
const sha256 = sha256Hex(wasm);
const locked = (over: Partial<LockEntry> = {}): LockEntry => ({
  spec: "@t/echo@^1",
  package: "@t/echo",
  version: "1.1.0",
  resolved: "@t/echo/-/echo-1.1.0.tgz",
  integrity: "sha512-AAAA",
  wasm: { path: "echo.wasm", sha256, size: wasm.length },
  requested: { grants: ["terminal"], wasi: [] },
  registrySignature: { status: "not-offered" },
  ...over,
});

let dir: string;
let store: string;
const savedStore = process.env.CORDON_STORE;
afterAll(() => {
  if (savedStore === undefined) delete process.env.CORDON_STORE;
  else process.env.CORDON_STORE = savedStore;
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cordon-locked-"));
  store = join(dir, "store");
  process.env.CORDON_STORE = store;
});

function chain(grants: string[], lock?: Record<string, LockEntry>, spec = "@t/echo@^1"): string {
  const path = join(dir, "chain.json");
  writeFileSync(path, JSON.stringify({ proxies: [{ name: "echo", package: spec, grants, config: { a: 1 }, onFailure: "restart" }] }));
  if (lock) writeFileSync(join(dir, "chain.lock.json"), serializeLockfile({ lockfileVersion: 1, proxies: lock }));
  return path;
}

const stored = () => {
  mkdirSync(join(store, "sha256"), { recursive: true });
  writeFileSync(join(store, "sha256", `${sha256}.wasm`), wasm);
};

describe("package entries at run time", () => {
  it("run the locked component from the store, pinned by the lock's sha256, with the entry's grants and settings", async () => {
    stored();
    const config = await readChainConfig(chain(["terminal"], { echo: locked() }));
    expect(config.proxies).toEqual([
      {
        name: "echo",
        wasm: join(store, "sha256", `${sha256}.wasm`),
        sha256,
        grants: ["terminal"],
        config: { a: 1 },
        onFailure: "restart",
        locked: { spec: "@t/echo@^1", package: "@t/echo", version: "1.1.0" },
      },
    ]);
  });

  it("refuse an entry the lock does not have, saying to run cordon install", async () => {
    await expect(readChainConfig(chain([]))).rejects.toThrow(
      new ConfigError('chain.json: proxies[0] "echo" (@t/echo@^1) is not installed (no entry in chain.lock.json): run `cordon install`'),
    );
  });

  it("refuse a spec the lock was not made for: a range is never resolved at run time", async () => {
    stored();
    await expect(readChainConfig(chain(["terminal"], { echo: locked() }, "@t/echo@^2"))).rejects.toThrow(
      "chain.lock.json has it as @t/echo@^1: run `cordon install` (or `cordon update echo`)",
    );
  });

  it("refuse a locked version that requests more than the entry grants (a hand-edited lock)", async () => {
    stored();
    await expect(readChainConfig(chain([], { echo: locked() }))).rejects.toThrow(
      "the locked @t/echo@1.1.0 requests terminal, which the config does not grant: refused (approve with `cordon update echo --grant terminal`)",
    );
  });

  it("refuse a component missing from the store", async () => {
    await expect(readChainConfig(chain(["terminal"], { echo: locked() }))).rejects.toThrow(
      /@t\/echo@1\.1\.0 is not in the local store \(.*\): run `cordon install`/,
    );
  });

  it("need a config file: an inline config cannot hold a lock", async () => {
    const { parseChainConfig } = await import("../cli/chain-config.js");
    expect(() => parseChainConfig(JSON.stringify({ proxies: [{ name: "x", package: "x@1" }] }), "inline")).toThrow(
      'inline: proxies[0]: a "package" entry needs a chain config file (its lock lives beside it)',
    );
  });
});
