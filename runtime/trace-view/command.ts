/**
 * `cordon trace view <trace.jsonl> [-o trace.html] [--config chain.json] [--title text]`: writes
 * the trace as one self-contained HTML page (a sequence diagram; see `render.ts`). With the chain
 * config the trace was recorded with, `proxy:N` lanes are named like the proxies.
 */
import { closeSync, constants, fchmodSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { basename, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, readChainConfig } from "../cli/chain-config.js";
import { proxyNames } from "../cli/proxy-names.js";
import { buildTraceModel } from "./model.js";
import { renderTraceHtml } from "./render.js";

const TRACE_USAGE = `usage: cordon trace view <trace.jsonl> [-o trace.html] [--config chain.json] [--title text] [--page-size n]
  Writes the trace (from cordon run --trace) as one self-contained HTML file: a sequence diagram
  with a lane per participant, one arrow per message (coloured by kind; a ring where it was
  routed past a proxy that did not see it), filters by session, method and kind, and each
  message's JSON on click. --config names proxy:N lanes after the chain's proxies.
  Default output: the trace's path with .html instead of .jsonl. A page draws --page-size
  messages at once (default 2000), with earlier / later buttons beyond.
`;

export async function traceCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "-h" || sub === "--help" || sub === "help") {
    process.stdout.write(TRACE_USAGE);
    return 0;
  }
  if (sub !== "view") {
    process.stderr.write(`cordon trace: ${sub === undefined ? "missing subcommand" : `unknown subcommand "${sub}"`}\n${TRACE_USAGE}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: {
        output: { type: "string", short: "o" },
        config: { type: "string", short: "c" },
        title: { type: "string" },
        "page-size": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`cordon trace view: ${(error as Error).message}\n${TRACE_USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(TRACE_USAGE);
    return 0;
  }
  if (parsed.positionals.length !== 1) {
    process.stderr.write(`cordon trace view: give exactly one trace file\n${TRACE_USAGE}`);
    return 2;
  }
  const pageSize = parsed.values["page-size"] === undefined ? undefined : Number(parsed.values["page-size"]);
  if (pageSize !== undefined && !(Number.isSafeInteger(pageSize) && pageSize > 0)) {
    process.stderr.write(`cordon trace view: --page-size must be a positive whole number\n`);
    return 2;
  }
  const input = resolve(parsed.positionals[0]);
  const output = resolve(parsed.values.output ?? input.replace(/\.jsonl?$/, "") + ".html");
  if (output === input) {
    process.stderr.write(`cordon trace view: the output ${output} would overwrite the trace\n`);
    return 2;
  }
  let text: string;
  try {
    text = readFileSync(input, "utf8");
  } catch (error) {
    process.stderr.write(`cordon trace view: cannot read ${input}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`);
    return 1;
  }
  let names: string[] | undefined;
  if (parsed.values.config) {
    try {
      names = proxyNames((await readChainConfig(resolve(parsed.values.config))).proxies);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`cordon trace view: ${error.message}\n`);
      return 2;
    }
  }
  const model = buildTraceModel(text, { proxyNames: names });
  if (model.messages.length === 0 && model.skipped > 0) {
    process.stderr.write(
      `cordon trace view: ${input} holds no trace events (${model.skipped} unreadable line(s)); is it a cordon --trace file?\n`,
    );
    return 1;
  }
  const html = renderTraceHtml(model, { title: parsed.values.title ?? `Cordon trace — ${basename(input)}`, pageSize });
  try {
    writePrivate(output, html);
  } catch (error) {
    process.stderr.write(
      `cordon trace view: cannot write ${output}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`,
    );
    return 1;
  }
  const arrows = model.messages.filter((m) => m.kind !== "log").length;
  process.stderr.write(
    `cordon trace view: wrote ${output} (${arrows} messages, ${model.lanes.length} participants, ${model.sessions.length} session(s)${model.skipped ? `, ${model.skipped} unreadable line(s) skipped` : ""})\n`,
  );
  return 0;
}

/** The page holds whole conversations, like the trace: 0600, and never through a symbolic link. */
function writePrivate(path: string, text: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    fchmodSync(fd, 0o600);
    ftruncateSync(fd, 0);
    const buffer = Buffer.from(text, "utf8");
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(fd, buffer, offset, buffer.length - offset);
  } finally {
    closeSync(fd);
  }
}
