/**
 * The fuel pass's output kept on disk, beside the component cache (`component-loader.ts`), so a
 * start with a warm cache does not meter the guest again. Metering is the largest single step of a
 * thread sandbox's start: 25–55 ms of CPU for a 108 KB AssemblyScript guest when the pass's code is
 * still cold (it runs once per process, so always cold); a hit costs a read and one SHA-256 (< 1 ms).
 *
 * An entry is `metered-<key>.wasm`, where the key is the SHA-256 of what determines the output: the
 * entry format, the pass's own code (`passFingerprint`: the source of the fuel files, so any change
 * to the pass makes every entry stale), the start fuel and the SHA-256 of the capped input module.
 * The file is the SHA-256 of the metered bytes followed by those bytes: a damaged or altered file
 * (a digest that does not match) is ignored and rewritten, as is one that cannot be read.
 *
 * Trust: unlike the component entries (which name code inside the component's own hashed bytes),
 * this entry is code: it is as trusted as the directory, which the loader only uses when it is
 * yours and `0700` (`usableCacheDir`). Files are written `0600` through a rename, so a reader never
 * sees half a file. As the README says of the cache: protected against other users, not against
 * your own account. The compiled module is not cached: Node 20 has no API to serialise one.
 */
import { createHash } from "node:crypto";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { instrumentFuel } from "./fuel.js";

/** Version of the entry layout; part of the key. */
const FORMAT = 1;
const DIGEST_BYTES = 32;

/** The modules whose code decides the fuel pass's output (beside this file, as built or as source). */
const PASS_FILES = ["fuel", "fuel-decode", "fuel-weigh", "wasm-binary"];

let fingerprint: string | null | undefined;

/** SHA-256 of the fuel pass's code; null when it cannot be read (then nothing is cached). */
export function passFingerprint(): string | null {
  if (fingerprint === undefined) {
    try {
      const ext = extname(fileURLToPath(import.meta.url));
      const hash = createHash("sha256");
      for (const name of PASS_FILES) hash.update(readFileSync(new URL(`./${name}${ext}`, import.meta.url)));
      fingerprint = hash.digest("hex");
    } catch {
      fingerprint = null;
    }
  }
  return fingerprint;
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest();

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
  if (cacheDir === null || pass === null) return { bytes: instrumentFuel(capped, { startFuel }).bytes, cached: false };
  const key = createHash("sha256").update(`${FORMAT}\n${pass}\n${startFuel}\n`).update(sha(capped)).digest("hex");
  const file = join(cacheDir, `metered-${key}.wasm`);
  const hit = read(file);
  if (hit) return { bytes: hit, cached: true };
  const { bytes } = instrumentFuel(capped, { startFuel });
  write(file, bytes);
  return { bytes, cached: false };
}

/** The entry's module, or null when it is missing, unreadable or does not match its digest. */
function read(file: string): Uint8Array | null {
  try {
    const data = readFileSync(file);
    if (data.length <= DIGEST_BYTES) return null;
    const bytes = new Uint8Array(data.buffer, data.byteOffset + DIGEST_BYTES, data.length - DIGEST_BYTES);
    return sha(bytes).equals(data.subarray(0, DIGEST_BYTES)) ? bytes : null;
  } catch {
    return null;
  }
}

function write(file: string, bytes: Uint8Array): void {
  const tmp = `${file}.${process.pid}.${Date.now()}`;
  try {
    writeFileSync(tmp, Buffer.concat([sha(bytes), bytes]), { mode: 0o600, flag: "wx" });
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true }); // an unwritable cache only costs speed
  }
}
