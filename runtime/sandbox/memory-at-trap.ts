/**
 * What a trap's description adds when the guest's linear memory was near its cap. A guest that
 * cannot grow memory traps however its runtime was written (AssemblyScript's allocator executes
 * `unreachable`), so the trap alone reads "unreachable"; near the cap, the failure says where the
 * memory stood. The SDK collects its heap only between deliveries (sdk-as/assembly/collect.ts),
 * so a proxy that allocates more than its cap within one delivery ends this way.
 */

/** Memory at or above this share of the cap is mentioned. */
const NEAR_CAP = 0.75;

const MiB = 1024 * 1024;

/** `description`, with the memory's size against `maxMemoryPages` when it was near the cap. */
export function withMemoryAtTrap(description: string, memoryBytes: number | undefined, maxMemoryPages: number): string {
  const capBytes = maxMemoryPages * 64 * 1024;
  if (memoryBytes === undefined || memoryBytes < capBytes * NEAR_CAP) return description;
  return `${description} (with its linear memory at ${Math.round(memoryBytes / MiB)} of its ${Math.round(capBytes / MiB)} MiB cap: it may have run out of memory)`;
}
