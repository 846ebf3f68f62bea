#!/usr/bin/env node
// cordon-test-proxy: tests a built proxy (golden transcripts; in a project, also node --test).
// TypeScript in ../testing, compiled to dist/. Usage: cordon-test-proxy --help.
import { launch } from "./launch.mjs";

await launch("../testing/cli.js", "cordon-test-proxy");
