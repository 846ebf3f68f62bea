#!/usr/bin/env node
// Entry point of the `cordon` command; the CLI lives in runtime/cli (compiled to dist/ by `make build`).
// `cordon run` starts its agent before anything else of Cordon loads (runtime/cli/early-agent.ts),
// so the agent boots while the conductor loads and the proxies compile.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = new URL("../dist/runtime/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write("cordon: not built yet — run `make build` in the repository first\n");
  process.exit(2);
}
const argv = process.argv.slice(2);
const early = argv[0] === "run" ? (await import("../dist/runtime/cli/early-agent.js")).startAgentFromCommandLine(argv.slice(1)) : undefined;
const { main: run } = await import(main.href);
const code = await run(argv, early);
// Exit explicitly: stdin may still be open (the client decides when to close it), and
// stdout/stderr writes to pipes and files are synchronous on Linux, so nothing is lost.
process.exit(code);
