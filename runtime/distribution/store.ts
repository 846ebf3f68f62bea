/**
 * The content-addressed store of installed components: `<store>/sha256/<hex>.wasm`, where the
 * store is `$CORDON_STORE`, else `$XDG_CACHE_HOME/cordon/store` (`~/.cache/cordon/store`). A
 * file's name is its hash, so two chains needing the same bytes share one file, and a file is
 * never trusted for its name: reads re-hash it, and a load re-checks the lock's sha256 pin.
 * Writes are atomic (temp file + rename), so a store file is whole or absent.
 */
import { mkdir, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic-write.js";
import { sha256Hex } from "./digests.js";

function storeDir(): string {
  if (process.env.CORDON_STORE) return process.env.CORDON_STORE;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "cordon", "store");
}

export const storedWasmPath = (sha256: string) => join(storeDir(), "sha256", `${sha256}.wasm`);

/** Puts a component into the store (no-op when the same bytes are there); returns its path. */
export async function storeWasm(bytes: Uint8Array): Promise<string> {
  const sha256 = sha256Hex(bytes);
  const path = storedWasmPath(sha256);
  if ((await readStoredWasm(sha256)) !== null) return path;
  await mkdir(join(storeDir(), "sha256"), { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, bytes);
  return path;
}

/** The stored bytes for a hash, or null when absent or damaged (their hash differs). */
export async function readStoredWasm(sha256: string): Promise<Uint8Array | null> {
  try {
    const bytes = await readFile(storedWasmPath(sha256));
    return sha256Hex(bytes) === sha256 ? bytes : null;
  } catch {
    return null;
  }
}
