import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type LockEntry, type Lockfile, LockfileError, lockPathFor, readLockfile, serializeLockfile, writeLockfile } from "./lockfile.js";

const entry = (version: string): LockEntry => ({
  spec: "@t/echo@^1",
  package: "@t/echo",
  version,
  resolved: `@t/echo/-/echo-${version}.tgz`,
  integrity: "sha512-AAAA",
  publishedAt: "2026-11-30T10:00:00.000Z",
  wasm: { path: "echo.wasm", sha256: "a".repeat(64), size: 10 },
  requested: { grants: ["terminal", "fs:read"], wasi: ["wasi:random", "wasi:clocks"] },
  registrySignature: { status: "not-offered" },
});

describe("the lockfile", () => {
  it("is paired with its config by name", () => {
    expect(lockPathFor("/p/chain.json")).toBe("/p/chain.lock.json");
    expect(lockPathFor("/p/dev.chain.json")).toBe("/p/dev.chain.lock.json");
    expect(lockPathFor("/p/chain")).toBe("/p/chain.lock.json");
  });

  it("serializes deterministically: the same lock built in any order gives the same bytes", () => {
    const one: Lockfile = { lockfileVersion: 1, proxies: { b: entry("1.0.0"), a: entry("1.1.0") } };
    const reordered = Object.fromEntries(Object.entries(entry("1.0.0")).reverse()) as LockEntry;
    const two: Lockfile = {
      proxies: {
        a: { ...entry("1.1.0"), requested: { grants: ["fs:read", "terminal"], wasi: ["wasi:clocks", "wasi:random"] } },
        b: reordered,
      },
      lockfileVersion: 1,
    };
    const text = serializeLockfile(one);
    expect(serializeLockfile(two)).toBe(text);
    expect(text.endsWith("}\n")).toBe(true);
    expect(text.indexOf('"a"')).toBeLessThan(text.indexOf('"b"'));
    expect(text).toContain('"grants": [\n          "fs:read",\n          "terminal"\n        ]');
  });

  it("round-trips through its file, byte for byte", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-lock-"));
    const path = join(dir, "chain.lock.json");
    const lock: Lockfile = { lockfileVersion: 1, proxies: { echo: entry("1.0.0") } };
    await writeLockfile(path, lock);
    const text = readFileSync(path, "utf8");
    await writeLockfile(path, await readLockfile(path));
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(await readLockfile(join(dir, "absent.lock.json"))).toEqual({ lockfileVersion: 1, proxies: {} });
  });

  it("refuses a damaged lock, naming the file and the field", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-lock-"));
    const path = join(dir, "chain.lock.json");
    writeFileSync(path, JSON.stringify({ lockfileVersion: 1, proxies: { echo: { ...entry("1.0.0"), integrity: "sha1-abc" } } }));
    await expect(readLockfile(path)).rejects.toThrow(
      new LockfileError(`${path}: invalid lockfile: proxies.echo.integrity: expected a sha512 SRI (sha512-…)`),
    );
    writeFileSync(path, JSON.stringify({ lockfileVersion: 2, proxies: {} }));
    await expect(readLockfile(path)).rejects.toThrow(/invalid lockfile: lockfileVersion/);
  });
});
