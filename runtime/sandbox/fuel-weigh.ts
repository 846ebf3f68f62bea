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
 *   call that reached it paid for its whole body. Nor does a function entered only by direct calls
 *   whose entry charge, with its unchecked callees', is at most `PRECHARGED_CALL_TREE` and that is
 *   on no call cycle without a check: each call of it adds that charge to its caller's check
 *   (`settleEntries`). Every other function has an entry check;
 * - host imports: a call of an imported function costs `HOST_CALL_FUEL` (a crossing into
 *   JavaScript), and so does every indirect call when an import is reachable through a table;
 *   hosts that do work by length (random bytes) charge that themselves (`wasi-grants.ts`);
 * - bulk memory and table operations (`memory.fill/copy/init`, `table.fill/copy/init`) are
 *   charged by their length operand, read from the stack at run time: 2 units per byte, 256 per
 *   table element. `memory.grow` and `table.grow` are not: their total is bounded by the caps
 *   (`module-caps.ts`), and a failed grow is cheap.
 *
 * Cost: one decode of the body; the insertions go to flat arrays (no object per check), with the
 * points where `fuel.ts` may save or reload a function's fuel local (exits and calls); then one
 * walk of the direct-call graph.
 */
import { FuelUnsupported, readLocals, skipInstruction } from "./fuel-decode.js";
import { readU32 } from "./wasm-binary.js";

export const CHECK_FUEL = 10;
export const CALL_FUEL = 32;
/** Largest loop-free, call-free body charged at its call sites instead of at its entry. */
const SMALL_LEAF = CALL_FUEL - 2;
/**
 * Largest entry charge of a function entered only by direct calls that its callers pay instead of
 * a check of its own. Its callers pay it even where the call is on a branch not taken, so a larger
 * bound drops more checks and overcharges more. On passthrough.wasm (a text chunk): 128 drops 51 of
 * 692 checks executed and saves no time, 256 drops 148 and 1–4 points of fuel's share of the time
 * (units +31 %), 512 saves nothing more; 1024 drops 158 and more than doubles the units. Requiring
 * every call site to be outside an `if` instead keeps all but 6 of the checks: the callees worth
 * it are the ones called conditionally.
 */
export const PRECHARGED_CALL_TREE = 256;
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
/** Not a check: a point where control may leave the function (`return`, a branch to its label, its final `end`, a tail call). */
export const EXIT = 3;
/** Not a check: a direct call of a defined function (`aux`: its index in `callee`; `cost`: the position after the call). */
export const CALL = 4;
/** Not a check: a call of an import or through a table (`cost`: the position after the call). */
export const CALL_OUT = 5;
/** Not a check: a `loop` whose refuel path is wrapped around it (`WRAPPED`; `cost`: its block type byte). */
export const LOOP = 6;
/** Not a check: the `end` of such a loop, after which its refuel path is written (`aux`: its header check). */
export const LOOP_END = 7;
/** Not a check: a branch out of such a loop, its labels renumbered (`aux`: where they start in `labels`). */
export const BRANCH = 8;
/** `aux` of a loop's header check whose loop is wrapped: it branches out to its refuel path rather than calling the door. */
export const WRAPPED = 1;

/** The checks of every body, in body order and, within a body, in position order. */
export class FuelPlan {
  /** Byte offset (in the input) each check goes before. */
  readonly at: number[] = [];
  readonly kind: number[] = [];
  /** Units a `CHARGE` check charges. */
  readonly cost: number[] = [];
  /** Direct calls of defined functions: the check whose charge covers the call, and the callee. */
  readonly callRecord: number[] = [];
  readonly callee: number[] = [];
  checks = 0;

  constructor(readonly maxChecks: number) {}

  /** For `CALL`: its index in `callee`; for `BRANCH`: its first label in `labels`; `WRAPPED` for a wrapped loop's check. */
  readonly aux: number[] = [];
  /** The renumbered labels of `BRANCH` points. */
  readonly labels: number[] = [];

  push(at: number, kind: number, cost: number): number {
    if (++this.checks > this.maxChecks) {
      throw new FuelUnsupported(`metering it would take more than ${this.maxChecks} checks`);
    }
    return this.point(at, kind, cost, 0);
  }

  /** A place the writer may need to save or reload a function's fuel local (not a check). */
  point(at: number, kind: number, cost: number, aux: number): number {
    this.at.push(at);
    this.kind.push(kind);
    this.cost.push(cost);
    this.aux.push(aux);
    return this.at.length - 1;
  }
}

export interface BodyShape {
  /** Its entry check (a plan index), which `settleEntries` keeps or drops. */
  entry: number;
  /** Its direct calls of defined functions: plan `callRecord`/`callee` entries [firstCall, lastCall). */
  firstCall: number;
  lastCall: number;
  /** No loop, no call and at most `SMALL_LEAF` instructions: whatever call reaches it pays for it. */
  small: boolean;
  /** Whether it has a loop (then it keeps its fuel in a local: `fuel.ts`). */
  loops: boolean;
  /** Whether it calls an import or through a table. */
  callsOut: boolean;
  /** Whether running it may read or write the fuel global (set by `settleEntries`). */
  touches: boolean;
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

/** An entry check `settleEntries` dropped. */
export const DROPPED = -1;

/** Decodes one body [start, end) and appends its checks to `plan`. */
export function weighBody(bytes: Uint8Array, start: number, end: number, ctx: WeighContext, plan: FuelPlan): BodyShape {
  const { codeStart, groups, locals } = readLocals(bytes, start, end);
  const entry = plan.push(codeStart, CHARGE, 0);
  const costs = plan.cost;
  // The counting record (index into the plan) of each open block: loops open one, blocks and ifs inherit.
  const records: number[] = [entry];
  const frames: boolean[] = [true]; // whether each open frame opened a record
  // Whether each open frame is a wrapped loop: three blocks are written around it (fuel.ts
  // `writeBody`), so a branch out of it to a label outside counts three more frames.
  const wrapped: boolean[] = [false];
  let record = entry;
  let unbounded = false;
  let loops = false;
  let callsOut = false;
  let instructions = 0;
  let scratch = false;
  let pos = codeStart;
  const firstCall = plan.callee.length;
  const indirectCost = ctx.importsIndirect ? HOST_CALL_FUEL : CALL_FUEL;
  while (pos < end) {
    const op = bytes[pos];
    const next = skipInstruction(bytes, pos, end);
    instructions++;
    costs[record]++;
    switch (op) {
      case 0x03: {
        // loop: wrapped when its block type is empty or one value type (no parameters to carry out)
        const type = bytes[pos + 1];
        const wraps = (type & 0xc0) === 0x40;
        if (wraps) plan.point(pos, LOOP, type, 0);
        record = plan.push(next, CHARGE, CHECK_FUEL);
        if (wraps) plan.aux[record] = WRAPPED;
        records.push(record);
        frames.push(true);
        wrapped.push(wraps);
        unbounded = true;
        loops = true;
        break;
      }
      case 0x0f: // return
        plan.point(pos, EXIT, 0, 0);
        break;
      case 0x0c: // br
      case 0x0d: // br_if
      case 0x0e: {
        // br_table: an exit if any of its labels is the function's
        let [n, p] = op === 0x0e ? readU32(bytes, pos + 1) : [0, pos + 1];
        let exits = false;
        const first = plan.labels.length;
        let renumbered = false;
        for (; n >= 0; n--) {
          const [label, q] = readU32(bytes, p);
          exits ||= label === frames.length - 1;
          const to = label + 3 * crossed(wrapped, label);
          renumbered ||= to !== label;
          plan.labels.push(to);
          p = q;
        }
        if (exits) plan.point(pos, EXIT, 0, 0);
        if (renumbered) plan.point(pos, BRANCH, 0, first);
        else plan.labels.length = first;
        break;
      }
      case 0x02: // block
      case 0x04: // if
        frames.push(false);
        wrapped.push(false);
        break;
      case 0x0b: {
        const opened = frames.pop();
        if (opened === undefined) throw new FuelUnsupported("unbalanced end in code");
        if (wrapped.pop()) plan.point(pos, LOOP_END, 0, records[records.length - 1]);
        if (frames.length === 0) plan.point(pos, EXIT, 0, 0);
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
        if (callee < ctx.importedFunctions) {
          costs[record] += HOST_CALL_FUEL;
          plan.point(pos, op === 0x10 ? CALL_OUT : EXIT, next, 0);
          callsOut = true;
        } else {
          costs[record] += CALL_FUEL;
          if (op === 0x10) plan.point(pos, CALL, next, plan.callee.length);
          else plan.point(pos, EXIT, 0, 0);
          plan.callRecord.push(record);
          plan.callee.push(callee - ctx.importedFunctions);
        }
        unbounded = true;
        break;
      }
      case 0x11: // call_indirect
      case 0x13: // return_call_indirect
        costs[record] += indirectCost;
        plan.point(pos, op === 0x11 ? CALL_OUT : EXIT, next, 0);
        unbounded = true;
        callsOut = true;
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
  const small = !unbounded && instructions <= SMALL_LEAF;
  return { entry, firstCall, lastCall: plan.callee.length, small, loops, callsOut, touches: false, codeStart, groups, locals, scratch };
}

/** How many wrapped loops a branch of label `label` leaves: among the `label` innermost open frames. */
function crossed(wrapped: boolean[], label: number): number {
  let n = 0;
  for (let i = wrapped.length - label; i < wrapped.length; i++) if (wrapped[i]) n++;
  return n;
}

/**
 * Decides which functions keep their entry check, once every body is weighed. A function without
 * one is one whose entry charge (its code outside loops, with the calls there) its callers pay:
 * - a small leaf (`BodyShape.small`), whatever reaches it (a direct or indirect call, the host);
 * - a function entered only by direct calls (not `escapes`: not exported, in a table, declared
 *   for `ref.func`, named by a global or the start function) whose entry charge, with those of the
 *   unchecked functions it calls, is at most `PRECHARGED_CALL_TREE`: each direct call of it adds
 *   that to the check covering the call, and its own loops and checked callees check themselves.
 * A cycle of calls keeps a check: walking the call graph depth first, a function called by one it
 * is itself still waiting on (every cycle has such a call, and the callee is on the cycle) keeps
 * its entry check. Callees are settled first, so a function's charge includes its unchecked
 * callees' before its callers read it; a callee not yet settled when its caller is, is checked.
 */
export function settleEntries(plan: FuelPlan, shapes: BodyShape[], escapes: Uint8Array, imports: number): void {
  const costs = plan.cost;
  const state = new Uint8Array(shapes.length); // 0 unseen, 1 on the walk, 2 settled
  const checked = new Uint8Array(shapes.length);
  const stack: number[] = [];
  const next: number[] = []; // the walk's position in each stacked function's calls
  for (let root = 0; root < shapes.length; root++) {
    if (state[root] !== 0) continue;
    stack.push(root);
    next.push(shapes[root].firstCall);
    state[root] = 1;
    while (stack.length > 0) {
      const f = stack[stack.length - 1];
      const shape = shapes[f];
      const c = next[next.length - 1];
      if (c < shape.lastCall) {
        next[next.length - 1] = c + 1;
        const g = plan.callee[c];
        if (g >= shapes.length) throw new FuelUnsupported(`call of function ${g + imports}, which does not exist`);
        if (state[g] === 1)
          checked[g] = 1; // closes a cycle through g
        else if (state[g] === 0) {
          state[g] = 1;
          stack.push(g);
          next.push(shapes[g].firstCall);
        }
        continue;
      }
      // Every callee is settled: add the charges of the unchecked ones to the checks covering their calls.
      let touches = shape.loops || shape.callsOut || shape.scratch;
      for (let k = shape.firstCall; k < shape.lastCall; k++) {
        const g = plan.callee[k];
        if (!checked[g]) charge(plan, plan.callRecord[k], costs[shapes[g].entry]);
        touches ||= checked[g] === 1 || shapes[g].touches;
      }
      if (!shape.small && (checked[f] || escapes[f + imports] || costs[shape.entry] > PRECHARGED_CALL_TREE)) {
        checked[f] = 1;
        touches = true;
        charge(plan, shape.entry, CHECK_FUEL);
      } else {
        plan.kind[shape.entry] = DROPPED;
        plan.checks--;
      }
      shape.touches = touches;
      state[f] = 2;
      stack.pop();
      next.pop();
    }
  }
}

/** Adds to a check's charge, which must stay an i64.const the writer can encode as a positive s32. */
function charge(plan: FuelPlan, check: number, units: number): void {
  plan.cost[check] += units;
  if (plan.cost[check] > 0x7fffffff) throw new FuelUnsupported("a check would charge more than 2^31 units");
}

/** Whether a plan entry is a check that is emitted (not a dropped entry check, not a point for saving the fuel). */
export const isCheck = (kind: number) => kind <= BULK_TABLE && kind !== DROPPED;
