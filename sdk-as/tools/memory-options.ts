/**
 * The asc options that size a proxy's linear memory. A proxy runs once per chain, per editor
 * window, so what its guest keeps resident is paid by every user, idle or not (bench P5).
 *
 * - json-as reserves its string-cache arena (1 MiB by default) in every module, even with the cache
 *   off; `JSON_CACHE_SIZE=0` makes that arena its 128-byte minimum. An author who turns the cache
 *   on (`JSON_CACHE=true|<size>` at build time, json-as's own switch) gets json-as's sizing back.
 * - The heap is collected between deliveries (`assembly/collect.ts`), every 32 small messages, after
 *   each large one and whenever memory grew: the heap settles near what the proxy holds plus what
 *   32 deliveries leave behind (measured: `sdk-as/test/guest-memory.test.ts`).
 */

/** json-as's own reading of `JSON_CACHE`: unset, empty or one of these leaves the cache off. */
const CACHE_OFF = new Set(["", "false", "off", "no", "none", "0"]);

/** The build's `JSON_CACHE` as json-as will read it, or null when the cache is off. */
export function jsonCacheSetting(env: NodeJS.ProcessEnv = process.env): string | null {
  const raw = env.JSON_CACHE?.trim() ?? "";
  return CACHE_OFF.has(raw.toLowerCase()) ? null : raw;
}

/** The asc arguments for the memory settings above. */
export function memoryArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  const args: string[] = [];
  // With the cache on, json-as defines JSON_CACHE_SIZE itself; defining it twice fails the build.
  if (jsonCacheSetting(env) === null) args.push("--use", "JSON_CACHE_SIZE=0");
  return args;
}
