/**
 * Checking a compiled core module before it becomes a component, with the runtime's own rules:
 * the WASI tables of `runtime/sandbox/wasi-grants.ts` decide which imports the SDK's Clock/Random
 * may add, and `checkCoreModule` (the check the loader applies) has the last word — so a proxy
 * that builds is a proxy that loads. Standard-library APIs that need a host Cordon does not give
 * are refused by name, with the SDK's alternative (refused-apis.ts).
 */
import { CHANNEL_IMPORT, checkCoreModule } from "../../runtime/sandbox/canonical-host.js";
import { allowedWasiImport, WASI_GRANTS } from "../../runtime/sandbox/wasi-grants.js";
import type { World } from "./compose.js";
import { BuildError, firstLine } from "./errors.js";
import { refusalText, refusedImport } from "./refused-apis.js";

/**
 * Checks the core module's imports and exports; returns the world it is for: `world` when given,
 * else `proxy-wasi` when it imports the wall clock or randomness and `proxy` otherwise.
 */
export function checkCore(name: string, core: Uint8Array, world: World | null, sources: readonly string[] = []): World {
  const module = new WebAssembly.Module(core as Uint8Array<ArrayBuffer>);
  const others = WebAssembly.Module.imports(module).filter((i) => !(i.module === CHANNEL_IMPORT && i.name === "send"));
  const wasi = others.filter((i) => i.kind === "function" && allowedWasiImport(i.module, i.name, WASI_GRANTS));
  const imports = others.filter((i) => !wasi.includes(i));
  // Standard-library APIs that need a host: named, located, with the SDK's alternative.
  const refused = [...new Set(imports.map((i) => refusedImport(`${i.module}.${i.name}`)).filter((r) => r !== undefined))];
  if (refused.length) {
    throw new BuildError(`${name}: ${refused.map((r) => refusalText(r, sources)).join("; and ")}`);
  }
  if (imports.length) {
    const list = imports.map((i) => `${i.module}.${i.name}`).join(", ");
    const hint = imports.some((i) => i.module === "env")
      ? " (Math.random, Date.now, trace and console functions need host imports Cordon does not provide; the SDK's Clock and Random give the time and randomness through WASI, with the proxy-wasi world)"
      : "";
    throw new BuildError(`${name}: the module imports ${list}, which a Cordon proxy cannot have${hint}`);
  }
  if (world === "proxy" && wasi.length) {
    const list = wasi.map((i) => `${i.module}.${i.name}`).join(", ");
    throw new BuildError(
      `${name}: the module imports ${list} (the SDK's Clock/Random), which the proxy world does not have; build it for the proxy-wasi world (--world proxy-wasi, or leave --world out)`,
    );
  }
  const used: World = world ?? (wasi.length ? "proxy-wasi" : "proxy");
  try {
    checkCoreModule(module, used === "proxy" ? [] : WASI_GRANTS);
  } catch (error) {
    throw new BuildError(`${name}: ${firstLine(error)}`);
  }
  return used;
}
