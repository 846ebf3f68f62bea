/**
 * Compiling an author's AssemblyScript into the core module: asc in process, in memory (-O3,
 * the minimal runtime, the SDK's trapping abort, json-as and the export-rename transforms), on the
 * generated entry module. `@cordon/sdk-as` resolves through node_modules; where it is not
 * installed, the SDK this tool belongs to is served instead, so the ABI and the tool always match.
 */
import { realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { checkCore } from "./check.js";
import { ABI_MODULE, ENTRY_SUFFIX, entrySource, findSdkRoot, findWasiWit, findWit, SDK_PACKAGE, type World } from "./compose.js";
import { BuildError } from "./errors.js";
import { memoryArgs } from "./memory-options.js";
import { bindingsHint, functionCollector, refusalText, refusedFunctions } from "./refused-apis.js";
import { RenameExports } from "./rename-exports.js";

const require = createRequire(import.meta.url);

/** Directory that holds the node_modules packages the tool itself resolves (json-as). */
function packagesDirOf(pkg: string): string {
  return path.dirname(path.dirname(require.resolve(`${pkg}/package.json`)));
}

export interface CompiledCore {
  core: Uint8Array;
  /** Every file asc read (for the up-to-date check), sorted. */
  files: string[];
  /** asc's diagnostics text. */
  diagnostics: string;
  world: World;
}

type Asc = typeof import("assemblyscript/asc");
let asc: Asc | null = null;

export async function compileCore(entry: string, { world = null }: { world?: World | null } = {}): Promise<CompiledCore> {
  entry = path.resolve(entry);
  const name = path.basename(entry, ".ts");
  const witFile = findWit();
  const sdkRoot = findSdkRoot();
  asc ??= await import("assemblyscript/asc");

  const virtualEntry = path.join(path.dirname(entry), `${name}${ENTRY_SUFFIX}`);
  const baseDir = process.cwd();
  const read = new Set([entry, witFile]);
  const outputs = new Map<string, Uint8Array>();
  const sdkMarker = `${path.sep}node_modules${path.sep}${SDK_PACKAGE.replace("/", path.sep)}${path.sep}`;

  const readFileHook = async (filename: string, dir: string): Promise<string | null> => {
    const file = path.resolve(dir, filename);
    if (file === virtualEntry) return entrySource(entry);
    try {
      const text = await readFile(file, "utf8");
      read.add(realpathSync(file));
      return text;
    } catch {
      const at = file.lastIndexOf(sdkMarker);
      if (at < 0) return null;
      const inside = path.join(sdkRoot, file.slice(at + sdkMarker.length));
      try {
        const text = await readFile(inside, "utf8");
        read.add(realpathSync(inside));
        return text;
      } catch {
        return null;
      }
    }
  };

  const compiled = new Set<string>(); // refused standard-library functions asc compiled in
  const stderr = asc.createMemoryStream();
  const stdout = asc.createMemoryStream();
  const args = [
    path.relative(baseDir, virtualEntry),
    "--outFile",
    "proxy.core.wasm",
    "-O3",
    // The collector that runs only when called, between deliveries (assembly/collect.ts): no shadow
    // stack, write barriers or zero-filling of new objects, which the incremental one paid for.
    "--runtime",
    "minimal",
    // Fixed-width SIMD (WebAssembly 2.0): the SDK skips long strings 64 code units at a time
    // (assembly/string-scan.ts). Cordon's fuel pass meters its instructions like any other.
    "--enable",
    "simd",
    "--use",
    `abort=~lib/${ABI_MODULE}/abort`,
    ...memoryArgs(),
    "--transform",
    require.resolve("json-as"),
    "--disableWarning",
    "201",
    "--path",
    packagesDirOf("json-as"),
    "--noColors",
  ];
  const result = await asc.main(args, {
    stdout,
    stderr,
    readFile: readFileHook,
    writeFile: (file: string, contents: Uint8Array) => void outputs.set(path.basename(file), contents),
    listFiles: () => [],
    transforms: [RenameExports, functionCollector(compiled)],
  } as unknown as Parameters<Asc["main"]>[1]);
  const diagnostics = stderr.toString().trim();
  if (result.error) {
    throw new BuildError(`${name}: AssemblyScript compilation failed (${result.error.message})${bindingsHint(diagnostics)}`, diagnostics);
  }
  const core = outputs.get("proxy.core.wasm");
  if (!core) throw new BuildError(`${name}: asc produced no output`, diagnostics);
  // The author's own files (not the SDK's, not a package's), where a refused API is looked for.
  const sources = [...read].filter(
    (f) => f.endsWith(".ts") && !f.startsWith(sdkRoot + path.sep) && !f.includes(`${path.sep}node_modules${path.sep}`),
  );
  const refused = refusedFunctions(compiled);
  if (refused.length) throw new BuildError(`${name}: ${refused.map((r) => refusalText(r, sources)).join("; and ")}`);
  const used = checkCore(name, core, world, sources);
  if (used === "proxy-wasi") read.add(realpathSync(findWasiWit()));
  return { core, files: [...read].sort(), diagnostics, world: used };
}
