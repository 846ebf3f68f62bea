#!/usr/bin/env node
// Entry point of the `cordon` command; the CLI lives in runtime/cli (compiled to dist/ by `make build`).
// `cordon run` starts its agent before anything else of Cordon loads (runtime/cli/early-agent.ts),
// so the agent boots while the conductor loads and the proxies compile.
// It loads the start bundle (dist/bundle/, build/bundle.mjs) when there is one — one file read and
// compiled instead of ~80 — else the compiled modules; never both, so process-wide state exists once.
// CORDON_BUNDLE=off loads the modules (to tell a bundling fault from a runtime one).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const bundled = process.env.CORDON_BUNDLE !== "off" && existsSync(fileURLToPath(new URL("../dist/bundle/main.js", import.meta.url)));
const from = bundled ? "../dist/bundle/" : "../dist/runtime/cli/";
const main = new URL(`${from}main.js`, import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write("cordon: not built yet — run `make build` in the repository first\n");
  process.exit(2);
}
const argv = process.argv.slice(2);
const early = argv[0] === "run" ? (await import(`${from}early-agent.js`)).startAgentFromCommandLine(argv.slice(1)) : undefined;
const { main: run } = await import(main.href);
const code = await run(argv, early);
// Exit explicitly: stdin may still be open (the client decides when to close it), and
// stdout/stderr writes to pipes and files are synchronous on Linux, so nothing is lost.
process.exit(code);
