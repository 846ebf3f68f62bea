/**
 * The little of the WebAssembly binary format Cordon reads itself: LEB128 integers and the
 * section list of a core module or a component (both are `magic, version, then id/size/body`
 * sections). Core modules are validated by V8 when compiled; the component's own sections are
 * read by the modules that need them (component-world.ts, string-encoding.ts, manifest.ts).
 */
export class BinaryError extends Error {}

/** Reads an unsigned LEB128 u32 at `pos`; returns it and the position after it. */
export function readU32(bytes: Uint8Array, pos: number): [number, number] {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (pos >= bytes.length) throw new BinaryError("binary is truncated");
    const b = bytes[pos++];
    result |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result >>> 0, pos];
    shift += 7;
    if (shift > 35) throw new BinaryError("malformed LEB128 in binary");
  }
}

export function encodeU32(value: number): number[] {
  const out: number[] = [];
  do {
    let b = value & 0x7f;
    value >>>= 7;
    if (value !== 0) b |= 0x80;
    out.push(b);
  } while (value !== 0);
  return out;
}

export interface Section {
  id: number;
  /** Offset of the section's id byte. */
  start: number;
  /** Offset of its body, and just past it. */
  body: number;
  end: number;
}

/** The top-level sections of a module or component, in order. Checks the magic number only. */
export function* sections(bytes: Uint8Array): Generator<Section> {
  if (bytes.length < 8 || bytes[0] !== 0x00 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new BinaryError("not a WebAssembly binary");
  }
  let pos = 8;
  while (pos < bytes.length) {
    const start = pos;
    const id = bytes[pos++];
    const [size, body] = readU32(bytes, pos);
    const end = body + size;
    if (end > bytes.length) throw new BinaryError("binary is truncated");
    yield { id, start, body, end };
    pos = end;
  }
}

/** Whether the binary is a component (layer 1) rather than a core module. */
export function isComponent(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && bytes[6] === 0x01 && bytes[7] === 0x00;
}

/** Names of the import kinds, by their byte in the import section. */
export const IMPORT_KINDS = ["function", "table", "memory", "global", "tag"];

/**
 * The type index of each function an import section imports, in order. Any other kind of import
 * is handed to `refuse` (which throws: without decoding its type, the section cannot be read on).
 */
export function functionImports(bytes: Uint8Array, { body }: Section, refuse: (kind: number) => never): number[] {
  const types: number[] = [];
  let [count, pos] = readU32(bytes, body);
  for (; count > 0; count--) {
    for (let i = 0; i < 2; i++) {
      const [len, p] = readU32(bytes, pos);
      pos = p + len; // module name, then field name
    }
    const kind = bytes[pos++];
    if (kind !== 0x00) refuse(kind);
    const [type, p] = readU32(bytes, pos);
    types.push(type);
    pos = p;
  }
  return types;
}

/**
 * The parameter and result counts of each type of a type section. A form other than a function
 * type (struct, array, recursive groups: GC) is handed to `refuse` with its index.
 */
export function functionTypes(
  bytes: Uint8Array,
  { body, end }: Section,
  refuse: (index: number, form: number) => never,
): { params: number; results: number }[] {
  let [count, pos] = readU32(bytes, body);
  const valtype = () => {
    const t = bytes[pos++];
    if (t === 0x63 || t === 0x64) {
      // (ref null? heaptype): a signed LEB128 heap type
      while (bytes[pos++] & 0x80) if (pos >= end) throw new BinaryError("malformed type section");
    }
  };
  const out: { params: number; results: number }[] = [];
  for (let i = 0; i < count; i++) {
    const form = bytes[pos++];
    if (form !== 0x60) refuse(i, form);
    const [params, p] = readU32(bytes, pos);
    pos = p;
    for (let n = params; n > 0; n--) valtype();
    const [results, q] = readU32(bytes, pos);
    pos = q;
    for (let n = results; n > 0; n--) valtype();
    out.push({ params, results });
  }
  if (pos !== end) throw new BinaryError("malformed type section");
  return out;
}
