/**
 * Caps what a guest's core module can make the host allocate, by rewriting the module before it is
 * compiled, so the limits hold whatever the author declared:
 *
 * - **memory**: the memory section's maximum is lowered to the cap (added when absent), so
 *   `memory.grow` past it fails inside the guest (AssemblyScript then aborts → trap). Worker
 *   `resourceLimits` do not cover wasm memory at all.
 * - **tables**: each table's maximum is lowered to `maxTableElements` (added when absent), so
 *   `table.grow` past it returns -1 inside the guest. Without it a guest may grow a table by
 *   millions of entries; V8 keeps table entries on the JavaScript heap of the thread that runs the
 *   guest, and a worker whose heap passes its limit in one allocation aborts the whole process.
 *
 * - **garbage-collected objects**: a module that defines struct or array types (the GC proposal,
 *   on by default from Node 22) could allocate on the JavaScript heap without any cap; only
 *   function types are accepted.
 *
 * Refused outright: any import that is not a function (an imported memory, table, global or tag —
 * the host would have to provide it), shared or 64-bit memories and tables, more than one memory,
 * more than `maxTables` tables, tables of reference types other than funcref/externref or with an
 * initializer expression, and an initial size already above its cap.
 *
 * Cost: one pass over the section headers and a copy of the module bytes; done once per start.
 */
import { encodeU32, functionImports, functionTypes, IMPORT_KINDS, readU32, type Section, sections } from "./wasm-binary.js";

export const PAGE_BYTES = 64 * 1024;

export class ModuleCapError extends Error {}

export interface ModuleCaps {
  /** Cap on the linear memory, in 64 KiB pages. */
  maxMemoryPages: number;
  /** Cap on each table's size, in elements; tables are left alone when absent. */
  maxTableElements?: number;
  /** Most tables a module may define (default 8). */
  maxTables?: number;
}

/** Default number of tables a guest may define: a toolchain emits one (two with reference types). */
export const MAX_TABLES = 8;

const FUNCREF = 0x70;
const EXTERNREF = 0x6f;

function failing<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ModuleCapError) throw error;
    throw new ModuleCapError((error as Error).message);
  }
}

/** Refuses every import that is not a function; returns nothing (imports are not rewritten). */
function checkImports(module: Uint8Array, section: Section): void {
  functionImports(module, section, (kind) => {
    if (kind === 0x02) throw new ModuleCapError("the guest imports its memory; a proxy must define its own");
    if (kind === 0x01) throw new ModuleCapError("the guest imports a table; a proxy must define its own");
    throw new ModuleCapError(
      `the guest imports a ${IMPORT_KINDS[kind] ?? `kind 0x${kind?.toString(16)}`}; a proxy may import only functions`,
    );
  });
}

/** Refuses every type that is not a function type (struct, array, recursive groups, subtypes: GC). */
function checkTypes(module: Uint8Array, section: Section): void {
  functionTypes(module, section, (i, form) => {
    throw new ModuleCapError(
      `the guest defines type ${i} of form 0x${form?.toString(16)} (struct, array or other garbage-collected types); only function types are supported`,
    );
  });
}

function memorySection(module: Uint8Array, { body }: Section, maxPages: number): number[] {
  const [count, p0] = readU32(module, body);
  if (count !== 1) throw new ModuleCapError(`the guest defines ${count} memories; one is supported`);
  const flags = module[p0];
  if (flags & ~0x01) throw new ModuleCapError("shared or 64-bit memories are not supported");
  const [initial, p1] = readU32(module, p0 + 1);
  const declaredMax = flags & 0x01 ? readU32(module, p1)[0] : null;
  if (initial > maxPages) {
    throw new ModuleCapError(
      `the guest's memory starts at ${initial} pages, above the cap of ${maxPages} pages (${(maxPages * PAGE_BYTES) / 2 ** 20} MiB)`,
    );
  }
  const max = declaredMax === null ? maxPages : Math.min(declaredMax, maxPages);
  return [0x01, 0x01, ...encodeU32(initial), ...encodeU32(max)];
}

function tableSection(module: Uint8Array, { body, end }: Section, maxElements: number, maxTables: number): number[] {
  let [count, pos] = readU32(module, body);
  if (count > maxTables) throw new ModuleCapError(`the guest defines ${count} tables; at most ${maxTables} are allowed`);
  const out = [...encodeU32(count)];
  for (let t = 0; t < count; t++) {
    const reftype = module[pos++];
    if (reftype === 0x40) throw new ModuleCapError("tables with an initializer expression are not supported");
    if (reftype !== FUNCREF && reftype !== EXTERNREF) {
      throw new ModuleCapError(
        `table ${t} holds reference type 0x${reftype?.toString(16)}; only funcref and externref tables are supported`,
      );
    }
    const flags = module[pos++];
    if (flags & ~0x01) throw new ModuleCapError("shared or 64-bit tables are not supported");
    const [initial, p1] = readU32(module, pos);
    pos = p1;
    let declaredMax: number | null = null;
    if (flags & 0x01) [declaredMax, pos] = readU32(module, pos);
    if (initial > maxElements) {
      throw new ModuleCapError(`the guest's table ${t} starts at ${initial} elements, above the cap of ${maxElements}`);
    }
    const max = declaredMax === null ? maxElements : Math.min(declaredMax, maxElements);
    out.push(reftype, 0x01, ...encodeU32(initial), ...encodeU32(max));
  }
  if (pos !== end) throw new ModuleCapError("malformed table section");
  return out;
}

/** Returns a copy of `module` whose memory and tables may not grow past `caps`. */
export function capModule(module: Uint8Array, caps: ModuleCaps): Uint8Array {
  const all = failing(() => [...sections(module)]);
  const replaced: { section: Section; body: number[] }[] = [];
  failing(() => {
    for (const section of all) {
      if (section.id === 1) checkTypes(module, section);
      else if (section.id === 2) checkImports(module, section);
      else if (section.id === 5) replaced.push({ section, body: memorySection(module, section, caps.maxMemoryPages) });
      else if (section.id === 4 && caps.maxTableElements !== undefined) {
        replaced.push({ section, body: tableSection(module, section, caps.maxTableElements, caps.maxTables ?? MAX_TABLES) });
      }
    }
  });
  if (replaced.length === 0) return module.slice();
  const parts: Uint8Array[] = [];
  let last = 0;
  for (const { section, body } of replaced) {
    parts.push(module.subarray(last, section.start), Uint8Array.from([section.id, ...encodeU32(body.length), ...body]));
    last = section.end;
  }
  parts.push(module.subarray(last));
  const result = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of parts) {
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
