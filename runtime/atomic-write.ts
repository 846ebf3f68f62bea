/**
 * Whole-file replacement: the data goes to a temporary file in the same folder, then `rename`
 * swaps it in, so a reader (or a crash) sees the old file or the new one, never half of one.
 */
import { randomBytes } from "node:crypto";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** A name beside `path` that no other writer (another process, another call) picks. */
const tempBeside = (path: string) => join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);

export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  const tmp = tempBeside(path);
  try {
    await writeFile(tmp, data, { mode, flag: "wx" });
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/** The same, synchronously: for a caller on a path that cannot wait (a sandbox being set up). */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, mode = 0o644): void {
  const tmp = tempBeside(path);
  try {
    writeFileSync(tmp, data, { mode, flag: "wx" });
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}
