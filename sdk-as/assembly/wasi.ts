// The wall clock and randomness, for proxies built for the SDK's `proxy-wasi` world
// (`sdk-as/wit/proxy-wasi.wit`). Using `Clock` or `Random` makes the proxy import
// `wasi:clocks/wall-clock@0.2.0` / `wasi:random/random@0.2.0`; the build tool then embeds it with
// that world, and the conductor runs it only when the chain config grants the proxy
// `"wasi:clocks"` / `"wasi:random"`. A proxy that uses neither imports nothing and stays a plain
// `cordon:proxy/proxy` component.
//
//   import { Clock, Random } from "@cordon/sdk-as";
//   const t = Clock.now();           // Datetime { seconds, nanoseconds }
//   const id = Random.uuid();        // "3b0c…-4…"

// ---- raw canonical ABI (the only code here that touches pointers) ------------------------------
//
// `now`/`resolution: func() -> datetime`: the record {u64, u32} does not fit in one flat result, so
// the caller passes a return area: seconds (u64) at +0, nanoseconds (u32) at +8.
// `get-random-bytes: func(len: u64) -> list<u8>`: return area holds (ptr: u32, len: u32); the host
// allocates the list with the guest's `cabi_realloc`, which hands out a pinned object that the
// guest copies out of and unpins.

@external("wasi:clocks/wall-clock@0.2.0", "now")
declare function wall_clock_now(retptr: usize): void;

@external("wasi:clocks/wall-clock@0.2.0", "resolution")
declare function wall_clock_resolution(retptr: usize): void;

@external("wasi:random/random@0.2.0", "get-random-u64")
declare function random_get_u64(): u64;

@external("wasi:random/random@0.2.0", "get-random-bytes")
declare function random_get_bytes(len: u64, retptr: usize): void;

/** One return area, 8-aligned (calls never overlap: the guest is single-threaded and not re-entered). */
const RET: usize = memory.data(16, 8);

function rawNow(resolution: bool): Datetime {
  if (resolution) wall_clock_resolution(RET);
  else wall_clock_now(RET);
  return new Datetime(load<u64>(RET), load<u32>(RET, 8));
}

function rawBytes(n: i32): Uint8Array {
  const out = new Uint8Array(n);
  if (n <= 0) return out;
  random_get_bytes(<u64>n, RET);
  const ptr = <usize>load<u32>(RET);
  const len = <i32>load<u32>(RET, 4);
  memory.copy(out.dataStart, ptr, <usize>(len < n ? len : n));
  __unpin(ptr); // the buffer came from cabi_realloc (a pinned object): let the collector have it
  return out;
}

// ---- the API ---------------------------------------------------------------------------------

/** A wall-clock time: seconds and nanoseconds since the Unix epoch (UTC). */
export class Datetime {
  constructor(
    public seconds: u64,
    public nanoseconds: u32,
  ) {}

  /** Milliseconds since the Unix epoch. */
  get millis(): u64 {
    return this.seconds * 1000 + <u64>(this.nanoseconds / 1_000_000);
  }

  /** `2026-11-30T05:23:30.123Z`. */
  toISOString(): string {
    return new Date(<i64>this.millis).toISOString();
  }
}

/** `wasi:clocks/wall-clock@0.2.0` (needs the `wasi:clocks` grant). */
export class Clock {
  /** The current wall-clock time. */
  static now(): Datetime {
    return rawNow(false);
  }

  /** The clock's resolution. */
  static resolution(): Datetime {
    return rawNow(true);
  }

  /** Milliseconds since the Unix epoch. */
  static millis(): u64 {
    return rawNow(false).millis;
  }
}

const HEX = "0123456789abcdef";

/** `wasi:random/random@0.2.0`, cryptographically secure (needs the `wasi:random` grant). */
export class Random {
  /** 64 random bits. */
  static u64(): u64 {
    return random_get_u64();
  }

  /** `n` random bytes. */
  static bytes(n: i32): Uint8Array {
    return rawBytes(n);
  }

  /** A float in [0, 1) with 53 random bits. */
  static float(): f64 {
    return <f64>(random_get_u64() >> 11) / 9007199254740992.0;
  }

  /** `n` random bytes as lower-case hex (2n characters). */
  static hex(n: i32): string {
    const b = rawBytes(n);
    let s = "";
    for (let i = 0; i < b.length; i++) s += HEX.charAt(b[i] >> 4) + HEX.charAt(b[i] & 15);
    return s;
  }

  /** A random (version 4) UUID. */
  static uuid(): string {
    const b = rawBytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let s = "";
    for (let i = 0; i < 16; i++) {
      if (i == 4 || i == 6 || i == 8 || i == 10) s += "-";
      s += HEX.charAt(b[i] >> 4) + HEX.charAt(b[i] & 15);
    }
    return s;
  }
}
