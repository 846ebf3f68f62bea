/**
 * Caps a guest's linear memory by rewriting its core module: the memory section's maximum is
 * lowered to the cap (added when absent), so `memory.grow` past it fails inside the guest.
 * The rewrite itself, and the table caps that go with it, live in `module-caps.ts`; this is the
 * memory-only entry point (benchmarks, and callers that only care about memory).
 */
import { capModule, ModuleCapError } from "./module-caps.js";

export { PAGE_BYTES, readMemoryLimits } from "./module-caps.js";
export { ModuleCapError as MemoryCapError };

/** Returns a copy of `module` whose memory may not grow past `maxPages` (non-function imports are refused). */
export function capMemory(module: Uint8Array, maxPages: number): Uint8Array {
  return capModule(module, { maxMemoryPages: maxPages });
}
