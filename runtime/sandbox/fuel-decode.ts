/**
 * Decoding for the fuel pass: the length of every instruction it knows (MVP, sign extension,
 * non-trapping float-to-int, bulk memory, reference types, typed select, tail calls, fixed-width
 * and relaxed SIMD), and the local declarations of a function body. Anything else — an unknown
 * opcode, exceptions, GC or typed function references, atomics — is refused with
 * `FuelUnsupported` rather than guessed at, and the caller runs the module in a worker instead.
 *
 * Cost: one `switch` per instruction, no allocation.
 */
import { readU32 } from "./wasm-binary.js";

export class FuelUnsupported extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FuelUnsupported";
  }
}

/** Skips one LEB128 number (any width) at `pos`. */
export function skipLeb(bytes: Uint8Array, pos: number, end: number): number {
  for (let i = 0; i < 10; i++) {
    if (pos >= end) throw new FuelUnsupported("truncated code");
    if ((bytes[pos++] & 0x80) === 0) return pos;
  }
  throw new FuelUnsupported("malformed LEB128 in code");
}

const NUM_TYPES = new Set([0x7f, 0x7e, 0x7d, 0x7c, 0x7b]);
const REF_TYPES = new Set([0x70, 0x6f]); // funcref, externref

function valType(bytes: Uint8Array, pos: number): number {
  const t = bytes[pos];
  if (NUM_TYPES.has(t) || REF_TYPES.has(t)) return pos + 1;
  throw new FuelUnsupported(`value type 0x${t.toString(16)} (typed references or GC) is not supported`);
}

function blockType(bytes: Uint8Array, pos: number, end: number): number {
  const t = bytes[pos];
  if (t === 0x40 || NUM_TYPES.has(t) || REF_TYPES.has(t)) return pos + 1;
  if (t === 0x63 || t === 0x64) throw new FuelUnsupported("typed reference block types are not supported");
  // A type index, as a non-negative s33.
  if (t & 0x40 && !(t & 0x80)) throw new FuelUnsupported(`unknown block type 0x${t.toString(16)}`);
  return skipLeb(bytes, pos, end);
}

function memarg(bytes: Uint8Array, pos: number, end: number): number {
  const [align, p] = readU32(bytes, pos);
  pos = p;
  if (align & 0x40) pos = skipLeb(bytes, pos, end); // multi-memory: a memory index follows
  return skipLeb(bytes, pos, end); // offset
}

/** 0xFC prefix: saturating truncation, bulk memory, table operations. */
function prefixFC(bytes: Uint8Array, pos: number, end: number): number {
  const [op, p] = readU32(bytes, pos);
  pos = p;
  if (op <= 7) return pos;
  switch (op) {
    case 8: // memory.init data mem
    case 10: // memory.copy mem mem
    case 12: // table.init elem table
    case 14: // table.copy table table
      return skipLeb(bytes, skipLeb(bytes, pos, end), end);
    case 9: // data.drop
    case 11: // memory.fill
    case 13: // elem.drop
    case 15: // table.grow
    case 16: // table.size
    case 17: // table.fill
      return skipLeb(bytes, pos, end);
    default:
      throw new FuelUnsupported(`unknown instruction 0xfc ${op}`);
  }
}

/** 0xFD prefix: fixed-width SIMD (and relaxed SIMD, which has no immediates). */
function prefixFD(bytes: Uint8Array, pos: number, end: number): number {
  const [op, p] = readU32(bytes, pos);
  pos = p;
  if (op <= 11) return memarg(bytes, pos, end); // v128.load*, v128.store
  if (op === 12 || op === 13) return pos + 16; // v128.const, i8x16.shuffle
  if (op <= 20) return pos; // swizzle, splats
  if (op <= 34) return pos + 1; // extract/replace lane
  if (op <= 83) return pos; // comparisons, bitwise
  if (op <= 91) return memarg(bytes, pos, end) + 1; // load/store lane
  if (op <= 93) return memarg(bytes, pos, end); // load32_zero, load64_zero
  if (op <= 0x113) return pos; // arithmetic, conversions, relaxed SIMD
  throw new FuelUnsupported(`unknown instruction 0xfd ${op}`);
}

/** Returns the position after the instruction at `pos` (whose opcode byte is `op`). */
export function skipInstruction(bytes: Uint8Array, pos: number, end: number): number {
  const op = bytes[pos++];
  switch (op) {
    case 0x00: // unreachable
    case 0x01: // nop
    case 0x05: // else
    case 0x0b: // end
    case 0x0f: // return
    case 0x1a: // drop
    case 0x1b: // select
    case 0xd1: // ref.is_null
      return pos;
    case 0x02: // block
    case 0x03: // loop
    case 0x04: // if
      return blockType(bytes, pos, end);
    case 0x0c: // br
    case 0x0d: // br_if
    case 0x10: // call
    case 0x12: // return_call
    case 0x20: // local.get
    case 0x21: // local.set
    case 0x22: // local.tee
    case 0x23: // global.get
    case 0x24: // global.set
    case 0x25: // table.get
    case 0x26: // table.set
    case 0x3f: // memory.size
    case 0x40: // memory.grow
    case 0x41: // i32.const
    case 0x42: // i64.const
    case 0xd2: // ref.func
      return skipLeb(bytes, pos, end);
    case 0x0e: {
      // br_table: vec(label) default
      let [n, p] = readU32(bytes, pos);
      for (; n >= 0; n--) p = skipLeb(bytes, p, end);
      return p;
    }
    case 0x11: // call_indirect type table
    case 0x13: // return_call_indirect type table
      return skipLeb(bytes, skipLeb(bytes, pos, end), end);
    case 0x1c: {
      // select t*
      let [n, p] = readU32(bytes, pos);
      for (; n > 0; n--) p = valType(bytes, p);
      return p;
    }
    case 0x43: // f32.const
      return pos + 4;
    case 0x44: // f64.const
      return pos + 8;
    case 0xd0: {
      // ref.null heaptype
      const t = bytes[pos];
      if (!REF_TYPES.has(t)) throw new FuelUnsupported(`ref.null of heap type 0x${t.toString(16)} is not supported`);
      return pos + 1;
    }
    case 0xfc:
      return prefixFC(bytes, pos, end);
    case 0xfd:
      return prefixFD(bytes, pos, end);
    default:
      if (op >= 0x28 && op <= 0x3e) return memarg(bytes, pos, end); // loads and stores
      if (op >= 0x45 && op <= 0xc4) return pos; // numeric, sign extension
      throw new FuelUnsupported(`unknown or unsupported instruction 0x${op.toString(16)}`);
  }
}

/** The local declarations at `start` of a body: where its code starts, how many groups and locals it declares. */
export function readLocals(bytes: Uint8Array, start: number, end: number): { codeStart: number; groups: number; locals: number } {
  let [groups, pos] = readU32(bytes, start);
  const count = groups;
  let locals = 0;
  for (; groups > 0; groups--) {
    const [n, p] = readU32(bytes, pos);
    locals += n;
    pos = valType(bytes, p);
    if (pos > end) throw new FuelUnsupported("truncated local declarations");
  }
  return { codeStart: pos, groups: count, locals };
}
