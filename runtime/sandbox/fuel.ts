/**
 * Fuel metering: rewrites a guest's core module so that it can be stopped in the conductor's own
 * thread. A synchronous wasm call cannot be interrupted from outside, so the guest interrupts
 * itself: one added mutable i64 global holds its fuel, and a decrement-and-check is injected at
 * the entry of every function that can run unboundedly (one with a loop or a call) and at every
 * `loop` header. When the fuel drops below zero the check calls an added function whose body is
 * `unreachable`: a trap, which the host tells apart from the guest's own traps by that function
 * being the innermost frame (`isFuelTrap`). The guest cannot call that function, read or write the
 * fuel global, or refill itself: their indices lie past everything its own code may name.
 *
 * Refill: the exports the host calls to start a delivery (`receive`, `cabi_realloc`) are re-pointed
 * to small wrappers that set the fuel to the per-delivery budget and call the original. The
 * global's initial value is the start budget, so the start function (AssemblyScript top-level
 * code) is metered too. The global is also exported (`cordon:fuel`) so a host that holds the
 * instance can read what is left.
 *
 * Units: each check charges the number of instructions in the straight-line code it guards (the
 * function's body outside loops, or the loop's body outside nested loops, plus the check's own
 * nine), so fuel tracks executed instructions approximately. Functions without loops and calls are not checked: they run a
 * bounded number of instructions, charged to their caller.
 *
 * Every instruction is decoded (MVP, sign extension, non-trapping float-to-int, bulk memory,
 * reference types, typed select, tail calls, fixed-width SIMD); anything else — an unknown opcode,
 * exceptions, GC or typed function references, atomics — is refused with `FuelUnsupported`
 * rather than guessed at, and the caller falls back to another sandbox.
 */
import { BinaryError, encodeU32, readU32, type Section, sections } from "./wasm-binary.js";

export class FuelUnsupported extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FuelUnsupported";
  }
}

export const FUEL_EXPORT = "cordon:fuel";

export interface FuelOptions {
  /** Fuel the module starts with: the budget of its start function. */
  startFuel: bigint;
  /** Fuel set by each refilling export before it runs. */
  deliveryFuel: bigint;
  /** Exports whose every call sets the fuel to `deliveryFuel` first. */
  refillOn: readonly string[];
}

export interface FuelModule {
  bytes: Uint8Array;
  /** Index of the added function that traps when the fuel runs out. */
  outOfFuelFunction: number;
  /** Index of the fuel global. */
  fuelGlobal: number;
  /** Checks injected (function entries + loop headers). */
  checks: number;
}

/** Signed LEB128 for i64.const. */
function encodeS64(value: bigint): number[] {
  const out: number[] = [];
  for (;;) {
    const b = Number(value & 0x7fn);
    value >>= 7n;
    const done = (value === 0n && (b & 0x40) === 0) || (value === -1n && (b & 0x40) !== 0);
    out.push(done ? b : b | 0x80);
    if (done) return out;
  }
}

/** Skips one LEB128 number (any width) at `pos`. */
function skipLeb(bytes: Uint8Array, pos: number, end: number): number {
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
function skipInstruction(bytes: Uint8Array, pos: number, end: number): number {
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

/** Instructions of the injected check itself, charged with what it guards. */
const CHECK_COST = 9;

/** A check to insert right before byte `at` of a function body, charging `cost`. */
interface Insertion {
  at: number;
  cost: number;
}

interface Analysed {
  /** Offset of the first instruction (after the local declarations). */
  codeStart: number;
  insertions: Insertion[];
}

/** Decodes one function body [start, end) and finds where checks go and what each charges. */
function analyseBody(bytes: Uint8Array, start: number, end: number): Analysed {
  let [groups, pos] = readU32(bytes, start);
  for (; groups > 0; groups--) {
    pos = skipLeb(bytes, pos, end); // count
    pos = valType(bytes, pos);
  }
  const codeStart = pos;
  // One counting record per function body and per loop; blocks only track nesting.
  const entry: Insertion = { at: codeStart, cost: 0 };
  const loops: Insertion[] = [];
  const frames: (Insertion | null)[] = [entry]; // the innermost counting record of each open block
  const records: Insertion[] = [entry];
  let unbounded = false;
  while (pos < end) {
    const op = bytes[pos];
    const next = skipInstruction(bytes, pos, end);
    records[records.length - 1].cost++;
    if (op === 0x03) {
      const loop: Insertion = { at: next, cost: 0 };
      loops.push(loop);
      records.push(loop);
      frames.push(loop);
      unbounded = true;
    } else if (op === 0x02 || op === 0x04) {
      frames.push(null);
    } else if (op === 0x10 || op === 0x11 || op === 0x12 || op === 0x13) {
      unbounded = true;
    } else if (op === 0x0b) {
      const frame = frames.pop();
      if (frame === undefined) throw new FuelUnsupported("unbalanced end in code");
      if (frame !== null) records.pop();
      if (frames.length === 0) {
        if (next !== end) throw new FuelUnsupported("code after the function's final end");
      }
    }
    pos = next;
  }
  if (frames.length !== 0) throw new FuelUnsupported("function body is not terminated by end");
  const insertions = unbounded ? [entry, ...loops] : [];
  for (const i of insertions) i.cost += CHECK_COST;
  return { codeStart, insertions };
}

interface ImportCounts {
  functions: number;
  globals: number;
  /** Type index of each imported function. */
  functionTypes: number[];
}

function readImports(bytes: Uint8Array, section: Section | undefined): ImportCounts {
  const counts: ImportCounts = { functions: 0, globals: 0, functionTypes: [] };
  if (!section) return counts;
  let [n, pos] = readU32(bytes, section.body);
  for (; n > 0; n--) {
    for (let i = 0; i < 2; i++) {
      const [len, p] = readU32(bytes, pos);
      pos = p + len;
    }
    const kind = bytes[pos++];
    switch (kind) {
      case 0x00: {
        const [type, p] = readU32(bytes, pos);
        counts.functions++;
        counts.functionTypes.push(type);
        pos = p;
        break;
      }
      case 0x01: {
        pos = valType(bytes, pos);
        const flags = bytes[pos++];
        pos = skipLeb(bytes, pos, section.end);
        if (flags & 1) pos = skipLeb(bytes, pos, section.end);
        break;
      }
      case 0x02: {
        const flags = bytes[pos++];
        pos = skipLeb(bytes, pos, section.end);
        if (flags & 1) pos = skipLeb(bytes, pos, section.end);
        break;
      }
      case 0x03:
        counts.globals++;
        pos = valType(bytes, pos) + 1;
        break;
      default:
        throw new FuelUnsupported(`import of kind 0x${kind.toString(16)} is not supported`);
    }
  }
  return counts;
}

const ORDER = [0, 1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];
const rank = (id: number) => ORDER.indexOf(id);

function section(id: number, body: number[] | Uint8Array): Uint8Array {
  const head = [id, ...encodeU32(body.length)];
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

function concat(parts: (Uint8Array | number[])[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

const name = (s: string) => {
  const b = new TextEncoder().encode(s);
  return [...encodeU32(b.length), ...b];
};

/** Returns the module with fuel metering injected. Throws `FuelUnsupported` for what it cannot meter. */
export function instrumentFuel(module: Uint8Array, options: FuelOptions): FuelModule {
  try {
    return instrument(module, options);
  } catch (error) {
    if (error instanceof BinaryError || error instanceof RangeError) throw new FuelUnsupported(error.message);
    throw error;
  }
}

function instrument(bytes: Uint8Array, options: FuelOptions): FuelModule {
  const all = [...sections(bytes)];
  if (bytes[4] !== 1 || bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0) throw new FuelUnsupported("not a core module");
  const byId = (id: number) => all.find((s) => s.id === id);
  const imports = readImports(bytes, byId(2));

  // Defined functions' type indices.
  const funcSection = byId(3);
  const definedTypes: number[] = [];
  if (funcSection) {
    let [n, pos] = readU32(bytes, funcSection.body);
    for (; n > 0; n--) {
      const [t, p] = readU32(bytes, pos);
      definedTypes.push(t);
      pos = p;
    }
  }
  const typeOf = (f: number) => (f < imports.functions ? imports.functionTypes[f] : definedTypes[f - imports.functions]);
  const functionCount = imports.functions + definedTypes.length;

  // Types: append `[] -> []` for the out-of-fuel function.
  const typeSection = byId(1);
  const [typeCount, typesStart] = typeSection ? readU32(bytes, typeSection.body) : [0, 0];
  const voidType = typeCount;
  const newTypes = concat([encodeU32(typeCount + 1), typeSection ? bytes.subarray(typesStart, typeSection.end) : [], [0x60, 0x00, 0x00]]);

  // Globals: append the fuel global.
  const globalSection = byId(6);
  const [globalCount, globalsStart] = globalSection ? readU32(bytes, globalSection.body) : [0, 0];
  const fuelGlobal = imports.globals + globalCount;
  const newGlobals = concat([
    encodeU32(globalCount + 1),
    globalSection ? bytes.subarray(globalsStart, globalSection.end) : [],
    [0x7e, 0x01, 0x42, ...encodeS64(options.startFuel), 0x0b],
  ]);

  // Exports: refilling ones re-pointed to wrappers; the fuel global exported.
  const exportSection = byId(7);
  if (!exportSection) throw new FuelUnsupported("the module has no exports");
  let [exportCount, pos] = readU32(bytes, exportSection.body);
  const exportParts: (Uint8Array | number[])[] = [];
  const wrappers: { target: number; type: number }[] = [];
  const outOfFuel = functionCount;
  for (let n = exportCount; n > 0; n--) {
    const [len, p] = readU32(bytes, pos);
    const field = new TextDecoder().decode(bytes.subarray(p, p + len));
    if (field === FUEL_EXPORT) throw new FuelUnsupported(`the module already exports ${FUEL_EXPORT}`);
    const kind = bytes[p + len];
    const [index, after] = readU32(bytes, p + len + 1);
    if (kind === 0x00 && options.refillOn.includes(field)) {
      const wrapper = functionCount + 1 + wrappers.length;
      wrappers.push({ target: index, type: typeOf(index) });
      exportParts.push(bytes.subarray(pos, p + len + 1), encodeU32(wrapper));
    } else {
      exportParts.push(bytes.subarray(pos, after));
    }
    pos = after;
  }
  exportParts.push([...name(FUEL_EXPORT), 0x03, ...encodeU32(fuelGlobal)]);
  const newExports = concat([encodeU32(exportCount + 1), ...exportParts]);

  // Function section: the out-of-fuel function and the wrappers.
  const newFunctions = concat([
    encodeU32(definedTypes.length + 1 + wrappers.length),
    ...definedTypes.map((t) => encodeU32(t)),
    encodeU32(voidType),
    ...wrappers.map((w) => encodeU32(w.type)),
  ]);

  // Code: every body re-emitted with its checks; the added bodies appended.
  const codeSection = byId(10);
  if (!codeSection) throw new FuelUnsupported("the module has no code section");
  let [bodyCount, cpos] = readU32(bytes, codeSection.body);
  if (bodyCount !== definedTypes.length) throw new FuelUnsupported("function and code sections disagree");
  const getFuel = [0x23, ...encodeU32(fuelGlobal)];
  const setFuel = [0x24, ...encodeU32(fuelGlobal)];
  const check = (cost: number) => [
    ...getFuel,
    0x42,
    ...encodeS64(BigInt(cost)),
    0x7d, // i64.sub
    ...setFuel,
    ...getFuel,
    0x42,
    0x00,
    0x53, // i64.lt_s
    0x04,
    0x40, // if
    0x10,
    ...encodeU32(outOfFuel),
    0x0b,
  ];
  const bodies: Uint8Array[] = [];
  let checks = 0;
  for (let n = bodyCount; n > 0; n--) {
    const [size, start] = readU32(bytes, cpos);
    const end = start + size;
    const { insertions } = analyseBody(bytes, start, end);
    const parts: (Uint8Array | number[])[] = [];
    let last = start;
    for (const { at, cost } of insertions.sort((a, b) => a.at - b.at)) {
      parts.push(bytes.subarray(last, at), check(cost));
      last = at;
      checks++;
    }
    parts.push(bytes.subarray(last, end));
    const body = concat(parts);
    bodies.push(concat([encodeU32(body.length), body]));
    cpos = end;
  }
  const fnBody = (code: number[]) => concat([encodeU32(code.length + 1), [0x00, ...code]]); // no locals
  bodies.push(fnBody([0x00, 0x0b])); // out of fuel: unreachable
  const paramCounts = readParamCounts(bytes, typeSection, typesStart, typeCount);
  for (const { target, type } of wrappers) {
    const params = paramCounts[type];
    if (params === undefined) throw new FuelUnsupported(`type ${type} of an exported function is not a function type`);
    const code = [0x42, ...encodeS64(options.deliveryFuel), ...setFuel];
    for (let i = 0; i < params; i++) code.push(0x20, ...encodeU32(i));
    code.push(0x10, ...encodeU32(target), 0x0b);
    bodies.push(fnBody(code));
  }
  const newCode = concat([encodeU32(bodies.length), ...bodies]);

  // Reassemble in section order, adding the global section if there was none.
  const replaced = new Map<number, Uint8Array>([
    [1, section(1, newTypes)],
    [3, section(3, newFunctions)],
    [6, section(6, newGlobals)],
    [7, section(7, newExports)],
    [10, section(10, newCode)],
  ]);
  const out: Uint8Array[] = [bytes.subarray(0, 8)];
  const pending = new Set([1, 3, 6]);
  const flushBefore = (id: number) => {
    for (const want of [...pending]) {
      if (rank(want) < rank(id)) {
        out.push(replaced.get(want)!);
        pending.delete(want);
      }
    }
  };
  for (const s of all) {
    if (s.id !== 0) flushBefore(s.id);
    const r = replaced.get(s.id);
    if (r && s.id !== 0) {
      out.push(r);
      pending.delete(s.id);
    } else out.push(bytes.subarray(s.start, s.end));
  }
  if (pending.size > 0) throw new FuelUnsupported("module sections are out of order");
  return { bytes: concat(out), outOfFuelFunction: outOfFuel, fuelGlobal, checks };
}

/** Parameter count of each type in the type section (undefined for non-function types). */
function readParamCounts(bytes: Uint8Array, typeSection: Section | undefined, start: number, count: number): (number | undefined)[] {
  const out: (number | undefined)[] = [];
  if (!typeSection) return out;
  let pos = start;
  for (let i = 0; i < count; i++) {
    if (bytes[pos] !== 0x60) throw new FuelUnsupported(`type form 0x${bytes[pos].toString(16)} (GC types) is not supported`);
    let [params, p] = readU32(bytes, pos + 1);
    out.push(params);
    for (let n = params; n > 0; n--) p = valType(bytes, p);
    let [results, q] = readU32(bytes, p);
    for (; results > 0; results--) q = valType(bytes, q);
    pos = q;
  }
  return out;
}

/**
 * Whether `error` is the trap of the added out-of-fuel function (the innermost wasm frame), as
 * opposed to one of the guest's own. The guest cannot reach that function, so it cannot forge this.
 */
export function isFuelTrap(error: unknown, outOfFuelFunction: number): boolean {
  if (!(error instanceof WebAssembly.RuntimeError) || typeof error.stack !== "string") return false;
  const frame = /wasm-function\[(\d+)\]/.exec(error.stack);
  return frame !== null && Number(frame[1]) === outOfFuelFunction;
}
