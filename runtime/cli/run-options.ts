/**
 * The options `cordon run` and `cordon proxy` take, for `node:util` `parseArgs`: one table read by
 * the command line (`main.ts`) and by the early agent start (`early-agent.ts`), so both read a
 * command line the same way.
 */
import type { ParseArgsConfig } from "node:util";

export const RUN_OPTIONS = {
  config: { type: "string", short: "c" },
  proxy: { type: "string", short: "p", multiple: true },
  "proxy-cmd": { type: "string", multiple: true },
  trace: { type: "string" },
  isolation: { type: "string" },
  "initialize-timeout": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

/** `argv` split at the first `--`: Cordon's own options, and the agent command line after it. */
export function splitAgent(argv: string[]): { own: string[]; agent: string[] } {
  const split = argv.indexOf("--");
  return split === -1 ? { own: argv, agent: [] } : { own: argv.slice(0, split), agent: argv.slice(split + 1) };
}
