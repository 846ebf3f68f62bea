// The raw canonical ABI of the `cordon:proxy/proxy` world, for the UTF-16 string encoding.
// Everything that touches pointers across the host boundary lives in this one file; the friendly
// API (proxy.ts) sits on top of it.
//
// With UTF-16 the host writes code units straight into guest memory and AssemblyScript strings are
// UTF-16, so nothing is ever transcoded:
// - `receive` costs no copy at all: `cabi_realloc` hands the host the payload area of a fresh,
//   pinned AssemblyScript `string` object, the host writes the message into it, and `receive`
//   adopts that object as the message;
// - `send` costs no copy in the guest: the host reads the string's code units where they lie.

import { deliveryBegins, deliveryEnds } from "./collect";
import { Builder } from "./json";

@external("cordon:proxy/channel@0.1.0", "send")
declare function channel_send(ptr: usize, units: usize): void;

/** Hands one complete JSON text to the conductor. The host copies it before returning. */
export function send(message: string): void {
  channel_send(changetype<usize>(message), <usize>message.length);
}

/** Sends the text `b` holds, assembled in a reused area instead of a new string (`Builder#assemble`). */
export function sendBuilt(b: Builder): void {
  const units = b.units;
  channel_send(b.assemble(), units);
}

let handler: ((message: string) => void) | null = null;
/** The message of the `receive` in progress (null between them, and once marked): what `_cordon/forward` hands on. */
let delivered: string | null = null;

/**
 * Whether `text` is the very string the host delivered in the `receive` in progress, not yet
 * handed on by the marker; true once: the host takes one marker per delivery, so a second forward
 * of the same message in the same `receive` is written out.
 */
export function takeDelivered(text: string): bool {
  const d = delivered;
  if (d == null || changetype<usize>(d) != changetype<usize>(text)) return false;
  delivered = null;
  return true;
}
/** Inside `receive` (where `send` is allowed): an abort can tell the host why before it traps. */
// @ts-ignore: decorator (lazy: `abort` may be compiled before this module's globals are)
@lazy let receiving = false;
/** An abort is being reported (building its message may itself abort, e.g. out of memory). */
// @ts-ignore: decorator
@lazy let aborting = false;

/** Installs the function that receives every message from the conductor (`register()` does this). */
export function setReceiver(fn: (message: string) => void): void {
  handler = fn;
}

/**
 * Export `cordon:proxy/handler@0.1.0#receive`. The host lowered `units` UTF-16 code units into the
 * buffer it got from `cabi_realloc`; the guest owns that buffer from here on.
 */
export function cordon_receive(ptr: usize, units: usize): void {
  let message: string;
  if (isAdopted(ptr, units)) {
    __unpin(ptr);
    message = changetype<string>(ptr);
  } else {
    // A buffer that is not exactly one of our string objects (a host that over-allocated, or
    // reallocated with another size): copy the code units out and release it.
    message = String.UTF16.decodeUnsafe(ptr, units << 1);
    if (ptr != 0) __unpin(ptr);
  }
  const fn = handler;
  if (fn == null) unreachable(); // the proxy never called register()
  deliveryBegins();
  receiving = true;
  delivered = message;
  fn(message);
  delivered = null;
  receiving = false;
  deliveryEnds(units); // may collect: nothing of this delivery is used after it
}

/** Whether `ptr` is a string object whose payload is exactly `units` code units. */
function isAdopted(ptr: usize, units: usize): bool {
  if (ptr == 0) return false;
  // The runtime header sits just before the payload: rtId at -8, rtSize at -4.
  return load<u32>(ptr - 8) == idof<string>() && <usize>load<u32>(ptr - 4) == units << 1;
}

/**
 * Export `cabi_realloc`: the host allocates the argument buffer of `receive` through it.
 * Every buffer is a pinned `string` object (so the collector cannot free it before `receive`
 * adopts it); `receive` unpins it.
 */
export function cabi_realloc(oldPtr: usize, oldSize: usize, align: usize, newSize: usize): usize {
  if (oldPtr == 0) return __pin(__new(newSize, idof<string>()));
  __unpin(oldPtr);
  return __pin(__renew(oldPtr, newSize));
}

/**
 * Replaces the `env.abort` import: a failed assertion, a throw, `Map.get` of a missing key, an
 * out-of-bounds index… traps the instance. Inside `receive` it first sends the host a
 * `_cordon/abort` notification `{message, file, line, column}`, so the failure names the cause
 * (`proxy "x" failed (trap): Key does not exist at ~lib/map.ts:105:17`) instead of `unreachable`.
 * The host reads it only from the last message of a receive that trapped; it is never routed.
 */
export function abort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  if (receiving && !aborting) {
    aborting = true;
    send(
      '{"jsonrpc":"2.0","method":"_cordon/abort","params":{"message":' +
        jsonString(message == null ? "abort" : changetype<string>(message)) +
        ',"file":' +
        jsonString(fileName == null ? "" : changetype<string>(fileName)) +
        ',"line":' +
        line.toString() +
        ',"column":' +
        column.toString() +
        "}}",
    );
  }
  unreachable();
}

/** A JSON string literal, self-contained (the abort path must not depend on json-as being initialized). */
function jsonString(s: string): string {
  let out = '"';
  for (let i = 0, n = min(s.length, 1000); i < n; i++) {
    const c = s.charCodeAt(i);
    if (c == 0x22) out += '\\"';
    else if (c == 0x5c) out += "\\\\";
    else if (c < 0x20) out += "\\u00" + (c < 0x10 ? "0" : "") + c.toString(16);
    else out += String.fromCharCode(c);
  }
  return out + '"';
}
