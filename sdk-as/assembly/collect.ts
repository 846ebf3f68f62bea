// When a proxy's heap is collected. The SDK builds with AssemblyScript's minimal runtime
// (`--runtime minimal`, sdk-as/tools/compile.ts): a two-colour mark & sweep collector that runs
// only when called. The incremental runtime it replaces collected by itself while the guest ran,
// and paid for that everywhere: a shadow stack written at every call that holds a reference, a
// write barrier at every reference stored, a zero-fill of every object allocated (300 KB for a
// 100 KB prompt), and collection steps inside allocations.
//
// The price of the minimal runtime is where it may run: it cannot see references held on the
// WebAssembly stack, so it runs only where there are none, between deliveries: at the end of the
// outermost `receive` (one entered from inside another, which no host does today, never collects).
// It runs there
// - once enough work was delivered since the last collection, a unit of work being one delivery or
//   256 code units of message (a 100 KB prompt is ~600 units: collected at once, so its string is
//   free again for the next one). Enough is 32 units while the heap is at most 1 MiB, 8 up to
//   16 MiB and 1 past that: a collection costs ~1.8 µs (it marks everything the proxy holds), which
//   32 streamed chunks share, while a proxy whose heap has grown pays for it in memory, which
//   wasm never gives back;
// - and whenever linear memory grew during the delivery.
// So the heap holds what the proxy keeps plus what at most 32 deliveries left behind (8 past
// 1 MiB, one past 16 MiB), and a single delivery's own garbage until it ends, as before (the
// incremental collector grew memory as much for a large message; sdk-as/test/collect.test.ts).
// Cost, a pass-through's `receive` of a streamed chunk (bench/guest-fuel.ts, unmetered): 1.34 µs
// with the incremental runtime, 0.89–0.92 µs this way (1.06–1.11 µs collecting every 8).

/** 64 KiB pages: up to 1 MiB, a collection every 32 units of work; up to 16 MiB, every 8; then every one. */
const SMALL_HEAP: i32 = 16;
const LARGE_HEAP: i32 = 256;

let depth: u32 = 0;
let work: u32 = 0;
let pagesAtCollection: i32 = memory.size();

/** A `receive` begins. */
export function deliveryBegins(): void {
  depth++;
}

/** A `receive` of `units` code units returns: collects when it is the outermost and it is time. */
export function deliveryEnds(units: usize): void {
  if (--depth != 0) return;
  work += 1 + <u32>(units >> 8);
  const pages = memory.size();
  const enough: u32 = pages <= SMALL_HEAP ? 32 : pages <= LARGE_HEAP ? 8 : 1;
  if (work < enough && pages == pagesAtCollection) return;
  work = 0;
  __collect();
  pagesAtCollection = memory.size();
}
