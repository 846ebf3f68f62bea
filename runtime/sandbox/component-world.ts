/**
 * Reads a component's world — the names it imports and exports at its top level — straight from
 * the binary's import (id 10) and export (id 11) sections, the way `string-encoding.ts` reads the
 * canonical section: a linear scan of a few hundred bytes, no toolchain.
 *
 * Why Cordon does not need a full component validator at run time: it never instantiates the
 * component's own wiring. Its host implements the world's two functions itself and runs one core
 * module out of the component, which V8 validates when compiling it and `checkCoreModule` confines
 * (imports, exports, memory). What the rest of the component says is read only for these names,
 * the string encodings and the manifest, and every one of those readers refuses what it does not
 * understand rather than skipping it. The SDK's build validates components fully with wasm-tools.
 *
 * Invariant: a name form or extern kind this reader does not know is an error naming it, so a
 * component cannot hide an import behind an encoding the check does not see.
 */
import { BinaryError, isComponent, readU32, sections } from "./wasm-binary.js";

const IMPORT_SECTION = 10;
const EXPORT_SECTION = 11;

export interface ComponentWorld {
  /** Import names in order, e.g. `cordon:proxy/channel@0.1.0`. */
  imports: string[];
  /** Export names in order, e.g. `cordon:proxy/handler@0.1.0`. */
  exports: string[];
}

class Reader {
  private readonly text = new TextDecoder("utf-8", { fatal: true });
  constructor(
    private readonly bytes: Uint8Array,
    public pos: number,
    private readonly end: number,
  ) {}
  byte(): number {
    if (this.pos >= this.end) throw new BinaryError("component section is truncated");
    return this.bytes[this.pos++];
  }
  u32(): number {
    const [value, next] = readU32(this.bytes, this.pos);
    if (next > this.end) throw new BinaryError("component section is truncated");
    this.pos = next;
    return value;
  }
  /** A signed LEB128 (s33: a type index or a primitive value type); only its length matters here. */
  skipSigned(): void {
    for (let i = 0; i < 5; i++) if ((this.byte() & 0x80) === 0) return;
    throw new BinaryError("malformed LEB128 in component");
  }
  name(): string {
    const length = this.u32();
    if (this.pos + length > this.end) throw new BinaryError("component section is truncated");
    try {
      return this.text.decode(this.bytes.subarray(this.pos, this.pos + length));
    } catch {
      throw new BinaryError("component has a name that is not UTF-8");
    } finally {
      this.pos += length;
    }
  }
}

/**
 * `importname'` / `exportname'`: 0x00 or 0x01 then the name; 0x02 adds options (`implements`,
 * a version suffix), which are read and dropped — the name itself is what the world check sees.
 */
function externName(r: Reader, what: string): string {
  const tag = r.byte();
  if (tag === 0x00 || tag === 0x01) return r.name();
  if (tag === 0x02) {
    const name = r.name();
    const count = r.u32();
    for (let i = 0; i < count; i++) {
      const opt = r.byte();
      if (opt !== 0x00 && opt !== 0x01) throw new BinaryError(`component ${what} ${name} has an unknown name option 0x${opt.toString(16)}`);
      r.name();
    }
    return name;
  }
  throw new BinaryError(`component has an ${what} name of unknown form 0x${tag.toString(16)}`);
}

/** `externdesc`: what kind of thing is imported or exported, and its type. */
function skipExternDesc(r: Reader, name: string): void {
  const kind = r.byte();
  switch (kind) {
    case 0x00: // core module
      if (r.byte() !== 0x11) throw new BinaryError(`component extern ${name} is malformed`);
      r.u32();
      return;
    case 0x01: // func
    case 0x04: // component
    case 0x05: // instance
      r.u32();
      return;
    case 0x02: // value
      if (r.byte() === 0x00) r.u32();
      else r.skipSigned();
      return;
    case 0x03: // type
      if (r.byte() === 0x00) r.u32();
      return;
    default:
      throw new BinaryError(`component extern ${name} is of unknown kind 0x${kind.toString(16)}`);
  }
}

/** `sortidx`: a sort (core sorts carry a second byte) and an index. */
function skipSortIdx(r: Reader): void {
  if (r.byte() === 0x00) r.byte();
  r.u32();
}

/** The component's top-level imports and exports. Throws a BinaryError naming what is malformed. */
export function readComponentWorld(component: Uint8Array): ComponentWorld {
  const all = [...sections(component)];
  if (!isComponent(component))
    throw new BinaryError("not a WebAssembly component (this is a core module; build it into a component first)");
  if (component[4] !== 0x0d || component[5] !== 0x00) {
    throw new BinaryError(`component binary version 0x${component[4].toString(16)} is not the one Cordon reads (0xd)`);
  }
  const world: ComponentWorld = { imports: [], exports: [] };
  for (const { id, body, end } of all) {
    if (id !== IMPORT_SECTION && id !== EXPORT_SECTION) continue;
    const r = new Reader(component, body, end);
    const count = r.u32();
    for (let i = 0; i < count; i++) {
      if (id === IMPORT_SECTION) {
        const name = externName(r, "import");
        skipExternDesc(r, name);
        world.imports.push(name);
      } else {
        const name = externName(r, "export");
        skipSortIdx(r);
        const ascribed = r.byte();
        if (ascribed === 0x01) skipExternDesc(r, name);
        else if (ascribed !== 0x00) throw new BinaryError(`component export ${name} is malformed`);
        world.exports.push(name);
      }
    }
    if (r.pos !== end) throw new BinaryError(`component ${id === IMPORT_SECTION ? "import" : "export"} section is malformed`);
  }
  return world;
}
