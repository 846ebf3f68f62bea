/**
 * Fuel metering: rewrites a guest's core module so that it stops itself in the conductor's own
 * thread when it has done its budget of work (`fuel-weigh.ts` says what costs what). One added
 * mutable i64 global holds the fuel; each check subtracts its charge and executes `unreachable`
 * when the fuel is below zero. The guest cannot read, write or refill it: its index lies past
 * every global the guest's own code may name.
 *
 * The host owns the counter: the global is exported (`cordon:fuel`) and the host sets it before
 * each delivery, so nothing the guest or a host import does mid-delivery (an allocation through
 * `cabi_realloc` by a WASI shim, a re-entrant export) refills it. Out of fuel is read from that
 * counter after a trap (`isOutOfFuel`), never from a stack trace. The start function is taken out
 * of the start section and exported as `cordon:start`, so the host sets the start budget first
 * and runs it as any other metered call.
 *
 * Interruptible: each bulk charge ends with a call of an added empty function. V8 puts no
 * interrupt check in a loop whose body calls a bulk operation, so without that call such a loop
 * ignores TerminateExecution — the wall-clock backstop — for minutes (measured: 90–120 s); a
 * wasm function's entry is a check.
 *
 * Bounded at load: the pass decodes each instruction once, refuses a module that would need more
 * than `maxChecks` checks (the caller runs it in a worker, as for a module it cannot decode), and
 * writes its output into one buffer sized before anything is written.
 *
 * Layout: decoding in `fuel-decode.ts`, weights in `fuel-weigh.ts`, section walkers shared with
 * `module-caps.ts` in `wasm-binary.ts`; this file reassembles the module.
 */
import { FuelUnsupported, skipInstruction, skipLeb } from "./fuel-decode.js";
import { type BodyShape, BULK_TABLE, CHARGE, emitted, FuelPlan, MEMORY_BYTE_SHIFT, TABLE_ELEMENT_SHIFT, weighBody } from "./fuel-weigh.js";
import { BinaryError, encodeU32, functionImports, functionTypes, readU32, type Section, sections } from "./wasm-binary.js";

export { FuelUnsupported } from "./fuel-decode.js";

export const FUEL_EXPORT = "cordon:fuel";
export const START_EXPORT = "cordon:start";

/** Most checks one module may need to be metered in-thread (the AssemblyScript proxies need 1–3 k). */
const MAX_FUEL_CHECKS = 250_000;

export interface FuelOptions {
  /** Initial value of the counter (the host sets it before every metered call anyway). */
  startFuel: bigint;
  /** Default `MAX_FUEL_CHECKS`. */
  maxChecks?: number;
  /**
   * For benchmarks: every check charges exactly 1 unit and nothing else is charged, so the fuel a
   * call uses is the number of checks it executed. Not a sandbox: work is no longer priced.
   */
  census?: boolean;
}

export interface FuelModule {
  bytes: Uint8Array;
  /** Index of the fuel global. */
  fuelGlobal: number;
  /** Checks injected. */
  checks: number;
  /** Whether the module had a start function (now exported as `START_EXPORT`). */
  deferredStart: boolean;
}

/** Whether the guest ran out of fuel: the counter is below zero (only a check or a host charge puts it there). */
export function isOutOfFuel(fuel: WebAssembly.Global | null): boolean {
  return fuel !== null && (fuel.value as bigint) < 0n;
}

/** Returns the module with fuel metering injected. Throws `FuelUnsupported` for what it cannot meter. */
export function instrumentFuel(module: Uint8Array, options: FuelOptions): FuelModule {
  try {
    return instrument(module, options);
  } catch (error) {
    if (error instanceof BinaryError || error instanceof RangeError) throw new FuelUnsupported(error.message);
    throw error;
  }
}

const ORDER = [0, 1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];
const rank = (id: number) => ORDER.indexOf(id);
const refuseImport = (kind: number): never => {
  throw new FuelUnsupported(`an import of kind ${kind} is not supported (only functions)`);
};
const refuseType = (index: number, form: number): never => {
  throw new FuelUnsupported(`type ${index} has form 0x${form.toString(16)} (GC types are not supported)`);
};

/** Number of bytes of an unsigned LEB128. */
const lebSize = (value: number) => (value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5);

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

const utf8 = (s: string) => new TextEncoder().encode(s);
const name = (s: string) => [...encodeU32(utf8(s).length), ...utf8(s)];

/** Whether a constant expression (or a vector of function indices) names an imported function. */
function exprNamesImport(bytes: Uint8Array, pos: number, end: number, imports: number): [boolean, number] {
  let names = false;
  while (bytes[pos] !== 0x0b) {
    if (bytes[pos] === 0xd2 && readU32(bytes, pos + 1)[0] < imports) names = true;
    pos = skipInstruction(bytes, pos, end);
  }
  return [names, pos + 1];
}

/** Whether an element segment puts an imported function in a table (or declares it for `ref.func`). */
function elemsNameImport(bytes: Uint8Array, section: Section | undefined, imports: number): boolean {
  if (!section || imports === 0) return false;
  let names = false;
  let [count, pos] = readU32(bytes, section.body);
  const end = section.end;
  for (; count > 0; count--) {
    const [flags, p] = readU32(bytes, pos);
    pos = p;
    if (flags > 7) throw new FuelUnsupported(`element segment of kind ${flags} is not supported`);
    if (flags === 2 || flags === 6) pos = skipLeb(bytes, pos, end); // table index
    if (!(flags & 1)) {
      const [n, q] = exprNamesImport(bytes, pos, end, imports); // offset
      names ||= n;
      pos = q;
    }
    if (flags & 3) pos++; // elemkind or reftype
    let [items, q] = readU32(bytes, pos);
    pos = q;
    for (; items > 0; items--) {
      if (flags & 4) {
        const [n, r] = exprNamesImport(bytes, pos, end, imports);
        names ||= n;
        pos = r;
      } else {
        const [index, r] = readU32(bytes, pos);
        names ||= index < imports;
        pos = r;
      }
    }
  }
  return names;
}

/** Whether a global's initializer names an imported function. */
function globalsNameImport(bytes: Uint8Array, section: Section | undefined, imports: number): boolean {
  if (!section || imports === 0) return false;
  let [count, pos] = readU32(bytes, section.body);
  let names = false;
  for (; count > 0; count--) {
    pos += 2; // value type (number or funcref/externref: one byte, else refused by the decoder) and mutability
    const [n, q] = exprNamesImport(bytes, pos, section.end, imports);
    names ||= n;
    pos = q;
  }
  return names;
}

/**
 * The output's writer: one buffer, filled front to back. Without a buffer it only counts, so a
 * body is sized by running the very code that writes it.
 */
class Out {
  readonly bytes: Uint8Array | null;
  pos = 0;
  constructor(size: number | null) {
    this.bytes = size === null ? null : new Uint8Array(size);
  }
  byte(b: number): void {
    if (this.bytes) this.bytes[this.pos] = b;
    this.pos++;
  }
  u32(value: number): void {
    do {
      let b = value & 0x7f;
      value >>>= 7;
      if (value !== 0) b |= 0x80;
      this.byte(b);
    } while (value !== 0);
  }
  /** Signed LEB128 of a non-negative value below 2^31. */
  s32(value: number): void {
    for (;;) {
      const b = value & 0x7f;
      value >>>= 7;
      if (value === 0 && (b & 0x40) === 0) {
        this.byte(b);
        return;
      }
      this.byte(b | 0x80);
    }
  }
  copy(source: Uint8Array, start: number, end: number): void {
    if (this.bytes) this.bytes.set(source.subarray(start, end), this.pos);
    this.pos += end - start;
  }
  all(source: ArrayLike<number>): void {
    if (this.bytes) this.bytes.set(source, this.pos);
    this.pos += source.length;
  }
}

function instrument(bytes: Uint8Array, options: FuelOptions): FuelModule {
  const all = [...sections(bytes)];
  if (bytes[4] !== 1 || bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0) throw new FuelUnsupported("not a core module");
  const byId = (id: number) => all.find((s) => s.id === id);
  const typeSection = byId(1);
  const types = typeSection ? functionTypes(bytes, typeSection, refuseType) : [];
  const importSection = byId(2);
  const importTypes = importSection ? functionImports(bytes, importSection, refuseImport) : [];
  const imports = importTypes.length;

  const definedTypes: number[] = [];
  const funcSection = byId(3);
  if (funcSection) {
    let [n, pos] = readU32(bytes, funcSection.body);
    for (; n > 0; n--) {
      const [t, p] = readU32(bytes, pos);
      definedTypes.push(t);
      pos = p;
    }
  }
  const paramsOf = (f: number) => {
    const type = types[f < imports ? importTypes[f] : definedTypes[f - imports]];
    if (!type) throw new FuelUnsupported(`function ${f} has no function type`);
    return type.params;
  };

  // Types and functions: an empty function `[] -> []` appended, called after each bulk charge: V8
  // does not interrupt a loop of bulk operations (no stack check), and a call's entry is one.
  const [typeCount, typesStart] = typeSection ? readU32(bytes, typeSection.body) : [0, 0];
  const voidType = typeCount;
  const typesOut = [...encodeU32(typeCount + 1), ...(typeSection ? bytes.subarray(typesStart, typeSection.end) : []), 0x60, 0x00, 0x00];
  const interruptFunction = imports + definedTypes.length;
  const functionsOut = [
    ...encodeU32(definedTypes.length + 1),
    ...(funcSection ? bytes.subarray(readU32(bytes, funcSection.body)[1], funcSection.end) : []),
    ...encodeU32(voidType),
  ];

  // Globals: the fuel global appended.
  const globalSection = byId(6);
  const [globalCount, globalsStart] = globalSection ? readU32(bytes, globalSection.body) : [0, 0];
  const fuelGlobal = globalCount;
  const globals = [
    ...encodeU32(globalCount + 1),
    ...(globalSection ? bytes.subarray(globalsStart, globalSection.end) : []),
    0x7e,
    0x01,
    0x42,
    ...encodeS64(options.startFuel),
    0x0b,
  ];

  // Start: taken out of the start section, exported.
  const startSection = byId(8);
  const start = startSection ? readU32(bytes, startSection.body)[0] : null;

  // Exports: the fuel global and the start function added.
  const exportSection = byId(7);
  const [exportCount, exportsStart] = exportSection ? readU32(bytes, exportSection.body) : [0, 0];
  let importExported = false;
  if (exportSection) {
    let pos = exportsStart;
    for (let n = exportCount; n > 0; n--) {
      const [len, p] = readU32(bytes, pos);
      const field = new TextDecoder().decode(bytes.subarray(p, p + len));
      if (field === FUEL_EXPORT || field === START_EXPORT) throw new FuelUnsupported(`the module already exports ${field}`);
      const [index, after] = readU32(bytes, p + len + 1);
      if (bytes[p + len] === 0x00 && index < imports) importExported = true;
      pos = after;
    }
  }
  const exports = [
    ...encodeU32(exportCount + 1 + (start === null ? 0 : 1)),
    ...(exportSection ? bytes.subarray(exportsStart, exportSection.end) : []),
    ...name(FUEL_EXPORT),
    0x03,
    ...encodeU32(fuelGlobal),
    ...(start === null ? [] : [...name(START_EXPORT), 0x00, ...encodeU32(start)]),
  ];

  // Code: weigh every body, then size each rewritten body by writing it without a buffer.
  const codeSection = byId(10);
  if (!codeSection) throw new FuelUnsupported("the module has no code section");
  const ctx = {
    importedFunctions: imports,
    importsIndirect: importExported || elemsNameImport(bytes, byId(9), imports) || globalsNameImport(bytes, globalSection, imports),
  };
  const plan = new FuelPlan(options.maxChecks ?? MAX_FUEL_CHECKS);
  const [bodyCount, firstBody] = readU32(bytes, codeSection.body);
  if (bodyCount !== definedTypes.length) throw new FuelUnsupported("function and code sections disagree");
  const bodies: Body[] = [];
  let cpos = firstBody;
  for (let i = 0; i < bodyCount; i++) {
    const [size, start] = readU32(bytes, cpos);
    const end = start + size;
    if (end > codeSection.end) throw new FuelUnsupported("truncated code section");
    const first = plan.at.length;
    const shape = weighBody(bytes, start, end, ctx, plan);
    bodies.push({ start, end, shape, first, last: plan.at.length, params: paramsOf(imports + i), size: 0 });
    cpos = end;
  }
  const emit = { bytes, plan, fuelGlobal, interruptFunction, census: options.census === true };
  const measure = new Out(null);
  for (const body of bodies) {
    const from = measure.pos;
    writeBody(measure, body, emit);
    body.size = measure.pos - from;
  }
  const interruptBody = [0x02, 0x00, 0x0b]; // size, no locals, end
  let codeBody = lebSize(bodyCount + 1) + interruptBody.length;
  for (const body of bodies) codeBody += lebSize(body.size) + body.size;

  // Sections in order: the global section added if there was none, the start section dropped.
  const replaced = new Map<number, ArrayLike<number>>([
    [1, typesOut],
    [3, functionsOut],
    [6, globals],
    [7, exports],
  ]);
  const pending = new Set([1, 3, 6, 7]);
  const order: (Section | number)[] = [];
  for (const s of all) {
    if (s.id !== 0) {
      for (const want of [...pending]) {
        if (rank(want) < rank(s.id)) {
          order.push(want);
          pending.delete(want);
        }
      }
    }
    if (s.id === 8) continue;
    if (s.id !== 0 && replaced.has(s.id)) {
      order.push(s.id);
      pending.delete(s.id);
    } else order.push(s);
  }
  for (const want of pending) order.push(want);
  let total = 8;
  for (const s of order) {
    if (typeof s === "number") total += 1 + lebSize(replaced.get(s)!.length) + replaced.get(s)!.length;
    else if (s.id === 10) total += 1 + lebSize(codeBody) + codeBody;
    else total += s.end - s.start;
  }

  const out = new Out(total);

  out.copy(bytes, 0, 8);
  for (const s of order) {
    if (typeof s === "number") {
      const body = replaced.get(s)!;
      out.byte(s);
      out.u32(body.length);
      out.all(body);
    } else if (s.id === 10) {
      out.byte(10);
      out.u32(codeBody);
      out.u32(bodyCount + 1);
      for (const [i, body] of bodies.entries()) {
        out.u32(body.size);
        const at = out.pos;
        writeBody(out, body, emit);
        if (out.pos - at !== body.size) throw new Error(`fuel: body ${i} came out ${out.pos - at - body.size} bytes off`);
      }
      out.all(interruptBody);
    } else out.copy(bytes, s.start, s.end);
  }
  if (out.pos !== total) throw new Error(`fuel: output came out ${out.pos - total} bytes off`);
  return { bytes: out.bytes!, fuelGlobal, checks: plan.checks, deferredStart: start !== null };
}

/** One function body as weighed: where it is in the input and which of the plan's checks are its. */
interface Body {
  start: number;
  end: number;
  shape: BodyShape;
  /** Its checks: `plan` entries [first, last). */
  first: number;
  last: number;
  params: number;
  /** Bytes of the rewritten body (without its size prefix). */
  size: number;
}

interface Emit {
  bytes: Uint8Array;
  plan: FuelPlan;
  fuelGlobal: number;
  interruptFunction: number;
  census: boolean;
}

/**
 * Writes one body with its checks. Locals added after the guest's own: an i64 that carries the
 * new fuel from the subtraction to the test (one `global.get` fewer per check), and an i32 for the
 * length of a bulk operation.
 */
function writeBody(out: Out, body: Body, emit: Emit): void {
  const { bytes, plan, fuelGlobal } = emit;
  const { shape } = body;
  let checks = 0;
  for (let k = body.first; k < body.last; k++) if (emitted(plan.kind[k])) checks++;
  const added = (checks > 0 ? 1 : 0) + (shape.scratch ? 1 : 0);
  const fuelLocal = body.params + shape.locals;
  const scratch = fuelLocal + 1;
  let last = body.start;
  if (added > 0) {
    const afterCount = readU32(bytes, last)[1];
    out.u32(shape.groups + added);
    out.copy(bytes, afterCount, shape.codeStart);
    out.all([1, 0x7e]);
    if (shape.scratch) out.all([1, 0x7f]);
    last = shape.codeStart;
  }
  for (let k = body.first; k < body.last; k++) {
    const kind = plan.kind[k];
    if (!emitted(kind)) continue;
    const at = plan.at[k];
    out.copy(bytes, last, at);
    last = at;
    if (kind === CHARGE || emit.census) writeCharge(out, fuelGlobal, fuelLocal, emit.census ? 1 : plan.cost[k]);
    else writeBulk(out, fuelGlobal, fuelLocal, scratch, kind, emit.interruptFunction);
  }
  out.copy(bytes, last, body.end);
}

/** fuel -= cost; if (fuel < 0) unreachable */
function writeCharge(out: Out, fuel: number, local: number, cost: number): void {
  out.byte(0x23);
  out.u32(fuel);
  out.byte(0x42);
  out.s32(cost);
  out.byte(0x7d); // i64.sub
  writeStoreAndTest(out, fuel, local);
}

/** Before a bulk operation (its length on top of the stack): fuel -= length << shift; if (fuel < 0) unreachable; call the interrupt point */
function writeBulk(out: Out, fuel: number, local: number, scratch: number, kind: number, interrupt: number): void {
  out.byte(0x22); // local.tee: the length stays on the stack for the operation
  out.u32(scratch);
  out.byte(0x23);
  out.u32(fuel);
  out.byte(0x20);
  out.u32(scratch);
  out.byte(0xad); // i64.extend_i32_u
  const shift = kind === BULK_TABLE ? TABLE_ELEMENT_SHIFT : MEMORY_BYTE_SHIFT;
  if (shift > 0) {
    out.byte(0x42);
    out.s32(shift);
    out.byte(0x86); // i64.shl
  }
  out.byte(0x7d); // i64.sub
  writeStoreAndTest(out, fuel, local);
  out.byte(0x10);
  out.u32(interrupt);
}

/** The new fuel (on the stack) stored, and tested through the local that keeps it. */
function writeStoreAndTest(out: Out, fuel: number, local: number): void {
  out.byte(0x22); // local.tee
  out.u32(local);
  out.byte(0x24);
  out.u32(fuel);
  out.byte(0x20);
  out.u32(local);
  out.byte(0x42);
  out.byte(0x00);
  out.byte(0x53); // i64.lt_s
  out.byte(0x04);
  out.byte(0x40);
  out.byte(0x00); // unreachable
  out.byte(0x0b);
}
