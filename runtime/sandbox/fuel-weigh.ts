/**
 * Weighing for the fuel pass: where a function body's checks go and what each charges, so that
 * fuel tracks the work a guest does rather than the instructions it has.
 *
 * The rules (units are about one simple instruction of work each):
 * - straight-line code: every instruction costs 1, charged by the check that guards it — the one
 *   at the function's entry for code outside loops, the one at a loop's header for the loop's body
 *   outside nested loops — plus `CHECK_FUEL` for the check itself;
 * - calls: each `call`/`call_indirect`/`return_call*` costs `CALL_FUEL` in its caller. A function
 *   with no loop and no call and at most `SMALL_LEAF` instructions gets no check of its own: the
 *   call that reached it paid for its whole body. Every other function has an entry check;
 * - host imports: a call of an imported function costs `HOST_CALL_FUEL` (a crossing into
 *   JavaScript), and so does every indirect call when an import is reachable through a table;
 *   hosts that do work by length (random bytes) charge that themselves (`wasi-grants.ts`);
 * - bulk memory and table operations (`memory.fill/copy/init`, `table.fill/copy/init`) are
 *   charged by their length operand, read from the stack at run time: 2 units per byte, 256 per
 *   table element. `memory.grow` and `table.grow` are not: their total is bounded by the caps
 *   (`module-caps.ts`), and a failed grow is cheap.
 *
 * Cost: one decode of the body; the insertions go to flat arrays (no object per check).
 */
import { FuelUnsupported, readLocals, skipInstruction } from "./fuel-decode.js";
import { readU32 } from "./wasm-binary.js";

const CHECK_FUEL = 10;
export const CALL_FUEL = 32;
/** Largest loop-free, call-free body charged at its call sites instead of at its entry. */
const SMALL_LEAF = CALL_FUEL - 2;
export const HOST_CALL_FUEL = 5_000;
/** log2 of the units per byte of a bulk memory operation: 2, for up to 0.46 ns a byte (measured, 32 MiB copies on the loaded machine). */
export const MEMORY_BYTE_SHIFT = 1;
/** log2 of the units per table element of a bulk table operation: 256, for the 32–56 ns V8 takes per funcref element (measured). */
export const TABLE_ELEMENT_SHIFT = 8;

/** A check charging a constant. */
export const CHARGE = 0;
/** A check charging the length operand of the bulk memory operation right after it. */
const BULK_MEMORY = 1;
/** The same for a bulk table operation (`TABLE_ELEMENT_SHIFT`). */
export const BULK_TABLE = 2;

/** The checks of every body, in body order and, within a body, in position order. */
export class FuelPlan {
  /** Byte offset (in the input) each check goes before. */
  readonly at: number[] = [];
  readonly kind: number[] = [];
  /** Units a `CHARGE` check charges. */
  readonly cost: number[] = [];
  checks = 0;

  constructor(readonly maxChecks: number) {}

  push(at: number, kind: number, cost: number): number {
    if (++this.checks > this.maxChecks) {
      throw new FuelUnsupported(`metering it would take more than ${this.maxChecks} checks`);
    }
    this.at.push(at);
    this.kind.push(kind);
    this.cost.push(cost);
    return this.at.length - 1;
  }
}

export interface BodyShape {
  codeStart: number;
  groups: number;
  locals: number;
  /** Whether the body needs a scratch i32 local (it has a bulk operation). */
  scratch: boolean;
}

export interface WeighContext {
  /** Functions with index below this are imports. */
  importedFunctions: number;
  /** Whether an import may be reached by `call_indirect` (it is in a table, exported, or in a global). */
  importsIndirect: boolean;
}

const DROPPED = -1;

/** Decodes one body [start, end) and appends its checks to `plan`. */
export function weighBody(bytes: Uint8Array, start: number, end: number, ctx: WeighContext, plan: FuelPlan): BodyShape {
  const { codeStart, groups, locals } = readLocals(bytes, start, end);
  const entry = plan.push(codeStart, CHARGE, 0);
  const costs = plan.cost;
  // The counting record (index into the plan) of each open block: loops open one, blocks and ifs inherit.
  const records: number[] = [entry];
  const frames: boolean[] = [true]; // whether each open frame opened a record
  let record = entry;
  let unbounded = false;
  let instructions = 0;
  let scratch = false;
  let pos = codeStart;
  const indirectCost = ctx.importsIndirect ? HOST_CALL_FUEL : CALL_FUEL;
  while (pos < end) {
    const op = bytes[pos];
    const next = skipInstruction(bytes, pos, end);
    instructions++;
    costs[record]++;
    switch (op) {
      case 0x03: // loop
        record = plan.push(next, CHARGE, CHECK_FUEL);
        records.push(record);
        frames.push(true);
        unbounded = true;
        break;
      case 0x02: // block
      case 0x04: // if
        frames.push(false);
        break;
      case 0x0b: {
        const opened = frames.pop();
        if (opened === undefined) throw new FuelUnsupported("unbalanced end in code");
        if (opened) {
          records.pop();
          record = records[records.length - 1] ?? entry;
        }
        if (frames.length === 0 && next !== end) throw new FuelUnsupported("code after the function's final end");
        break;
      }
      case 0x10: // call
      case 0x12: {
        // return_call
        const callee = readU32(bytes, pos + 1)[0];
        costs[record] += callee < ctx.importedFunctions ? HOST_CALL_FUEL : CALL_FUEL;
        unbounded = true;
        break;
      }
      case 0x11: // call_indirect
      case 0x13: // return_call_indirect
        costs[record] += indirectCost;
        unbounded = true;
        break;
      case 0xfc: {
        const sub = readU32(bytes, pos + 1)[0];
        if (sub === 8 || sub === 10 || sub === 11) {
          plan.push(pos, BULK_MEMORY, 0);
          scratch = true;
        } else if (sub === 12 || sub === 14 || sub === 17) {
          plan.push(pos, BULK_TABLE, 0);
          scratch = true;
        }
        break;
      }
    }
    pos = next;
  }
  if (frames.length !== 0) throw new FuelUnsupported("function body is not terminated by end");
  if (!unbounded && instructions <= SMALL_LEAF) {
    plan.kind[entry] = DROPPED; // charged at its call sites
    plan.checks--;
  } else costs[entry] += CHECK_FUEL;
  return { codeStart, groups, locals, scratch };
}

/** Whether a planned check is emitted. */
export const emitted = (kind: number) => kind !== DROPPED;
