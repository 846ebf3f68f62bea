/**
 * Reads a package tarball (`.tgz`, as `npm pack` writes it) entirely in memory, refusing anything
 * but a small set of regular files with plain relative paths. Nothing is written to disk, so a
 * hostile archive cannot place a file anywhere: links, devices, directories, absolute paths, `..`
 * and duplicate names are refused by name rather than skipped.
 *
 * Bounds (cost): the compressed bytes are already bounded by the download; gunzip stops at
 * `maxBytes` of output (a gzip bomb costs at most that much memory), and at most `maxFiles` entries
 * are accepted. Formats: ustar, with pax extended headers (`x`: `path`, `size`) as node-tar writes
 * them for long names; pax global headers (`g`) carry nothing we use and are skipped.
 */
import { gunzipSync } from "node:zlib";
import { PackageRefused } from "./errors.js";

export interface TarLimits {
  /** Largest decompressed tarball accepted. */
  maxBytes: number;
  /** Most files accepted. */
  maxFiles: number;
}

export const TAR_LIMITS: TarLimits = { maxBytes: 64 * 2 ** 20, maxFiles: 64 };

const BLOCK = 512;
const TYPES: Record<string, string> = {
  "1": "a hard link",
  "2": "a symbolic link",
  "3": "a character device",
  "4": "a block device",
  "5": "a directory",
  "6": "a FIFO",
  "7": "a contiguous file",
  L: "a GNU long-name entry",
  K: "a GNU long-link entry",
};

const text = (block: Uint8Array, from: number, length: number) => {
  const field = block.subarray(from, from + length);
  const nul = field.indexOf(0);
  return Buffer.from(nul === -1 ? field : field.subarray(0, nul)).toString("utf8");
};

function octal(block: Uint8Array, from: number, length: number, what: string, source: string): number {
  if (block[from] & 0x80) throw new PackageRefused("ETAR", `${source}: ${what} uses base-256 encoding, which package tarballs never need`);
  const digits = text(block, from, length).trim();
  if (!/^[0-7]*$/.test(digits)) throw new PackageRefused("ETAR", `${source}: malformed ${what} field in a tar header`);
  return digits === "" ? 0 : Number.parseInt(digits, 8);
}

/** Pax records: `"<len> key=value\n"` repeated. */
function paxRecords(body: Uint8Array, source: string): Map<string, string> {
  const records = new Map<string, string>();
  const all = Buffer.from(body).toString("utf8");
  let pos = 0;
  while (pos < all.length && all[pos] !== "\0") {
    const space = all.indexOf(" ", pos);
    const length = Number(all.slice(pos, space));
    if (space === -1 || !Number.isInteger(length) || length <= 0) throw new PackageRefused("ETAR", `${source}: malformed pax header`);
    const record = all.slice(space + 1, pos + length - 1);
    const eq = record.indexOf("=");
    if (eq === -1) throw new PackageRefused("ETAR", `${source}: malformed pax record`);
    records.set(record.slice(0, eq), record.slice(eq + 1));
    pos += length;
  }
  return records;
}

/** The path inside the package: the top folder (`package/`) removed; refuses what could leave it. */
function packagePath(name: string, source: string): string {
  const problem = (why: string) => new PackageRefused("ETARPATH", `${source}: refused entry ${JSON.stringify(name)}: ${why}`);
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) throw problem("an absolute path");
  if (name.includes("\\")) throw problem("a backslash in a path");
  const parts = name.split("/");
  if (parts.includes("..")) throw problem('a ".." path component');
  const inside = parts.slice(1).filter((p) => p !== "" && p !== ".");
  if (parts.length < 2 || inside.length === 0) throw problem("not inside the package's top folder");
  return inside.join("/");
}

/**
 * The files of a gzipped tarball, by path inside its top folder (`package/x.wasm` → `x.wasm`).
 * Throws `PackageRefused` naming the entry and the problem.
 */
export function readTarball(gz: Uint8Array, source: string, limits: TarLimits = TAR_LIMITS): Map<string, Uint8Array> {
  let tar: Buffer;
  try {
    tar = gunzipSync(gz, { maxOutputLength: limits.maxBytes });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e.code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError)
      throw new PackageRefused("ETARSIZE", `${source}: decompresses to more than ${limits.maxBytes / 2 ** 20} MiB (refused)`);
    throw new PackageRefused("ETAR", `${source}: not a gzip file (${e.message})`);
  }
  const files = new Map<string, Uint8Array>();
  let pax = new Map<string, string>();
  let pos = 0;
  while (pos + BLOCK <= tar.length) {
    const header = tar.subarray(pos, pos + BLOCK);
    if (header.every((b) => b === 0)) break; // end of archive
    const sum = octal(header, 148, 8, "checksum", source);
    let actual = 0;
    for (let i = 0; i < BLOCK; i++) actual += i >= 148 && i < 156 ? 0x20 : header[i];
    if (sum !== actual) throw new PackageRefused("ETAR", `${source}: tar header checksum mismatch at byte ${pos}`);
    const type = String.fromCharCode(header[156] || 0x30);
    const size = pax.has("size") ? Number(pax.get("size")) : octal(header, 124, 12, "size", source);
    if (!Number.isSafeInteger(size) || size < 0) throw new PackageRefused("ETAR", `${source}: malformed entry size`);
    const body = pos + BLOCK;
    const end = body + size;
    if (end > tar.length) throw new PackageRefused("ETAR", `${source}: tarball is truncated`);
    pos = body + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x") {
      pax = paxRecords(tar.subarray(body, end), source);
      continue;
    }
    if (type === "g") continue;
    const prefix = text(header, 345, 155);
    const name = pax.get("path") ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    pax = new Map();
    if (type !== "0") {
      const what = TYPES[type] ?? `an entry of tar type ${JSON.stringify(type)}`;
      const link = type === "1" || type === "2" ? ` to ${JSON.stringify(text(header, 157, 100))}` : "";
      throw new PackageRefused(
        "ETARTYPE",
        `${source}: refused entry ${JSON.stringify(name)}: ${what}${link} (only regular files are accepted)`,
      );
    }
    const path = packagePath(name, source);
    if (files.has(path)) throw new PackageRefused("ETARPATH", `${source}: refused entry ${JSON.stringify(name)}: a duplicate name`);
    if (files.size === limits.maxFiles) throw new PackageRefused("ETARFILES", `${source}: more than ${limits.maxFiles} files (refused)`);
    files.set(path, tar.subarray(body, end));
  }
  return files;
}
