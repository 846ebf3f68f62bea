/**
 * Resolution and verification against a small in-test registry (node:http): version choice,
 * registry signatures with a per-test ECDSA P-256 key, the lock winning on integrity, and the
 * origin and transport rules. The real-registry path is test/registry.test.ts.
 */
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withCustomSection } from "../../test/fixtures/custom-section.js";
import { echoComponent } from "../../test/fixtures/wat-components.js";
import { MANIFEST_SECTION } from "../sandbox/manifest.js";
import { sha512Integrity } from "./digests.js";
import { PackageRefused } from "./errors.js";
import type { Packument } from "./registry-client.js";
import { fetchLocked, pickVersion, resolveSpec } from "./resolve.js";
import { parseSpec } from "./spec.js";
import { writeTarball } from "./tar-write.js";

process.env.CORDON_CACHE_DIR = mkdtempSync(join(tmpdir(), "cordon-resolve-test-"));

/** What the fake registry serves; tests change it. */
const served: { doc: Packument | null; tarballs: Map<string, Uint8Array>; keys: object | null } = {
  doc: null,
  tarballs: new Map(),
  keys: null,
};
let server: Server;
let url: string;
let key: { privateKey: KeyObject; publicKey: KeyObject };
let echo: Uint8Array;

beforeAll(async () => {
  echo = await echoComponent("utf8");
  key = generateKeyPairSync("ec", { namedCurve: "P-256" });
  server = createServer((req, res) => {
    const path = decodeURIComponent(req.url ?? "").replace(/^\/npm\//, "/"); // also served under a path, as many registries are
    const tarball = served.tarballs.get(path);
    if (path === "/@t/echo" && served.doc) res.end(JSON.stringify(served.doc));
    else if (path === "/-/npm/v1/keys" && served.keys) res.end(JSON.stringify(served.keys));
    else if (tarball) res.end(tarball);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const tgzOf = (version: string) =>
  writeTarball([
    { name: "package/package.json", data: Buffer.from(JSON.stringify({ name: "@t/echo", version, cordon: { proxy: "echo.wasm" } })) },
    { name: "package/echo.wasm", data: withCustomSection(echo, MANIFEST_SECTION, JSON.stringify({ version })) },
  ]);

const signature = (text: string) => sign("sha256", Buffer.from(text), key.privateKey).toString("base64");
const KEYID = "SHA256:test-key";
const offerKeys = () =>
  (served.keys = {
    keys: [
      {
        keyid: KEYID,
        keytype: "ecdsa-sha2-nistp256",
        scheme: "ecdsa-sha2-nistp256",
        key: key.publicKey.export({ type: "spki", format: "der" }).toString("base64"),
      },
    ],
  });

/** Publishes these versions (tags: latest = the last one unless given). */
function publish(
  versions: string[],
  { latest = versions.at(-1), sign: signed = (v: string, integrity: string) => signature(`@t/echo@${v}:${integrity}`) } = {},
) {
  served.tarballs.clear();
  const doc: Packument = { name: "@t/echo", "dist-tags": latest ? { latest } : {}, versions: {}, time: {} };
  for (const v of versions) {
    const tgz = tgzOf(v);
    const path = `/@t/echo/-/echo-${v}.tgz`;
    served.tarballs.set(path, tgz);
    const integrity = sha512Integrity(tgz);
    doc.versions[v] = {
      name: "@t/echo",
      version: v,
      dist: { tarball: `${url}${path.slice(1)}`, integrity, signatures: [{ keyid: KEYID, sig: signed(v, integrity) }] },
    };
    doc.time![v] = "2026-11-30T10:00:00.000Z";
  }
  served.doc = doc;
  return doc;
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("accepted");
    },
    (e: unknown) => {
      expect(e).toBeInstanceOf(PackageRefused);
      return e as PackageRefused;
    },
  );

describe("pickVersion", () => {
  const doc = (latest: string): Packument => ({
    name: "x",
    "dist-tags": { latest, next: "2.0.0-rc.1" },
    versions: Object.fromEntries(["1.0.0", "1.2.0", "1.3.0", "2.0.0-rc.1"].map((v) => [v, { name: "x", version: v }])),
  });
  it("takes latest when it satisfies the range, else the highest match, never a prerelease unasked", () => {
    expect(pickVersion(doc("1.2.0"), parseSpec("x@^1"))).toBe("1.2.0");
    expect(pickVersion(doc("1.0.0"), parseSpec("x@^1.2"))).toBe("1.3.0");
    expect(pickVersion(doc("1.3.0"), parseSpec("x@>=1"))).toBe("1.3.0");
    expect(pickVersion(doc("1.3.0"), parseSpec("x@next"))).toBe("2.0.0-rc.1");
    expect(pickVersion(doc("1.3.0"), parseSpec("x@1.0.0"))).toBe("1.0.0");
    expect(() => pickVersion(doc("1.3.0"), parseSpec("x@^3"))).toThrow(
      'no version of x matches "^3" (versions: 1.0.0, 1.2.0, 1.3.0, 2.0.0-rc.1)',
    );
  });
});

describe("registry signatures", () => {
  it("are verified when the registry offers keys", async () => {
    offerKeys();
    publish(["1.0.0"]);
    const { entry } = await resolveSpec(parseSpec("@t/echo@^1"), { url });
    expect(entry.registrySignature).toEqual({ status: "verified", keyid: KEYID });
    expect(entry.resolved).toBe("@t/echo/-/echo-1.0.0.tgz");
  });

  it("are recorded as not offered when the registry has no keys", async () => {
    served.keys = null;
    publish(["1.0.0"]);
    expect((await resolveSpec(parseSpec("@t/echo@^1"), { url })).entry.registrySignature).toEqual({ status: "not-offered" });
  });

  it("refuse a version without a signature while the registry offers keys", async () => {
    offerKeys();
    const doc = publish(["1.0.0"]);
    delete doc.versions["1.0.0"].dist!.signatures;
    const error = await refusal(resolveSpec(parseSpec("@t/echo@^1"), { url }));
    expect(error.code).toBe("ESIGNATURE");
    expect(error.message).toBe("@t/echo@1.0.0 has no registry signature, but the registry signs packages (it offers keys): refused");
  });

  it("refuse a signature made for another version", async () => {
    offerKeys();
    publish(["1.0.0", "1.1.0"], { sign: (_v, integrity) => signature(`@t/echo@1.0.0:${integrity}`) });
    const error = await refusal(resolveSpec(parseSpec("@t/echo@1.1.0"), { url }));
    expect(error.message).toMatch(
      /^@t\/echo@1\.1\.0: the registry signature by key SHA256:test-key does not verify over "@t\/echo@1\.1\.0:sha512-/,
    );
  });
});

describe("integrity, origin and transport", () => {
  it("the lock wins: a tarball the registry vouches for but the lock does not is refused, naming both digests", async () => {
    served.keys = null;
    publish(["1.0.0"]);
    const { entry } = await resolveSpec(parseSpec("@t/echo@1.0.0"), { url });
    const republished = writeTarball([
      { name: "package/README.md", data: Buffer.from("new") },
      { name: "package/echo.wasm", data: withCustomSection(echo, MANIFEST_SECTION, JSON.stringify({ version: "1.0.0" })) },
      {
        name: "package/package.json",
        data: Buffer.from(JSON.stringify({ name: "@t/echo", version: "1.0.0", cordon: { proxy: "echo.wasm" } })),
      },
    ]);
    expect(sha512Integrity(republished)).not.toBe(entry.integrity);
    served.tarballs.set("/@t/echo/-/echo-1.0.0.tgz", republished);
    served.doc!.versions["1.0.0"].dist!.integrity = sha512Integrity(republished); // the registry agrees with the new bytes
    const error = await refusal(fetchLocked(entry, { url }));
    expect(error.code).toBe("EINTEGRITY");
    expect(error.message).toBe(
      `@t/echo@1.0.0: EINTEGRITY: the tarball's sha512 is ${sha512Integrity(republished)}, the lock says ${entry.integrity} (refused; nothing written)`,
    );
  });

  it("fetches a locked tarball by its path on whatever registry is configured now (a mirror)", async () => {
    served.keys = null;
    publish(["1.0.0"]);
    const { entry } = await resolveSpec(parseSpec("@t/echo@1.0.0"), { url });
    const mirrored = await fetchLocked(entry, { url: `${url}npm/` }); // the same packages under another base
    expect(mirrored.entry).toEqual(entry);
  });

  it("refuses bytes that differ from the registry's integrity", async () => {
    publish(["1.0.0"]);
    served.doc!.versions["1.0.0"].dist!.integrity = sha512Integrity(Buffer.from("something else"));
    expect((await refusal(resolveSpec(parseSpec("@t/echo@1.0.0"), { url }))).message).toMatch(/the registry says sha512-/);
  });

  it("refuses a tarball hosted off the registry", async () => {
    const doc = publish(["1.0.0"]);
    doc.versions["1.0.0"].dist!.tarball = "https://elsewhere.example/echo-1.0.0.tgz";
    const error = await refusal(resolveSpec(parseSpec("@t/echo@1.0.0"), { url }));
    expect(error.message).toBe(
      `@t/echo@1.0.0: its tarball https://elsewhere.example/echo-1.0.0.tgz is not on the registry ${url} (refused)`,
    );
  });

  it("refuses plain HTTP except to a loopback address", async () => {
    const error = await refusal(resolveSpec(parseSpec("@t/echo@1.0.0"), { url: "http://registry.example/" }));
    expect(error.code).toBe("ETRANSPORT");
  });

  it.each(["../../elsewhere/x.tgz", "%2e%2e/x.tgz", "a/%2E%2E/%2e%2e/x.tgz", "/x.tgz", "\\\\evil/x.tgz", "https://evil.example/x.tgz"])(
    "refuses a lock whose path leaves the registry: %s",
    async (resolved) => {
      publish(["1.0.0"]);
      const { entry } = await resolveSpec(parseSpec("@t/echo@1.0.0"), { url });
      const error = await refusal(fetchLocked({ ...entry, resolved }, { url }));
      expect(error.message).toContain(`the lock's "resolved" ${JSON.stringify(resolved)} is not a path under the registry`);
    },
  );

  it("refuses a registry tarball URL that only looks like it is on the registry", async () => {
    const doc = publish(["1.0.0"]);
    doc.versions["1.0.0"].dist!.tarball = `${url}npm/@t/../../x/echo-1.0.0.tgz`;
    const error = await refusal(resolveSpec(parseSpec("@t/echo@1.0.0"), { url: `${url}npm/` }));
    expect(error.message).toContain("is not on the registry");
  });
});
