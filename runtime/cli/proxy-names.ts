/** The names proxies go by in a chain (logs, errors, `cordon check`, the trace viewer's lanes). */
import { basename } from "node:path";
import type { ProxyEntry } from "./chain-config.js";
import { isNativeProxy } from "./chain-entries.js";

/** The configured name, else the file or command's base name; repeats get `#2`, `#3`… (as `cordon run` names them). */
export function proxyNames(entries: ProxyEntry[]): string[] {
  const seen = new Map<string, number>();
  return entries.map((entry) => {
    const base = entry.name ?? (isNativeProxy(entry) ? basename(entry.command) : basename(entry.wasm).replace(/\.wasm$/, ""));
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base}#${n}`;
  });
}
