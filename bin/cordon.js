#!/usr/bin/env node
// Entry point of the `cordon` command; the CLI lives in runtime/cli (compiled to dist/ by `make build`).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = new URL("../dist/runtime/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write("cordon: not built yet — run `make build` in the repository first\n");
  process.exit(2);
}
const { main: run } = await import(main.href);
const code = await run(process.argv.slice(2));
// Exit explicitly: stdin may still be open (the client decides when to close it), and
// stdout/stderr writes to pipes and files are synchronous on Linux, so nothing is lost.
process.exit(code);
