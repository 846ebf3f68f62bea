#!/usr/bin/env node
import { spawn, spawnSync } from "node:child_process";
// A launcher like the ones editors start agents through (`npx …`, an npm wrapper around a native
// binary): it runs the command after its options with inherited stdio and waits for it, so the
// real agent holds the same pipes. Exits with the command's code.
//   --sync   spawnSync, like codex-acp's wrapper: blocks, forwards no signal; a SIGTERM kills the
//            launcher alone and leaves the command running
//   --hold   also start a holder grandchild that inherits the pipes, never reads them, ignores
//            SIGTERM, SIGINT and SIGHUP, and lives until SIGKILLed
// Every process records "<role> <pid>" in the file $LIFECYCLE_PIDS, if set.
import { appendFileSync } from "node:fs";

function record(role) {
  if (process.env.LIFECYCLE_PIDS) appendFileSync(process.env.LIFECYCLE_PIDS, `${role} ${process.pid}\n`);
}

const args = process.argv.slice(2);
const sync = args[0] === "--sync" ? (args.shift(), true) : false;
const hold = args[0] === "--hold" ? (args.shift(), true) : false;
const [command, ...rest] = args;
record("launcher");

if (hold) {
  const holder = `
    const { appendFileSync } = require("node:fs");
    if (process.env.LIFECYCLE_PIDS) appendFileSync(process.env.LIFECYCLE_PIDS, "holder " + process.pid + "\\n");
    for (const s of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(s, () => {});
    setInterval(() => {}, 1 << 30);`;
  spawn(process.execPath, ["-e", holder], { stdio: "inherit" });
}

if (sync) {
  const result = spawnSync(command, rest, { stdio: "inherit" });
  process.exit(result.status ?? 1);
} else {
  const child = spawn(command, rest, { stdio: "inherit" });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
