/**
 * Reads the string encodings a component declares for its canonical ABI.
 *
 * The encoding is not part of the WIT: it is an option on each `canon lift` / `canon lower`
 * in the component binary. We read it from the canonical-function section (id 8) directly —
 * a few dozen bytes of LEB128 — so the host knows how to copy strings across without running
 * jco's generated glue. Cost: one linear scan of the section headers, no allocation of bodies.
 *
 * Invariant: a component for the `cordon:proxy` world contains only `canon lift` and
 * `canon lower`; any other canonical built-in (resources, async, streams…) means the component
 * reaches for something the world does not offer, and is reported as such.
 */

import { isComponent, readU32, sections } from "./wasm-binary.js";

export type StringEncoding = "utf8" | "utf16" | "latin1+utf16";

/**
 * The encoding each `canon lift` / `canon lower` declares, or null where it declares none. An
 * absent option means utf8 for a function that passes strings — but a function passing no strings
 * (a WASI clock, say) carries no option in a utf16 component either, so absence alone decides nothing.
 */
export interface CanonicalEncodings {
  /** Exports: the host writes strings into the guest. */
  lifts: (StringEncoding | null)[];
  /** Imports: the host reads strings out of the guest. */
  lowers: (StringEncoding | null)[];
}

const ENCODINGS: StringEncoding[] = ["utf8", "utf16", "latin1+utf16"];
const CANON_SECTION = 8;

/** A cursor over a section body. */
class Reader {
  constructor(
    private readonly bytes: Uint8Array,
    public pos: number,
  ) {}
  byte(): number {
    if (this.pos >= this.bytes.length) throw new Error("component binary is truncated");
    return this.bytes[this.pos++];
  }
  u32(): number {
    const [value, next] = readU32(this.bytes, this.pos);
    this.pos = next;
    return value;
  }
}

/** Parses the canonical options vector and returns the declared string encoding, if any. */
function readOptions(r: Reader): StringEncoding | null {
  let encoding: StringEncoding | null = null;
  const count = r.u32();
  for (let i = 0; i < count; i++) {
    const opt = r.byte();
    if (opt <= 0x02) encoding = ENCODINGS[opt];
    else if (opt === 0x03 || opt === 0x04 || opt === 0x05 || opt === 0x07)
      r.u32(); // memory, realloc, post-return, callback
    else if (opt === 0x06) throw new Error("component uses async canonical functions, which the cordon:proxy world does not allow");
    else throw new Error(`component uses unknown canonical option 0x${opt.toString(16)}`);
  }
  return encoding;
}

export function readCanonicalEncodings(component: Uint8Array): CanonicalEncodings {
  const all = [...sections(component)];
  if (!isComponent(component)) throw new Error("not a WebAssembly component (this is a core module; build it into a component first)");
  const result: CanonicalEncodings = { lifts: [], lowers: [] };
  for (const { id, body, end } of all) {
    if (id !== CANON_SECTION) continue;
    const r = new Reader(component, body);
    const count = r.u32();
    for (let i = 0; i < count; i++) {
      const kind = r.byte();
      if (kind === 0x00) {
        if (r.byte() !== 0x00) throw new Error("malformed canon lift");
        r.u32(); // core func index
        result.lifts.push(readOptions(r));
        r.u32(); // type index
      } else if (kind === 0x01) {
        if (r.byte() !== 0x00) throw new Error("malformed canon lower");
        r.u32(); // func index
        result.lowers.push(readOptions(r));
      } else {
        throw new Error(
          `component uses canonical built-in 0x${kind.toString(16)} (resources, tasks or streams), which the cordon:proxy world does not offer`,
        );
      }
    }
    if (r.pos !== end) throw new Error("malformed canonical section");
  }
  return result;
}
