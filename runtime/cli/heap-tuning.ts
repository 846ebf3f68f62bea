/**
 * V8's garbage collector, set for a conductor's heap: ~10 MiB that lives as long as the chain
 * (peers, rules, the proxies' hosts) and a high rate of messages that die within a hop.
 *
 * V8 starts incremental marking, which ends in a major GC, once the old generation's room below its
 * limit is smaller than the young generation. A stream or a large prompt grows the young generation
 * to its maximum (two 16 MiB semi-spaces) while the old one stays near 10 MiB under a ~25 MiB
 * limit, so that room (~15 MiB) is always "too small" and every young-generation GC turns into
 * marking and compacting the whole heap, on the platform's worker threads. Measured on issue 20's
 * P3 (100 KB prompts through `context.wasm`, 1,500 of them): 22 major GCs, one every ~100 ms, against
 * 2 through no proxy, and 300–470 µs of CPU per prompt on V8's worker threads against 60–90.
 *
 * Starting marking at 80 % of the old generation's limit instead, and at once past 95 %, leaves major
 * GCs to that generation's own growth: 5 in the same run, ~250 µs per prompt on the worker threads,
 * and 230–270 µs less CPU per prompt in all (two sets of interleaved pairs); streaming through three
 * proxies moved within noise. V8 reads both flags each time it decides, so setting them once the
 * process runs takes effect.
 *
 * Memory outside V8's heap (a `Buffer`'s bytes) allocated since the last major GC counts toward the
 * same limit, so the hot paths keep such buffers instead of making one per message
 * (protocol/line-buffer.ts: a `Buffer.concat` per 100 KB prompt still brought a major GC every ~60
 * prompts under these flags).
 *
 * Only `cordon run` and `cordon proxy` set them: an embedding's process and its heap are its
 * owner's. `CORDON_V8_TUNING=off` leaves V8's own heuristic.
 */
import { setFlagsFromString } from "node:v8";

export const HEAP_FLAGS = "--incremental-marking-soft-trigger=80 --incremental-marking-hard-trigger=95";

/** Sets `HEAP_FLAGS` for this process unless `CORDON_V8_TUNING=off`; returns what it set, or null. */
export function tuneHeap(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.CORDON_V8_TUNING === "off") return null;
  setFlagsFromString(HEAP_FLAGS);
  return HEAP_FLAGS;
}
