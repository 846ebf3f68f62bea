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
