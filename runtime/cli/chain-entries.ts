/**
 * What the start-up path needs of chain config entries, without the schema library: `cordon run`
 * with only command-line proxies never loads zod (`chain-config.ts` is imported when a config file
 * is read).
 */
import type { NativeProxyEntry, ProxyEntry } from "./chain-config.js";

export const isNativeProxy = (p: ProxyEntry): p is NativeProxyEntry => "command" in p;
