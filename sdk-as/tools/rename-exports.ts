/**
 * asc transform: gives the core module the export names the component model expects.
 * AssemblyScript cannot spell `cordon:proxy/handler@0.1.0#receive`, so the SDK exports
 * `cordon_receive` and this renames it after compilation; everything the world does not define
 * (stray author exports) is dropped so `componentNew` sees exactly the world.
 */
import { Transform } from "assemblyscript/transform";

const RENAMES = new Map([["cordon_receive", "cordon:proxy/handler@0.1.0#receive"]]);
const KEEP = new Set(["memory", "cabi_realloc"]);

export class RenameExports extends Transform {
  // binaryen's module type is not part of asc's public typings.
  // biome-ignore lint/suspicious/noExplicitAny: see above
  afterCompile(module: any): void {
    // biome-ignore lint/suspicious/noExplicitAny: see above
    const binaryen = (this as unknown as { binaryen: any }).binaryen;
    const exports: { name: string; kind: number; value: string }[] = [];
    for (let i = 0, n = module.getNumExports(); i < n; i++) exports.push(binaryen.getExportInfo(module.getExportByIndex(i)));
    for (const name of RENAMES.keys()) {
      if (!exports.some((info) => info.name === name)) {
        throw new Error(`the module does not export ${name}: re-export it from @cordon/sdk-as/assembly/abi (the build tool's entry does)`);
      }
    }
    for (const info of exports) {
      if (KEEP.has(info.name)) continue;
      module.removeExport(info.name);
      const target = RENAMES.get(info.name);
      if (target && info.kind === binaryen.ExternalFunction) module.addFunctionExport(info.value, target);
    }
  }
}
