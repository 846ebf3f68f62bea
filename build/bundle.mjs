// The start bundle: what `bin/cordon.js` loads (dist/bundle/), made from the compiled runtime by
// esbuild after tsc. Node 20's ESM loader resolves, reads and compiles each file on its own; the
// ~80 modules `cordon run` needs before it can route `initialize` took ~65 ms that way, and one
// bundle takes a fraction of it: the early agent start (one file) and the command entry (with
// chunks, importing the early start's modules from that file).
// Commands other than `run` stay lazy chunks. Packages are bundled too, except those that read
// files of their own at run time. Everything process-wide (process groups, the component cache,
// the watchdog) exists once: `bin/cordon.js` loads either the bundle or dist/runtime, never both.
import { readFileSync, writeFileSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { build } from "esbuild";

const BANNER = 'import { createRequire as __cordonRequire } from "node:module"; const require = __cordonRequire(import.meta.url);';

/**
 * The early start (bin/cordon.js loads it before anything else): one file, so the agent is spawned
 * after one module load instead of four. Its modules hold process-wide state (the process groups),
 * so the main bundle does not copy them: it imports them from this same file.
 */
const EARLY = ["cli/early-agent.js", "components/early-process.js", "components/process-group.js", "cli/run-options.js"];
const earlyFiles = new Set(EARLY.map((f) => resolvePath(`dist/runtime/${f}`)));
const fromEarly = {
  name: "from-early-start",
  setup(b) {
    b.onResolve({ filter: /^\./ }, (args) =>
      args.importer && earlyFiles.has(resolvePath(args.resolveDir, args.path)) ? { path: "./early-agent.js", external: true } : undefined,
    );
  },
};

const started = performance.now();
process.stderr.write("==> bundling the start path (esbuild) into dist/bundle/\n");
const common = { bundle: true, format: "esm", platform: "node", target: "node20", logLevel: "warning" };
const early = await build({
  ...common,
  stdin: { contents: EARLY.map((f) => `export * from "./dist/runtime/${f}";`).join("\n"), resolveDir: ".", sourcefile: "early-start.js" },
  outfile: "dist/bundle/early-agent.js",
  metafile: true,
});
const result = await build({
  ...common,
  entryPoints: { main: "dist/runtime/cli/main.js" },
  plugins: [fromEarly],
  outdir: "dist/bundle",
  splitting: true,
  // Read their own files through import.meta.url or require.resolve at run time: loaded from node_modules.
  external: ["@bytecodealliance/preview2-shim", "@bytecodealliance/jco-transpile", "assemblyscript", "binaryen"],
  // Bundled CommonJS packages call require(); ESM output has none unless given one.
  banner: { js: BANNER },
  metafile: true,
});
// A module in both bundles would exist twice at run time, its state too: it must be in EARLY.
const twice = Object.keys(early.metafile.inputs).filter((input) => input in result.metafile.inputs);
if (twice.length > 0) throw new Error(`bundled into both the early start and the command bundle (add them to EARLY): ${twice.join(", ")}`);
// Each file gets the banner, but making a `require` costs ~0.2 ms per file (measured over a start
// that loads ~20 of them): files that never call one lose it.
const BANNER_LINE = `${BANNER}\n`;
for (const file of Object.keys(result.metafile.outputs)) {
  if (!file.endsWith(".js")) continue;
  const text = readFileSync(file, "utf8");
  if (text.startsWith(BANNER_LINE) && !/\brequire\b/.test(text.slice(BANNER_LINE.length)))
    writeFileSync(file, text.slice(BANNER_LINE.length));
}
const inputs = Object.keys(result.metafile.inputs).length;
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
process.stderr.write(
  `    ${inputs} modules into ${Object.keys(result.metafile.outputs).length} files (${(bytes / 1024).toFixed(0)} KB) in ${((performance.now() - started) / 1000).toFixed(2)} s\n`,
);
