/**
 * A hand-written canonical-ABI host for the one `cordon:proxy/proxy` world.
 *
 * The world has one import (`channel.send(string)`) and one export (`handler.receive(string)`), no
 * results, resources or async — so lowering is "allocate with `cabi_realloc`, copy the code units,
 * call", and lifting is "bounds-check, decode". This runs in whatever thread hosts the guest
 * and costs well under a microsecond per call (about 0.2 µs both ways for a 200-byte message,
 * through one `Buffer` over guest memory kept between calls); jco's generated glue for the same
 * world costs several (see `make bench`).
 *
 * Component-model rules kept here rather than trusted to the guest:
 * - no re-entry: `receive` while a `receive` is running throws; what the guest `send`s during
 *   `receive` is queued and returned after it returns, never delivered re-entrantly;
 * - a trap poisons the instance: every later call throws `InstancePoisoned`;
 * - every pointer/length pair from the guest is bounds-checked before anything is allocated;
 * - what the guest sends is bounded before it is decoded: each message (`maxMessageUnits`) and all
 *   of one delivery's messages together (`maxOutputUnitsPerDelivery`), counted in UTF-16 code
 *   units for a UTF-16 guest and in bytes for a UTF-8 one (n bytes decode to at most n code
 *   units) — so a guest cannot make the host hold more than 2 bytes × that budget of strings.
 */
import { FORWARD_MARKER } from "../protocol/methods.js";
import { ucs2Slice, ucs2Write } from "../protocol/ucs2.js";
import type { StringEncoding } from "./string-encoding.js";
import { allowedWasiImport, wasiImports } from "./wasi-grants.js";

export const CHANNEL_IMPORT = "cordon:proxy/channel@0.1.0";
export const RECEIVE_EXPORT = "cordon:proxy/handler@0.1.0#receive";

export interface GuestEncodings {
  /** How `receive`'s argument is laid out in guest memory. */
  receive: StringEncoding;
  /** How `send`'s argument is laid out in guest memory. */
  send: StringEncoding;
}

export interface CanonicalHostOptions {
  encodings: GuestEncodings;
  /** Largest message the guest may send in one call: UTF-16 code units, or bytes for a UTF-8 guest. */
  maxMessageUnits?: number;
  /** Most the guest may send in all for one `receive` (same units); default twice `maxMessageUnits`. */
  maxOutputUnitsPerDelivery?: number;
  /** Most messages the guest may send while handling one `receive`. */
  maxSendsPerReceive?: number;
  /** WASI the chain config grants this guest (`wasi:clocks`, `wasi:random`); none by default. */
  grants?: readonly string[];
  /** Called once instantiated, before the guest can use its imports (a metered host runs a deferred start function here). */
  instantiated?(exports: WebAssembly.Exports): void;
  /** Charges work a host import does for the guest (random bytes) to the guest's fuel. */
  chargeFuel?(units: number): void;
}

export class InstancePoisoned extends Error {
  constructor(cause: unknown) {
    super(`proxy instance is dead after an earlier trap: ${describe(cause)}`);
    this.name = "InstancePoisoned";
  }
}

/** Raised for guest behaviour the host refuses; it poisons the instance like a trap. */
export class GuestFault extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GuestFault";
  }
}

export function describe(error: unknown): string {
  if (error !== null && typeof error === "object") {
    const abort = abortReasons.get(error);
    if (abort !== undefined) return abort;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * `_cordon/abort {message, file, line, column}`: what the SDK's abort handler sends just before it
 * traps (AssemblyScript's `abort(message, file, line, column)`: a throw, a failed assertion, `Map`
 * key not found, …). Only the last message of a `receive` that trapped is read as one; the trap's
 * description becomes `<message> at <file>:<line>:<column>` (the stack is left alone, so nothing
 * the guest writes can pass for another kind of failure). A non-trapping one is dropped.
 */
const ABORT_METHOD = "_cordon/abort";
const ABORT_PREFIX = `{"jsonrpc":"2.0","method":"${ABORT_METHOD}"`;
/** Where `ABORT_PREFIX` differs from the forward marker's and the SDKs' messages' heads: tested first, as `startsWith` costs ~70 ns. */
const ABORT_AT = ABORT_PREFIX.indexOf("abort");
const isAbort = (text: string): boolean => text.charCodeAt(ABORT_AT) === 0x61 && text.startsWith(ABORT_PREFIX);
const abortReasons = new WeakMap<object, string>();

function abortReason(text: string | undefined): string | null {
  if (text === undefined || text.length > 16_384 || !text.includes(ABORT_METHOD)) return null;
  let msg: { method?: unknown; params?: { message?: unknown; file?: unknown; line?: unknown; column?: unknown } };
  try {
    msg = JSON.parse(text);
  } catch {
    return null;
  }
  if (msg?.method !== ABORT_METHOD || typeof msg.params !== "object" || msg.params === null) return null;
  const { message, file, line, column } = msg.params;
  const clean = (v: unknown, max: number) =>
    String(v ?? "")
      .replace(/[\u0000-\u001f\u007f]/g, " ")
      .slice(0, max);
  const where = typeof file === "string" && file.length ? ` at ${clean(file, 200)}:${Number(line) | 0}:${Number(column) | 0}` : "";
  return `${clean(typeof message === "string" && message.length ? message : "abort", 500)}${where}`;
}

interface GuestExports {
  memory: WebAssembly.Memory;
  cabi_realloc: (oldPtr: number, oldSize: number, align: number, newSize: number) => number;
  receive: (ptr: number, len: number) => void;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** `FORWARD_MARKER` as the UTF-16LE bytes a guest writes it in, read as 32-bit words (44 units: 22 words). */
const MARKER_WORDS = new Uint32Array(new Uint8Array(Buffer.from(FORWARD_MARKER, "utf16le")).buffer);

/**
 * Checks that a compiled core module imports nothing but `channel.send` (and the WASI functions
 * `grants` allow) and exports what the ABI needs. This is what confines the guest.
 */
export function checkCoreModule(module: WebAssembly.Module, grants: readonly string[] = []): void {
  for (const imp of WebAssembly.Module.imports(module)) {
    const channel = imp.module === CHANNEL_IMPORT && imp.name === "send";
    if (imp.kind !== "function" || !(channel || allowedWasiImport(imp.module, imp.name, grants))) {
      throw new Error(`core module imports ${imp.module}#${imp.name} (${imp.kind}); only ${CHANNEL_IMPORT}#send is provided`);
    }
  }
  const exports = new Map(WebAssembly.Module.exports(module).map((e) => [e.name, e.kind]));
  for (const [name, kind] of [
    ["memory", "memory"],
    ["cabi_realloc", "function"],
    [RECEIVE_EXPORT, "function"],
  ] as const) {
    if (exports.get(name) !== kind) throw new Error(`core module does not export ${kind} "${name}"`);
  }
}

export class CanonicalHost {
  private readonly guest: GuestExports;
  private readonly maxUnits: number;
  private readonly maxDeliveryUnits: number;
  private readonly maxSends: number;
  /** Units sent so far during the current `receive`. */
  private deliveryUnits = 0;
  /** What the last `receive` sent, in the units the budgets count (see `maxOutputUnitsPerDelivery`). */
  lastOutputUnits = 0;
  private readonly encodings: GuestEncodings;
  /** Where `send` puts messages; non-null exactly while `receive` runs. */
  private outbox: string[] | null = null;
  /** `bytes()`'s view of the guest's memory. */
  private view: Buffer | null = null;
  /** The same memory as 32-bit words (`isMarker`), made again with `view`. */
  private words: Uint32Array | null = null;
  private poisoned: unknown = null;

  /** Instantiates the module; its start function (AssemblyScript top-level code) runs here and may trap. */
  constructor(module: WebAssembly.Module, options: CanonicalHostOptions) {
    checkCoreModule(module, options.grants);
    this.encodings = options.encodings;
    this.maxUnits = options.maxMessageUnits ?? 16 * 1024 * 1024;
    this.maxDeliveryUnits = Math.max(options.maxOutputUnitsPerDelivery ?? 2 * this.maxUnits, this.maxUnits);
    this.maxSends = options.maxSendsPerReceive ?? 10_000;
    let memory: WebAssembly.Memory | undefined;
    const send = (ptr: number, len: number) => {
      // As in the component model, the lowered import is not usable until instantiation is done.
      if (!memory) throw new GuestFault("guest called send() from its start function, before its memory is exported");
      const box = this.admit();
      box.push(this.lift(ptr >>> 0, len >>> 0));
    };
    const guest = {
      memory: () => {
        if (!memory) throw new GuestFault("guest called a host function from its start function, before its memory is exported");
        return memory;
      },
      realloc: (a: number, b: number, c: number, d: number) => this.guest.cabi_realloc(a, b, c, d),
      charge: options.chargeFuel,
    };
    const wasi = options.grants?.length ? wasiImports(module, options.grants, guest) : {};
    const instance = new WebAssembly.Instance(module, { ...wasi, [CHANNEL_IMPORT]: { send } } as WebAssembly.Imports);
    const ex = instance.exports as Record<string, unknown>;
    options.instantiated?.(instance.exports);
    memory = ex.memory as WebAssembly.Memory;
    this.guest = {
      memory,
      cabi_realloc: ex.cabi_realloc as GuestExports["cabi_realloc"],
      receive: ex[RECEIVE_EXPORT] as GuestExports["receive"],
    };
  }

  /** Current size of the guest's linear memory, in bytes. */
  get memoryBytes(): number {
    return this.guest.memory.buffer.byteLength;
  }

  /**
   * Delivers one message; returns everything the guest sent meanwhile, in order. Throws on trap.
   * `pieces`: the message as the pieces it was built from (their concatenation is `message`),
   * copied one by one so a long built text is never flattened (raw-json.ts `piecesOf`).
   */
  receive(message: string, pieces?: readonly string[]): string[] {
    if (this.poisoned !== null) throw new InstancePoisoned(this.poisoned);
    if (this.outbox !== null) throw new GuestFault("re-entrant receive: the guest is already running");
    const outbox: string[] = (this.outbox = []);
    this.deliveryUnits = 0;
    try {
      this.lower(message, pieces ?? [message]);
      // An abort notification that did not end in a trap means nothing: it is never routed.
      for (let i = outbox.length - 1; i >= 0; i--) if (isAbort(outbox[i])) outbox.splice(i, 1);
      return outbox;
    } catch (error) {
      const abort = error instanceof WebAssembly.RuntimeError ? abortReason(outbox[outbox.length - 1]) : null;
      if (abort !== null) abortReasons.set(error as object, abort);
      this.poisoned = error;
      throw error;
    } finally {
      this.outbox = null;
      this.lastOutputUnits = this.deliveryUnits;
    }
  }

  /** The outbox a send goes to, once the send is allowed (inside `receive`, under the count cap). */
  private admit(): string[] {
    const box = this.outbox;
    if (box === null) throw new GuestFault("guest called send() outside of receive");
    if (box.length >= this.maxSends) throw new GuestFault(`guest sent more than ${this.maxSends} messages for one input`);
    return box;
  }

  /**
   * The guest's memory as a `Buffer`, made once and again only after the memory grew (growing
   * detaches the old `ArrayBuffer`, whose views then read as empty): a new view per call cost
   * about a third of a small message's copy.
   */
  private bytes(): Buffer {
    let view = this.view;
    if (view === null || view.length === 0) {
      view = this.view = Buffer.from(this.guest.memory.buffer);
      this.words = new Uint32Array(this.guest.memory.buffer);
    }
    return view;
  }

  /**
   * Whether `FORWARD_MARKER`'s code units lie at `ptr` (in range, after `bytes()`): compared as
   * words, ~25 ns, against ~110 for copying it out to compare and ~130 for `Buffer#compare`
   * (measured). A 2-aligned pointer that is not 4-aligned (an SDK's strings are) is copied out.
   */
  private isMarker(ptr: number): boolean {
    if ((ptr & 3) !== 0) return ucs2Slice(this.view!, ptr, ptr + FORWARD_MARKER.length * 2) === FORWARD_MARKER;
    const words = this.words!;
    const at = ptr >>> 2;
    for (let i = 0; i < MARKER_WORDS.length; i++) if (words[at + i] !== MARKER_WORDS[i]) return false;
    return true;
  }

  /** Copies `message` (as `pieces`) into a buffer from `cabi_realloc` and calls `receive` with it. */
  private lower(message: string, pieces: readonly string[]): void {
    const { cabi_realloc } = this.guest;
    switch (this.encodings.receive) {
      case "utf16": {
        const units = message.length;
        const ptr = cabi_realloc(0, 0, 2, units * 2) >>> 0;
        const view = this.bytes();
        this.checkRange(view, ptr, units * 2, 2);
        let at = ptr;
        for (const piece of pieces) at += ucs2Write(view, piece, at, piece.length * 2);
        return this.guest.receive(ptr, units);
      }
      case "utf8": {
        const max = message.length * 3;
        let ptr = cabi_realloc(0, 0, 1, max) >>> 0;
        let view = this.bytes();
        this.checkRange(view, ptr, max, 1);
        let written = 0;
        for (const piece of pieces) written += view.write(piece, ptr + written, max - written, "utf8");
        if (written < max) {
          ptr = cabi_realloc(ptr, max, 1, written) >>> 0;
          view = this.bytes();
        }
        this.checkRange(view, ptr, written, 1);
        return this.guest.receive(ptr, written);
      }
      default:
        throw new Error(`string encoding ${this.encodings.receive} is not supported`);
    }
  }

  /** Charges `len` units (code units, or bytes for UTF-8) against the per-message and per-delivery caps, before anything is decoded. */
  private charge(len: number, unit: string): void {
    if (len > this.maxUnits) throw new GuestFault(`guest sent a message of ${len} ${unit} (limit ${this.maxUnits})`);
    const total = this.deliveryUnits + len;
    if (total > this.maxDeliveryUnits) {
      throw new GuestFault(`guest sent ${total} ${unit} of output for one input (limit ${this.maxDeliveryUnits} per delivery)`);
    }
    this.deliveryUnits = total;
  }

  private lift(ptr: number, len: number): string {
    const view = this.bytes();
    switch (this.encodings.send) {
      case "utf16": {
        this.charge(len, "code units");
        this.checkRange(view, ptr, len * 2, 2);
        // The notification marker, what a watching proxy sends for nearly every message it sees:
        // compared where it lies and handed over as the one shared string (no copy, no allocation).
        if (len === FORWARD_MARKER.length && this.isMarker(ptr)) return FORWARD_MARKER;
        // The code units as they are (a lone surrogate stays one, for the I-JSON check to refuse;
        // TextDecoder would have turned it into U+FFFD), at a third of TextDecoder's cost.
        return ucs2Slice(view, ptr, ptr + len * 2);
      }
      case "utf8": {
        this.charge(len, "bytes");
        this.checkRange(view, ptr, len, 1);
        // Fatal: ill-formed UTF-8 from a guest is a fault, not text to repair (Buffer's utf8Slice would).
        return utf8.decode(view.subarray(ptr, ptr + len));
      }
      default:
        throw new Error(`string encoding ${this.encodings.send} is not supported`);
    }
  }

  private checkRange(view: Buffer, ptr: number, bytes: number, align: number): void {
    if (ptr % align !== 0) throw new GuestFault(`guest string pointer ${ptr} is not ${align}-byte aligned`);
    if (ptr + bytes > view.length) {
      throw new GuestFault(`guest string [${ptr}, ${ptr + bytes}) lies outside its ${view.length}-byte memory`);
    }
  }
}
