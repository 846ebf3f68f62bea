/**
 * Writes a gzipped ustar archive the way `npm pack` lays a package out: every file under
 * `package/`, in sorted order, mode 0644, owner 0, and npm's fixed mtime (1985-10-26T08:15:00Z),
 * so the same files always give the same bytes (and the same `integrity`).
 *
 * `type` exists for tests that need hostile archives (links, directories); packing writes regular
 * files only. Names longer than ustar's 100 bytes are refused: a proxy package has a handful of
 * short names.
 */
import { gzipSync } from "node:zlib";

export interface TarEntry {
  /** Full path in the archive, e.g. `package/proxy.wasm`. */
  name: string;
  data?: Uint8Array;
  /** ustar type flag; default `0` (regular file). */
  type?: string;
  linkname?: string;
  mode?: number;
}

/** npm pack's mtime for every entry, for reproducible tarballs. */
const NPM_MTIME = 499162500;

function header(entry: TarEntry, size: number): Buffer {
  const block = Buffer.alloc(512);
  const put = (value: string, at: number, length: number) => {
    const bytes = Buffer.from(value, "utf8");
    if (bytes.length > length) throw new Error(`tar: ${JSON.stringify(value)} is longer than ${length} bytes`);
    bytes.copy(block, at);
  };
  const num = (value: number, at: number, length: number) => put(value.toString(8).padStart(length - 1, "0"), at, length - 1);
  put(entry.name, 0, 100);
  num(entry.mode ?? 0o644, 100, 8);
  num(0, 108, 8);
  num(0, 116, 8);
  num(size, 124, 12);
  num(NPM_MTIME, 136, 12);
  block.fill(0x20, 148, 156);
  put(entry.type ?? "0", 156, 1);
  put(entry.linkname ?? "", 157, 100);
  put("ustar\u000000", 257, 8);
  let sum = 0;
  for (const b of block) sum += b;
  put(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148, 8);
  return block;
}

/** The entries as given (callers sort), gzipped. */
export function writeTarball(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = entry.data ?? new Uint8Array(0);
    parts.push(header(entry, data.length), Buffer.from(data), Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts), { level: 9 });
}
