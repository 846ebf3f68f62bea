// The raw canonical ABI of the `cordon:proxy/proxy` world, for the UTF-16 string encoding.
// Everything that touches pointers lives in this one file; the friendly API sits on top of it.
//
// With UTF-16 the host writes code units straight into guest memory, so AssemblyScript (whose
// strings are UTF-16) never transcodes: `receive` costs one copy, `send` none.

@external("cordon:proxy/channel@0.1.0", "send")
declare function channel_send(ptr: usize, units: usize): void;

/** Hands a complete JSON text to the conductor. The host copies it before returning. */
export function send(message: string): void {
  channel_send(changetype<usize>(message), <usize>message.length);
}

let handler: ((message: string) => void) | null = null;

/** Installs the function that receives every message from the conductor. */
export function setReceiver(fn: (message: string) => void): void {
  handler = fn;
}

/** Export `cordon:proxy/handler@0.1.0#receive`: the host lowered `units` UTF-16 code units at `ptr`. */
export function cordon_receive(ptr: usize, units: usize): void {
  const message = String.UTF16.decodeUnsafe(ptr, units << 1);
  heap.free(ptr);
  const fn = handler;
  if (fn == null) unreachable();
  fn!(message);
}

/** Export `cabi_realloc`: the host allocates the argument buffer of `receive` through it. */
export function cabi_realloc(oldPtr: usize, oldSize: usize, align: usize, newSize: usize): usize {
  const size: usize = newSize == 0 ? 1 : newSize;
  if (oldPtr == 0) return heap.alloc(size);
  return heap.realloc(oldPtr, size);
}

/** Replaces the `env.abort` import: a failed assertion or a throw traps the instance. */
export function abort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  unreachable();
}
