/**
 * Caps a guest's linear memory by rewriting its core module, so the limit holds whatever the
 * author declared: the memory section's maximum is lowered to the cap (added when absent), and
 * `memory.grow` past it fails inside the guest (AssemblyScript then aborts → trap). This is
 * the host's cap, not the author's — worker `resourceLimits` do not cover wasm memory at all.
 *
 * Refused outright: an imported memory (the host would have to provide it), shared or 64-bit
 * memories, more than one memory, and an initial size already above the cap.
 *
 * Cost: one pass over the section headers and a copy of the module bytes; done once per load.
 */
import { encodeU32, readU32, sections, type Section } from "./wasm-binary.js";

export const PAGE_BYTES = 64 * 1024;

export class MemoryCapError extends Error {}

const u32 = encodeU32;

/** Reads an import entry's description and returns the position after it. */
function skipImport(bytes: Uint8Array, pos: number): { kind: number; end: number } {
  for (let i = 0; i < 2; i++) {
    const [len, p] = readU32(bytes, pos);
    pos = p + len; // module name, then field name
  }
  const kind = bytes[pos++];
  switch (kind) {
    case 0x00: // func: type index
      return { kind, end: readU32(bytes, pos)[1] };
    case 0x01: {
      // table: reftype + limits
      pos++;
      const flags = bytes[pos++];
      pos = readU32(bytes, pos)[1];
      if (flags & 1) pos = readU32(bytes, pos)[1];
      return { kind, end: pos };
    }
    case 0x02:
      return { kind, end: pos };
    case 0x03: // global: valtype + mutability
      return { kind, end: pos + 2 };
    default:
      return { kind, end: pos + 1 }; // tag and others: the caller only cares about memories
  }
}

/** Returns a copy of `module` whose memory may not grow past `maxPages`. */
export function capMemory(module: Uint8Array, maxPages: number): Uint8Array {
  const out: Uint8Array[] = [];
  let last = 0;
  let memories = 0;
  let all: Section[];
  try {
    all = [...sections(module)];
  } catch (error) {
    throw new MemoryCapError((error as Error).message);
  }
  for (const { id, start, body, end } of all) {
    if (id === 2) {
      let [count, p] = readU32(module, body);
      for (; count > 0; count--) {
        const { kind, end: next } = skipImport(module, p);
        if (kind === 0x02) throw new MemoryCapError("the guest imports its memory; a proxy must define its own");
        p = next;
      }
    } else if (id === 5) {
      const [count, p0] = readU32(module, body);
      memories += count;
      if (count !== 1) throw new MemoryCapError(`the guest defines ${count} memories; one is supported`);
      const flags = module[p0];
      if (flags & ~0x01) throw new MemoryCapError("shared or 64-bit memories are not supported");
      const [initial, p1] = readU32(module, p0 + 1);
      let declaredMax: number | null = null;
      if (flags & 0x01) declaredMax = readU32(module, p1)[0];
      if (initial > maxPages) {
        throw new MemoryCapError(`the guest's memory starts at ${initial} pages, above the cap of ${maxPages} pages (${(maxPages * PAGE_BYTES) / 2 ** 20} MiB)`);
      }
      const max = declaredMax === null ? maxPages : Math.min(declaredMax, maxPages);
      const section = [0x01, 0x01, ...u32(initial), ...u32(max)];
      out.push(module.subarray(last, start), Uint8Array.from([5, ...u32(section.length), ...section]));
      last = end;
    }
  }
  if (memories === 0) return module.slice();
  out.push(module.subarray(last));
  const total = out.reduce((n, part) => n + part.length, 0);
  const result = new Uint8Array(total);
  let offset = 0;
  for (const part of out) {
    result.set(part, offset);
    offset += part.length;
  }
  return result;
}

/** The memory a core module declares, in pages (max null: no maximum). */
export function readMemoryLimits(module: Uint8Array): { initial: number; max: number | null } | null {
  for (const { id, body } of sections(module)) {
    if (id !== 5) continue;
    const [count, p0] = readU32(module, body);
    if (count === 0) return null;
    const flags = module[p0];
    const [initial, p1] = readU32(module, p0 + 1);
    return { initial, max: flags & 0x01 ? readU32(module, p1)[0] : null };
  }
  return null;
}
