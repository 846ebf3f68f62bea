/**
 * The fuel pass's output kept on disk, beside the component cache (`component-loader.ts`), so a
 * start with a warm cache does not meter the guest again. Metering is the largest single step of a
 * thread sandbox's start: 25–55 ms of CPU for a 108 KB AssemblyScript guest when the pass's code is
 * still cold (it runs once per process, so always cold); a hit costs a read and one HMAC-SHA256 (< 1 ms).
 *
 * An entry is `metered-<key>.wasm`, where the key is the SHA-256 of what determines the output: the
 * entry format, the pass's own code (`passFingerprint`: the source of the fuel files, so any change
 * to the pass makes every entry stale), the start fuel and the SHA-256 of the capped input module.
 * The file is a tag followed by the metered bytes: an HMAC-SHA256 of the key and the bytes under a
 * random secret made once per cache directory (`metered.key`, 0600). A damaged or altered file, one
 * moved under another key, or one written by anything without the secret (a tool that recomputes a
 * plain digest) does not match and is ignored and rewritten, as is one that cannot be read.
 *
 * Trust: unlike the component entries (which name code inside the component's own hashed bytes),
 * this entry is code, so the tag is what lets it run; the loader only gives a directory that is
 * yours and `0700` (`usableCacheDir`). Files are written `0600` through a rename, so a reader never
 * sees half a file. As the README says of the cache: protected against other users and damage, not
 * against your own account (which can read the secret). The compiled module is not cached: Node 20
 * has no API to serialise one.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileAtomicSync } from "../atomic-write.js";
import { packagePath } from "../package-root.js";
import { instrumentFuel } from "./fuel.js";

/** Version of the entry layout; part of the key (2: the tag is an HMAC, not a plain digest). */
const FORMAT = 2;
const TAG_BYTES = 32;

/**
 * The modules whose code decides the fuel pass's output: beside this file (as built, or as source
 * under the tests), or, from the start bundle (`dist/bundle/`), the built ones in `dist/runtime/`.
 */
const PASS_FILES = ["fuel", "fuel-decode", "fuel-weigh", "wasm-binary"];

function passFile(name: string): string {
  const here = fileURLToPath(import.meta.url);
  const beside = join(dirname(here), `${name}${extname(here)}`);
  return existsSync(beside) ? beside : packagePath("dist", "runtime", "sandbox", `${name}.js`);
}

let fingerprint: string | null | undefined;

/** SHA-256 of the fuel pass's code; null when it cannot be read (then nothing is cached). */
export function passFingerprint(): string | null {
  if (fingerprint === undefined) {
    try {
      const hash = createHash("sha256");
      for (const name of PASS_FILES) hash.update(readFileSync(passFile(name)));
      fingerprint = hash.digest("hex");
    } catch {
      fingerprint = null;
    }
  }
  return fingerprint;
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest();

const secrets = new Map<string, Buffer | null>();

/** The directory's secret: read, or made once (exclusively, 0600); null (no caching) if it cannot be had. */
function secret(cacheDir: string): Buffer | null {
  if (secrets.has(cacheDir)) return secrets.get(cacheDir)!;
  const file = join(cacheDir, "metered.key");
  let key: Buffer | null;
  try {
    key = readFileSync(file);
  } catch {
    try {
      writeFileSync(file, randomBytes(32), { mode: 0o600, flag: "wx" });
      key = readFileSync(file); // whoever won the race to make it
    } catch {
      key = null;
    }
  }
  if (key !== null && key.length !== 32) key = null;
  secrets.set(cacheDir, key);
  return key;
}

const tagOf = (secretKey: Buffer, key: string, bytes: Uint8Array) =>
  createHmac("sha256", secretKey).update(`cordon metered module\n${key}\n`).update(bytes).digest();

/** The metered module for `capped`, and whether it came from the cache. */
export interface Metered {
  bytes: Uint8Array;
  cached: boolean;
}

/**
 * `instrumentFuel(capped, { startFuel }).bytes`, from `cacheDir` when a valid entry is there (and
 * written there when not). `cacheDir` null: no cache. Throws what `instrumentFuel` throws
 * (`FuelUnsupported`); nothing is cached then. `pass` is for tests (a changed pass).
 */
export function meterCached(capped: Uint8Array, startFuel: bigint, cacheDir: string | null, pass = passFingerprint()): Metered {
  const secretKey = cacheDir === null || pass === null ? null : secret(cacheDir);
  if (cacheDir === null || pass === null || secretKey === null)
    return { bytes: instrumentFuel(capped, { startFuel }).bytes, cached: false };
  const key = createHash("sha256").update(`${FORMAT}\n${pass}\n${startFuel}\n`).update(sha(capped)).digest("hex");
  const file = join(cacheDir, `metered-${key}.wasm`);
  const hit = read(file, (bytes) => tagOf(secretKey, key, bytes));
  if (hit) return { bytes: hit, cached: true };
  const { bytes } = instrumentFuel(capped, { startFuel });
  write(file, tagOf(secretKey, key, bytes), bytes);
  return { bytes, cached: false };
}

/** The entry's module, or null when it is missing, unreadable or does not match its tag. */
function read(file: string, tag: (bytes: Uint8Array) => Buffer): Uint8Array | null {
  try {
    const data = readFileSync(file);
    if (data.length <= TAG_BYTES) return null;
    const bytes = new Uint8Array(data.buffer, data.byteOffset + TAG_BYTES, data.length - TAG_BYTES);
    return timingSafeEqual(tag(bytes), data.subarray(0, TAG_BYTES)) ? bytes : null;
  } catch {
    return null;
  }
}

function write(file: string, tag: Buffer, bytes: Uint8Array): void {
  try {
    writeFileAtomicSync(file, Buffer.concat([tag, bytes]), 0o600);
  } catch {
    // an unwritable cache only costs speed
  }
}
