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

@external("cordon:proxy/channel@0.1.0", "send")
declare function channel_send(ptr: usize, units: usize): void;

/** Hands one complete JSON text to the conductor. The host copies it before returning. */
export function send(message: string): void {
  channel_send(changetype<usize>(message), <usize>message.length);
}

let handler: ((message: string) => void) | null = null;

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
  fn(message);
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

/** Replaces the `env.abort` import: a failed assertion or a throw traps the instance. */
export function abort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  unreachable();
}
