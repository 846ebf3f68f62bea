#!/usr/bin/env node
// cordon-build-proxy: AssemblyScript proxy source → WebAssembly component (the SDK's build tool;
// TypeScript in this directory, compiled to dist/). Usage: cordon-build-proxy --help.
import { launch } from "./launch.mjs";

await launch("cli.js", "cordon-build-proxy");
