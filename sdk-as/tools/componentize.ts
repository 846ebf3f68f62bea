/** Wrapping a core module into a component of the cordon:proxy world, or the SDK's proxy-wasi (utf16 strings). */
import { type World, witSourceFor } from "./compose.js";
import { BuildError, firstLine } from "./errors.js";

let wasmTools: typeof import("@bytecodealliance/jco-transpile/wasm-tools") | null = null;

export async function componentize(name: string, core: Uint8Array, world: World = "proxy"): Promise<Uint8Array> {
  wasmTools ??= await import("@bytecodealliance/jco-transpile/wasm-tools");
  try {
    const embedded = await wasmTools.componentEmbed({ binary: core, witSource: witSourceFor(world), world, stringEncoding: "utf16" });
    return await wasmTools.componentNew(embedded, []);
  } catch (error) {
    throw new BuildError(
      `${name}: could not make a component for the ${world === "proxy" ? "cordon:proxy" : `SDK's ${world}`} world: ${firstLine(error)}`,
    );
  }
}
