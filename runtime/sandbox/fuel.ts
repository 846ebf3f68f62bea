/**
 * Fuel metering: rewrites a guest's core module so that it stops itself in the conductor's own
 * thread when it has done its budget of work (`fuel-weigh.ts` says what costs what). One added
 * mutable i64 global holds the fuel; each check subtracts its charge and, when the fuel is below
 * zero, calls the added refuel function, which calls the host through the refuel door (an added
 * table of one function, exported as `REFUEL_EXPORT`, `openRefuelDoor`) and executes `unreachable`
 * if the fuel is still below zero. The host refills the counter there from the call's budget, a
 * slice at a time, and reads its clock (`thread-sandbox.ts`), or throws to stop the guest; a door
 * left empty traps. The guest cannot read, write or refill the fuel, nor reach the door: their
 * indices lie past every global and table the guest's own code may name.
 *
 * The host owns the counter: the global is exported (`cordon:fuel`) and the host sets it before
 * each delivery, so nothing the guest or a host import does mid-delivery (an allocation through
 * `cabi_realloc` by a WASI shim, a re-entrant export) refills it. Out of fuel is read from that
 * counter after a trap (`isOutOfFuel`), never from a stack trace. The start function is taken out
 * of the start section and exported as `cordon:start`, so the host sets the start budget first
 * and runs it as any other metered call.
 *
 * Where the fuel lives while a function runs: in the global, or — in a function with a loop — in
 * a local of its own, read from the global at entry and written back wherever anything else could
 * read or write the fuel (`writeBody`), so a loop iteration costs a subtract and a test on a
 * register. Checks run where `fuel-weigh.ts` puts them: at the entry of a function that some
 * caller does not pay for, at every loop header, before every bulk operation.
 *
 * Why a guest cannot run unbounded work with fuel left (the soundness argument):
 * 1. Every charge is paid before the work it covers (a check at the top of a straight-line region
 *    charges the whole region, including branches not taken), so fuel reaches zero no later than
 *    one check's charge past the budget: the overshoot is the failing check's own charge, and a
 *    region's charge is bounded by its size (plus `PRECHARGED_CALL_TREE` per direct call in it).
 *    The work runs only if the refuel function returns, which it does only with the fuel at or
 *    above zero: the host has paid what the check owed from the call's budget.
 * 2. Unbounded work needs a back edge or a call cycle. Every loop header has a check that charges
 *    at least `CHECK_FUEL`, every iteration. Every cycle in the direct-call graph contains a
 *    function that keeps its entry check (`settleEntries`); a function reachable other than by a
 *    direct call (exported, in a table, `ref.func`, named by a global, the start function) keeps
 *    its entry check unless it is a small leaf (no loop, no call), so recursion through
 *    `call_indirect`, the host or a tail call also passes a check every round. Each call site also
 *    charges `CALL_FUEL` (or `HOST_CALL_FUEL`) in its caller.
 * 3. A function without an entry check is paid for at every direct call of it: its entry region
 *    and those of the unchecked functions it calls, transitively (an acyclic tree, by 2), are
 *    added to the charge of the check covering the call. Its own loops and checked callees check
 *    themselves.
 * 4. Bulk memory and table operations are charged by their length operand just before they run.
 * 5. A local copy of the fuel never loses a charge: within an activation the local is the fuel;
 *    it is written to the global before every exit (`return`, a branch to the function's label,
 *    the final `end`, a tail call), before every call that may touch the fuel (a checked callee or
 *    one that calls such, an import — the host charges by length there —, `call_indirect`) and on
 *    the way to the refuel function, and read back after every such call and after the refuel. A
 *    callee that touches no fuel (no check, no such call) cannot see a stale global. A guest trap of its own leaves the global at
 *    or above the true fuel, which is then ≥ 0, so it is not mistaken for running out.
 *
 * A loop's header check does not call the refuel function inside the loop: it branches out of it
 * (`br_if $out`) to a refuel path written after it, which calls the function and enters the loop
 * again at its top with the header's charge added back, so the header check, run again, nets
 * zero (`refuelPath`; the loop is wrapped in `block $done loop $again block $out`, and every
 * branch out of it is renumbered past those three: `fuel-weigh.ts` `BRANCH`). A call inside a
 * loop, even one never made, has V8 keep the loop's values on the stack (the tightest loop ran at
 * 29 M units per ms against 47). No branch of the guest's can reach the added blocks, and every
 * way into the loop still passes its header check.
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
import {
  type BodyShape,
  BRANCH,
  BULK_TABLE,
  CALL,
  CALL_OUT,
  CHARGE,
  DROPPED,
  EXIT,
  FuelPlan,
  isCheck,
  LOOP,
  LOOP_END,
  MEMORY_BYTE_SHIFT,
  settleEntries,
  TABLE_ELEMENT_SHIFT,
  WRAPPED,
  weighBody,
} from "./fuel-weigh.js";
import { BinaryError, encodeU32, functionImports, functionTypes, readU32, type Section, sections } from "./wasm-binary.js";

export { FuelUnsupported } from "./fuel-decode.js";

export const FUEL_EXPORT = "cordon:fuel";
export const START_EXPORT = "cordon:start";
/**
 * The refuel door: an added table of one function, exported so the host can put its refuel
 * function there (`openRefuelDoor`). Left empty, a failed check traps as it always did.
 */
export const REFUEL_EXPORT = "cordon:refuel";

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

/**
 * A module that only re-exports a host function: a table holds only WebAssembly functions, and
 * an exported import is one (`(import "h" "r" (func)) (export "r" (func 0))`).
 */
// biome-ignore format: one line per section (header, types, import, export)
const DOOR_MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00,
  0x02, 0x07, 0x01, 0x01, 0x68, 0x01, 0x72, 0x00, 0x00,
  0x07, 0x05, 0x01, 0x01, 0x72, 0x00, 0x00,
]);
let doorModule: WebAssembly.Module | null = null;

/**
 * Puts `refuel` in a metered instance's refuel door: a check that finds the fuel spent calls it
 * (with the counter written back, below zero) instead of trapping. It must return with the counter
 * at or above zero, or throw to stop the guest (the guest then traps as if it had run out, the
 * counter still below zero, so `isOutOfFuel` tells); a host charge that overdraws should call it
 * too. Costs nothing until the fuel is spent: the host sets a slice, refills it here, and reads
 * its clock only here.
 */
export function openRefuelDoor(exports: WebAssembly.Exports, refuel: () => void): void {
  doorModule ??= new WebAssembly.Module(DOOR_MODULE);
  const door = new WebAssembly.Instance(doorModule, { h: { r: refuel } }).exports.r as () => void;
  (exports[REFUEL_EXPORT] as WebAssembly.Table).set(0, door);
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

/** A vector section's body with `entry` appended, and the index the entry gets. */
function appendEntry(bytes: Uint8Array, section: Section | undefined, entry: number[]): { body: number[]; index: number } {
  const [count, start] = section ? readU32(bytes, section.body) : [0, 0];
  return { body: [...encodeU32(count + 1), ...(section ? bytes.subarray(start, section.end) : []), ...entry], index: count };
}

/** Marks in `escapes` each function a constant expression names (`ref.func`); returns the position after its `end`. */
function markExpr(bytes: Uint8Array, pos: number, end: number, escapes: Uint8Array | null): number {
  while (bytes[pos] !== 0x0b) {
    if (escapes && bytes[pos] === 0xd2) mark(escapes, readU32(bytes, pos + 1)[0]);
    pos = skipInstruction(bytes, pos, end);
  }
  return pos + 1;
}

function mark(escapes: Uint8Array, index: number): void {
  if (index >= escapes.length) throw new FuelUnsupported(`function ${index} does not exist`);
  escapes[index] = 1;
}

/** Marks each function an element segment puts in a table or declares for `ref.func`. */
function markElems(bytes: Uint8Array, section: Section | undefined, escapes: Uint8Array): void {
  if (!section) return;
  let [count, pos] = readU32(bytes, section.body);
  const end = section.end;
  for (; count > 0; count--) {
    const [flags, p] = readU32(bytes, pos);
    pos = p;
    if (flags > 7) throw new FuelUnsupported(`element segment of kind ${flags} is not supported`);
    if (flags === 2 || flags === 6) pos = skipLeb(bytes, pos, end); // table index
    if (!(flags & 1)) pos = markExpr(bytes, pos, end, null); // offset
    if (flags & 3) pos++; // elemkind or reftype
    let [items, q] = readU32(bytes, pos);
    pos = q;
    for (; items > 0; items--) {
      if (flags & 4) pos = markExpr(bytes, pos, end, escapes);
      else {
        const [index, r] = readU32(bytes, pos);
        mark(escapes, index);
        pos = r;
      }
    }
  }
}

/** Marks each function a global's initializer names. */
function markGlobals(bytes: Uint8Array, section: Section | undefined, escapes: Uint8Array): void {
  if (!section) return;
  let [count, pos] = readU32(bytes, section.body);
  for (; count > 0; count--) {
    pos += 2; // value type (number or funcref/externref: one byte, else refused by the decoder) and mutability
    pos = markExpr(bytes, pos, section.end, escapes);
  }
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
  // And the refuel function `[] -> []` after it, called by a check that found the fuel spent.
  const refuelFunction = interruptFunction + 1;
  const functionsOut = [
    ...encodeU32(definedTypes.length + 2),
    ...(funcSection ? bytes.subarray(readU32(bytes, funcSection.body)[1], funcSection.end) : []),
    ...encodeU32(voidType),
    ...encodeU32(voidType),
  ];

  // Tables: the refuel door appended (a funcref table of exactly one element; no imported table
  // shifts its index: only functions may be imported). The guest's code cannot name it: its index
  // is past every table the guest's own code was validated against.
  const funcrefOfOne = [0x70, 0x01, 0x01, 0x01]; // funcref, limits with a maximum: 1, 1
  const { body: tablesOut, index: refuelTable } = appendEntry(bytes, byId(4), funcrefOfOne);

  // Globals: the fuel global appended (a mutable i64 set to the start fuel).
  const globalSection = byId(6);
  const fuelEntry = [0x7e, 0x01, 0x42, ...encodeS64(options.startFuel), 0x0b];
  const { body: globals, index: fuelGlobal } = appendEntry(bytes, globalSection, fuelEntry);

  // Start: taken out of the start section, exported.
  const startSection = byId(8);
  const start = startSection ? readU32(bytes, startSection.body)[0] : null;

  // Exports: the fuel global and the start function added.
  const exportSection = byId(7);
  const [exportCount, exportsStart] = exportSection ? readU32(bytes, exportSection.body) : [0, 0];
  // Functions that can be entered other than by a direct call: exported, in a table or declared
  // for `ref.func` (code can name no other), named by a global, or the start function.
  const escapes = new Uint8Array(imports + definedTypes.length);
  if (exportSection) {
    let pos = exportsStart;
    for (let n = exportCount; n > 0; n--) {
      const [len, p] = readU32(bytes, pos);
      const field = new TextDecoder().decode(bytes.subarray(p, p + len));
      if (field === FUEL_EXPORT || field === START_EXPORT || field === REFUEL_EXPORT)
        throw new FuelUnsupported(`the module already exports ${field}`);
      const [index, after] = readU32(bytes, p + len + 1);
      if (bytes[p + len] === 0x00) mark(escapes, index);
      pos = after;
    }
  }
  markElems(bytes, byId(9), escapes);
  markGlobals(bytes, globalSection, escapes);
  if (start !== null) mark(escapes, start);
  const exports = [
    ...encodeU32(exportCount + 2 + (start === null ? 0 : 1)),
    ...(exportSection ? bytes.subarray(exportsStart, exportSection.end) : []),
    ...name(FUEL_EXPORT),
    0x03,
    ...encodeU32(fuelGlobal),
    ...name(REFUEL_EXPORT),
    0x01,
    ...encodeU32(refuelTable),
    ...(start === null ? [] : [...name(START_EXPORT), 0x00, ...encodeU32(start)]),
  ];

  // Code: weigh every body, then size each rewritten body by writing it without a buffer.
  const codeSection = byId(10);
  if (!codeSection) throw new FuelUnsupported("the module has no code section");
  const ctx = { importedFunctions: imports, importsIndirect: escapes.subarray(0, imports).includes(1) };
  const plan = new FuelPlan(options.maxChecks ?? MAX_FUEL_CHECKS);
  const [bodyCount, firstBody] = readU32(bytes, codeSection.body);
  if (bodyCount !== definedTypes.length) throw new FuelUnsupported("function and code sections disagree");
  const bodies: Body[] = [];
  const shapes: BodyShape[] = [];
  let cpos = firstBody;
  for (let i = 0; i < bodyCount; i++) {
    const [size, start] = readU32(bytes, cpos);
    const end = start + size;
    if (end > codeSection.end) throw new FuelUnsupported("truncated code section");
    const first = plan.at.length;
    const shape = weighBody(bytes, start, end, ctx, plan);
    shapes.push(shape);
    bodies.push({ start, end, shape, first, last: plan.at.length, params: paramsOf(imports + i), size: 0 });
    cpos = end;
  }
  settleEntries(plan, shapes, escapes, imports);
  const emit = { bytes, plan, fuelGlobal, interruptFunction, refuelFunction, shapes, census: options.census === true };
  const measure = new Out(null);
  for (const body of bodies) {
    const from = measure.pos;
    writeBody(measure, body, emit);
    body.size = measure.pos - from;
  }
  const interruptBody = [0x02, 0x00, 0x0b]; // size, no locals, end
  // The refuel function: through the door, then the fuel tested again, so a host that returns
  // without refilling (or an empty door, which traps on its own) never lets the guest run on.
  // biome-ignore format: one instruction per line
  const refuelCode = [
    0x00, // no locals
    0x41, 0x00, // i32.const 0
    0x11, ...encodeU32(voidType), ...encodeU32(refuelTable), // call_indirect
    0x23, ...encodeU32(fuelGlobal), // global.get
    0x42, 0x00, // i64.const 0
    0x53, // i64.lt_s
    0x04, 0x40, 0x00, 0x0b, // if unreachable end
    0x0b,
  ];
  const refuelBody = [...encodeU32(refuelCode.length), ...refuelCode];
  let codeBody = lebSize(bodyCount + 2) + interruptBody.length + refuelBody.length;
  for (const body of bodies) codeBody += lebSize(body.size) + body.size;

  // Sections in order: the global section added if there was none, the start section dropped.
  const replaced = new Map<number, ArrayLike<number>>([
    [1, typesOut],
    [3, functionsOut],
    [4, tablesOut],
    [6, globals],
    [7, exports],
  ]);
  const pending = new Set([1, 3, 4, 6, 7]);
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
      out.u32(bodyCount + 2);
      for (const [i, body] of bodies.entries()) {
        out.u32(body.size);
        const at = out.pos;
        writeBody(out, body, emit);
        if (out.pos - at !== body.size) throw new Error(`fuel: body ${i} came out ${out.pos - at - body.size} bytes off`);
      }
      out.all(interruptBody);
      out.all(refuelBody);
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
  refuelFunction: number;
  shapes: BodyShape[];
  census: boolean;
}

/**
 * Writes one body with its checks. Locals added after the guest's own: an i64 for the fuel, and an
 * i32 for the length of a bulk operation.
 *
 * A function with a loop keeps the fuel in its i64 local (`local` mode): it reads the global once
 * at entry and its checks count down the local, so a loop iteration costs a subtract and a test on
 * a register rather than a load and a store. The global is written back wherever anything else
 * could read or write it: before every way out of the function (`return`, a branch to its label,
 * its final `end`, a tail call), before a call of a function that touches the fuel (a checked one,
 * one calling such, an import, a call through a table), and on the way to `unreachable` when a
 * check fails; it is read back after such a call (the callee or the host charged it). Elsewhere
 * the i64 only carries the new fuel from the subtraction to the test.
 */
function writeBody(out: Out, body: Body, emit: Emit): void {
  const { bytes, plan, fuelGlobal: G, shapes } = emit;
  const { shape } = body;
  let checks = 0;
  for (let k = body.first; k < body.last; k++) if (isCheck(plan.kind[k])) checks++;
  const local = shape.loops;
  const added = (checks > 0 || local ? 1 : 0) + (shape.scratch ? 1 : 0);
  const L = body.params + shape.locals;
  const scratch = L + 1;
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
    const at = plan.at[k];
    const cost = emit.census ? 1 : plan.cost[k];
    if (kind === CALL || kind === CALL_OUT) {
      if (!local || (kind === CALL && !shapes[plan.callee[plan.aux[k]]].touches)) continue;
      out.copy(bytes, last, at);
      save(out, G, L);
      out.copy(bytes, at, plan.cost[k]); // the call
      load(out, G, L); // what the callee left
      last = plan.cost[k];
      continue;
    }
    if (kind === EXIT) {
      if (!local) continue;
      out.copy(bytes, last, at);
      last = at;
      save(out, G, L);
      continue;
    }
    if (kind === LOOP) {
      out.copy(bytes, last, at);
      last = at;
      out.all([0x02, plan.cost[k], 0x03, 0x40, 0x02, 0x40]); // block $done (the loop's type), loop $again, block $out
      continue;
    }
    if (kind === LOOP_END) {
      out.copy(bytes, last, at + 1); // through the loop's own end
      last = at + 1;
      refuelPath(out, G, L, emit.refuelFunction, emit.census ? 1 : plan.cost[plan.aux[k]]);
      continue;
    }
    if (kind === BRANCH) {
      out.copy(bytes, last, at);
      const op = bytes[at];
      out.byte(op);
      const n = op === 0x0e ? readU32(bytes, at + 1)[0] : 0;
      if (op === 0x0e) out.u32(n);
      for (let i = 0; i <= n; i++) out.u32(plan.labels[plan.aux[k] + i]);
      last = skipInstruction(bytes, at, body.end);
      continue;
    }
    out.copy(bytes, last, at);
    last = at;
    if (k === shape.entry) {
      if (kind === DROPPED) {
        if (local) load(out, G, L);
        continue;
      }
      out.byte(0x23); // the entry check reads the global in either mode
      out.u32(G);
      out.byte(0x42);
      out.s32(cost);
      out.byte(0x7d); // i64.sub
      storeAndTest(out, G, L, local, emit.refuelFunction);
    } else if (kind === CHARGE || emit.census) {
      fuelNow(out, G, L, local);
      out.byte(0x42);
      out.s32(cost);
      out.byte(0x7d); // i64.sub
      if (plan.aux[k] === WRAPPED) branchOut(out, L);
      else storeAndTest(out, G, L, local, emit.refuelFunction);
    } else if (kind !== DROPPED) writeBulk(out, G, L, local, scratch, kind, emit);
  }
  out.copy(bytes, last, body.end);
}

/** Pushes the current fuel: the local in local mode, else the global. */
function fuelNow(out: Out, G: number, L: number, local: boolean): void {
  out.byte(local ? 0x20 : 0x23);
  out.u32(local ? L : G);
}

/** global = local */
function save(out: Out, G: number, L: number): void {
  out.byte(0x20);
  out.u32(L);
  out.byte(0x24);
  out.u32(G);
}

/** local = global */
function load(out: Out, G: number, L: number): void {
  out.byte(0x23);
  out.u32(G);
  out.byte(0x21);
  out.u32(L);
}

/**
 * The new fuel (on the stack) kept, then tested: `if (fuel < 0) refuel()`. In local mode it goes
 * to the local, and to the global only on the way to the refuel (the host reads and refills it
 * there), and is read back after it.
 */
function storeAndTest(out: Out, G: number, L: number, local: boolean, refuel: number): void {
  out.byte(0x22); // local.tee
  out.u32(L);
  if (!local) {
    out.byte(0x24);
    out.u32(G);
    out.byte(0x20);
    out.u32(L);
  }
  out.byte(0x42);
  out.byte(0x00);
  out.byte(0x53); // i64.lt_s
  out.byte(0x04);
  out.byte(0x40);
  if (local) save(out, G, L);
  out.byte(0x10); // call the refuel function: it returns only with fuel ≥ 0
  out.u32(refuel);
  if (local) load(out, G, L);
  out.byte(0x0b);
}

/**
 * A wrapped loop's header check: the new fuel kept in the local, and `br_if $out` when it is below
 * zero — out of the loop to its refuel path (`refuelPath`), which comes back in at its top. No call
 * is left in the loop, so V8 keeps the loop's values in registers (a call in it, even on a branch
 * never taken, has them kept on the stack: the tightest loop ran at 29 M units per ms against 47).
 */
function branchOut(out: Out, L: number): void {
  out.byte(0x22); // local.tee
  out.u32(L);
  out.byte(0x42);
  out.byte(0x00);
  out.byte(0x53); // i64.lt_s
  out.byte(0x0d); // br_if $out (the loop is 0, $out 1)
  out.byte(0x01);
}

/**
 * After a wrapped loop's `end`: the rest of what `LOOP` opened. Written around the loop:
 * `block $done (the loop's type) loop $again block $out` + the loop + `br $done end` and the refuel
 * path: the fuel saved, the refuel function called, read back with the header check's charge
 * added, and `br $again`, which enters the loop at its top again: the header check runs once more
 * and takes that charge back, so a refill never charges the check twice (nor, for a check dearer
 * than a slice, fails it again for ever). The loop's own value, if any, leaves through `br $done`;
 * the `unreachable` after `$again` only satisfies validation.
 */
function refuelPath(out: Out, G: number, L: number, refuel: number, headerCost: number): void {
  out.all([0x0c, 0x02, 0x0b]); // br $done; end $out
  save(out, G, L);
  out.byte(0x10);
  out.u32(refuel);
  out.byte(0x23);
  out.u32(G);
  out.byte(0x42);
  out.s32(headerCost);
  out.byte(0x7c); // i64.add
  out.byte(0x21);
  out.u32(L);
  out.all([0x0c, 0x00, 0x0b, 0x00, 0x0b]); // br $again; end $again; unreachable; end $done
}

/** Before a bulk operation (its length on top of the stack): fuel -= length << shift; if (fuel < 0) refuel(); call the interrupt point */
function writeBulk(out: Out, G: number, L: number, local: boolean, scratch: number, kind: number, emit: Emit): void {
  out.byte(0x22); // local.tee: the length stays on the stack for the operation
  out.u32(scratch);
  fuelNow(out, G, L, local);
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
  storeAndTest(out, G, L, local, emit.refuelFunction);
  out.byte(0x10);
  out.u32(emit.interruptFunction);
}
