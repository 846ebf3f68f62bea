/**
 * The fuel-metered module of a component, kept in the component cache directory so a later start
 * in `thread` isolation (a restart in a new process, a new editor session) skips the rewrite.
 *
 * Unlike the compile cache's entries, a metered module is code: what it holds is what runs in
 * Cordon's thread. So an entry is trusted only if it carries a valid HMAC-SHA256, keyed by a
 * random secret made once per cache directory (`metered.key`, 0600), over what it was made from
 * (the component's SHA-256, the caps and start fuel, this pass's format) and its bytes. A file
 * changed, swapped for another component's entry, or written by a tool without the key fails the
 * check and is rebuilt by metering the component's own bytes again. The cache directory is only
 * given here once the loader found it safe (ours, 0700, `component-loader.ts`); like the compile
 * cache, this protects against other users and damage, not against your own account (which can
 * read the key).
 *
 * Cost: a hit reads the file and hashes it once (≈ 2 ms per MiB); a miss writes it (temp file +
 * rename). Synchronous, since the sandbox meters in its constructor; failures only cost speed.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Bump when the pass's output for the same input changes (the fuel weights, the rewrite). */
const METERED_FORMAT = 1;
const TAG_BYTES = 32;

export interface MeteredKey {
  sha256: string;
  maxMemoryPages: number;
  maxTableElements: number;
  startFuel: bigint;
}

const keyFiles = new Map<string, Buffer | null>();

/** The directory's secret: read, or made once (exclusively, 0600); null if it cannot be had. */
function secret(cacheDir: string): Buffer | null {
  if (keyFiles.has(cacheDir)) return keyFiles.get(cacheDir)!;
  const file = join(cacheDir, "metered.key");
  let key: Buffer | null = null;
  try {
    key = readFileSync(file);
  } catch {
    try {
      writeFileSync(file, randomBytes(32), { mode: 0o600, flag: "wx" });
      key = readFileSync(file); // whoever won the race to create it
    } catch {
      key = null;
    }
  }
  if (key !== null && key.length !== 32) key = null;
  keyFiles.set(cacheDir, key);
  return key;
}

const entryName = (key: MeteredKey) =>
  `${key.sha256}.metered-${METERED_FORMAT}-${key.maxMemoryPages}-${key.maxTableElements}-${key.startFuel}.wasm`;

function tag(secretKey: Buffer, key: MeteredKey, bytes: Uint8Array): Buffer {
  return createHmac("sha256", secretKey)
    .update(`cordon metered module ${METERED_FORMAT}\n${entryName(key)}\n`)
    .update(bytes)
    .digest();
}

/** The metered module cached for `key`, if its tag is valid; null otherwise. */
export function readMetered(cacheDir: string, key: MeteredKey): Uint8Array | null {
  const secretKey = secret(cacheDir);
  if (!secretKey) return null;
  let file: Buffer;
  try {
    file = readFileSync(join(cacheDir, entryName(key)));
  } catch {
    return null;
  }
  if (file.length <= TAG_BYTES) return null;
  const bytes = file.subarray(TAG_BYTES);
  return timingSafeEqual(file.subarray(0, TAG_BYTES), tag(secretKey, key, bytes)) ? bytes : null;
}

/** Keeps `bytes` as the metered module for `key` (best effort). */
export function writeMetered(cacheDir: string, key: MeteredKey, bytes: Uint8Array): void {
  const secretKey = secret(cacheDir);
  if (!secretKey) return;
  const file = join(cacheDir, entryName(key));
  const tmp = `${file}.${process.pid}.${Date.now()}`;
  try {
    writeFileSync(tmp, Buffer.concat([tag(secretKey, key, bytes), bytes]), { mode: 0o600, flag: "wx" });
    renameSync(tmp, file);
  } catch {
    // An unwritable cache only costs speed.
  }
}
