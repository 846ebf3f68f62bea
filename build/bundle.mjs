// The start bundle: what `bin/cordon.js` loads (dist/bundle/), made from the compiled runtime by
// esbuild after tsc. Node 20's ESM loader resolves, reads and compiles each file on its own; the
// ~80 modules `cordon run` needs before it can route `initialize` took ~65 ms that way, and one
// bundle (the command entry and the early agent start, sharing chunks) takes a fraction of it.
// Commands other than `run` stay lazy chunks. Packages are bundled too, except those that read
// files of their own at run time. Everything process-wide (process groups, the component cache,
// the watchdog) exists once: `bin/cordon.js` loads either the bundle or dist/runtime, never both.
import { build } from "esbuild";

const started = performance.now();
process.stderr.write("==> bundling the start path (esbuild) into dist/bundle/\n");
const result = await build({
  entryPoints: { main: "dist/runtime/cli/main.js", "early-agent": "dist/runtime/cli/early-agent.js" },
  outdir: "dist/bundle",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // Read their own files through import.meta.url or require.resolve at run time: loaded from node_modules.
  external: ["@bytecodealliance/preview2-shim", "@bytecodealliance/jco-transpile", "assemblyscript", "binaryen"],
  // Bundled CommonJS packages call require(); ESM output has none unless given one.
  banner: { js: 'import { createRequire as __cordonRequire } from "node:module"; const require = __cordonRequire(import.meta.url);' },
  metafile: true,
  logLevel: "warning",
});
const inputs = Object.keys(result.metafile.inputs).length;
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
process.stderr.write(
  `    ${inputs} modules into ${Object.keys(result.metafile.outputs).length} files (${(bytes / 1024).toFixed(0)} KB) in ${((performance.now() - started) / 1000).toFixed(2)} s\n`,
);
