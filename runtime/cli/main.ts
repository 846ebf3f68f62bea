/** The `cordon` command line. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { packagePath } from "../package-root.js";
import type { ProxyEntry } from "./chain-config.js";
import { parseCommandLine } from "./command-line.js";
import type { EarlyStart } from "./early-agent.js";
import { RUN_OPTIONS, splitAgent } from "./run-options.js";

const USAGE = `Cordon — an ACP conductor whose proxies are sandboxed WebAssembly components.

Usage:
  cordon run [--config chain.json] [--proxy p.wasm | --proxy-cmd "cmd args"]... [-- <agent command> [args...]]
      Speak ACP on stdin/stdout (launch it wherever an editor launches an agent). Proxies from
      the config come first, then each --proxy / --proxy-cmd in the order given; the agent
      after -- replaces the config's. --proxy-cmd runs a trusted native proxy (outside the sandbox).
  cordon proxy [--config chain.json] [--proxy p.wasm | --proxy-cmd "cmd args"]...
      Be a proxy in another conductor's chain (expects proxy/initialize): runs its own proxies
      and hands their successor traffic back to the parent, so conductors nest.

  Both take --trace <file.jsonl>: every message at every hop, in the Rust conductor's trace format,
  and --isolation thread|worker: where WASM proxies run unless their config entry says (default
  thread: in Cordon's thread with fuel metering; worker: a worker thread each; env CORDON_ISOLATION).
  cordon run also takes --initialize-timeout <ms>: how long the agent has to answer initialize
  before the client gets an error naming it (default 60000; env CORDON_INITIALIZE_TIMEOUT_MS).
  cordon new <name> [--sdk <spec | sdk.tgz>] [--no-install]
      Scaffold a proxy project in ./<name> (AssemblyScript source, manifest, a unit test, a golden
      transcript, README) and npm install it; then npm run build && npm test.
  cordon build [<entry.ts> [-o out.wasm] | --all <dir>] [--world proxy|proxy-wasi] [--force]
      Build a proxy into a component (no entry: the project's, from package.json "cordon").
  cordon test [<proxy.wasm> <transcript.jsonl>...]
      Replay golden transcripts against a built proxy; in a project: build, transcripts, node --test.
      build and test run the proxy SDK's tools: the project's @cordon/sdk-as (cordon new adds it).
  cordon inspect <proxy.wasm> [--json]
      Show a proxy's manifest, imports, exports, string encoding, memory and SHA-256.
  cordon check <chain.json> [--isolation thread|worker] [--json]
      Validate a chain config and load every proxy (pins, manifests, config schemas), then print
      the chain (names, hashes, grants, limits, isolation) without starting the agent.
  cordon pack [<project dir>] [--no-build]
      Build a proxy project and write its publishable npm tarball (then: npm publish <tarball>).
  cordon add <spec> [--name N] [--grant G]... [--config chain.json] [--registry URL]
      Add a proxy package (npm name@range) to the chain: fetch, verify, show what it asks for,
      grant per grant (a terminal prompt, or --grant); writes the entry and chain.lock.json.
  cordon install [--config chain.json] [--offline] [--frozen]
      Put exactly what the lock pins into the local store (--frozen, the default under CI: the
      config and lock must agree; --offline: the store only).
  cordon update [<name>...] [--grant G]... [--dry-run] [--json] [--config chain.json]
      Move package entries to the newest version their spec allows; a version asking for more
      is not applied (exit 3) until approved with --grant.
  cordon remove <name> [--config chain.json]      Drop a proxy from the chain and the lock.
  cordon info <spec> [--json]                     Show a package's manifest, grants and versions.
      Exit codes of these: 0 done, 1 refused or unreachable (nothing written), 2 usage, 3 approval needed.
  cordon trace view <trace.jsonl> [-o trace.html] [--config chain.json]
      Write a trace as one self-contained HTML sequence diagram (lanes, arrows, session filter).
  cordon demo
      Run a real client session through the example chain (context, redact, tool-guard, arrow)
      in front of the reference agent, and print what each proxy did.
  cordon reference-agent [--mcp acp,http]
      The deterministic reference ACP agent (no LLM), on stdin/stdout.
  cordon mcp-bridge --port <port> --endpoint <id>
      (Internal) the stdio MCP server Cordon gives an agent without MCP-over-ACP or HTTP MCP
      support; it relays to the conductor that launched the agent.

Options:
  -h, --help       show this help
  -v, --version    print the version

Logs go to stderr (level: CORDON_LOG=error|warn|info|debug); stdout carries only ACP.
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(packagePath("package.json"), "utf8")) as { version: string };
  return pkg.version;
}

/** `early`: what the entry already started for `cordon run` (`bin/cordon.js`); without it `run` starts the agent itself. */
export async function main(argv: string[], early?: EarlyStart): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case "-h":
    case "--help":
    case "help":
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    case "-v":
    case "--version":
      process.stdout.write(`cordon ${version()}\n`);
      return 0;
    case "run":
      return runCommand("agent", rest, early);
    case "proxy":
      return runCommand("proxy", rest);
    case "new": {
      const { newProject } = await import("./new.js");
      return newProject(rest);
    }
    case "build": {
      const { build } = await import("./build.js");
      return build(rest);
    }
    case "test": {
      const { testProxy } = await import("./test-proxy.js");
      return testProxy(rest);
    }
    case "inspect": {
      const { inspect } = await import("./inspect.js");
      return inspect(
        rest.find((a) => !a.startsWith("--")),
        rest.includes("--json"),
      );
    }
    case "check": {
      const { check } = await import("./check.js");
      return check(rest);
    }
    case "pack":
    case "add":
    case "install":
    case "update":
    case "remove":
    case "info": {
      const commands = {
        pack: async () => (await import("./pack.js")).pack,
        add: async () => (await import("./add.js")).add,
        install: async () => (await import("./install.js")).install,
        update: async () => (await import("./update.js")).update,
        remove: async () => (await import("./remove.js")).remove,
        info: async () => (await import("./info.js")).info,
      };
      return (await commands[command]())(rest);
    }
    case "trace": {
      const { traceCommand } = await import("../trace-view/command.js");
      return traceCommand(rest);
    }
    case "demo": {
      const { demo } = await import("./demo.js");
      return demo();
    }
    case "reference-agent": {
      const { referenceAgentCommand } = await import("./reference-agent.js");
      return referenceAgentCommand(rest);
    }
    case "mcp-bridge": {
      const { runBridgeCommand } = await import("../mcp/bridge-command.js");
      return runBridgeCommand(rest);
    }
    default:
      process.stderr.write(`cordon: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

async function runCommand(mode: "agent" | "proxy", argv: string[], prestarted?: EarlyStart): Promise<number> {
  try {
    return await runChain(mode, argv, prestarted);
  } finally {
    await prestarted?.agent?.discard(); // only if nothing adopted it: a usage error, or Cordon stopped before starting the chain
  }
}

async function runChain(mode: "agent" | "proxy", argv: string[], prestarted?: EarlyStart): Promise<number> {
  const { own, agent } = splitAgent(argv);
  const name = mode === "agent" ? "cordon run" : "cordon proxy";
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
      options: RUN_OPTIONS,
      strict: true,
      allowPositionals: false,
      tokens: true,
    });
  } catch (error) {
    process.stderr.write(`${name}: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  // The chain order is the order of the --proxy and --proxy-cmd flags, so read the tokens in order.
  const proxies: ProxyEntry[] = [];
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== "option" || token.value === undefined) continue;
    if (token.name === "proxy") proxies.push({ wasm: resolve(token.value), grants: [] });
    else if (token.name === "proxy-cmd") {
      try {
        const { command, args, env } = parseCommandLine(token.value);
        proxies.push({ name: token.value, command, args, env, trusted: true });
      } catch (error) {
        process.stderr.write(`${name}: --proxy-cmd: ${(error as Error).message}\n`);
        return 2;
      }
    }
  }
  const isolation = parsed.values.isolation;
  if (isolation !== undefined && isolation !== "thread" && isolation !== "worker") {
    process.stderr.write(`${name}: --isolation must be thread or worker, not ${JSON.stringify(isolation)}\n`);
    return 2;
  }
  let initializeTimeoutMs: number | undefined;
  if (mode === "agent") {
    const { initializeTimeoutMs: timeout } = await import("../components/initialize-watch.js");
    try {
      initializeTimeoutMs = timeout(parsed.values["initialize-timeout"]);
    } catch (error) {
      process.stderr.write(`${name}: --initialize-timeout: ${(error as Error).message}\n`);
      return 2;
    }
  }
  // The agent boots while the conductor loads and the proxies compile, not after (early-agent.ts).
  const early =
    prestarted?.agent ??
    (mode === "agent" && !prestarted ? (await import("./early-agent.js")).startAgentEarly(agent, parsed.values.config) : undefined);
  try {
    const { run } = await import("./run.js");
    const trace = parsed.values.trace === undefined ? undefined : resolve(parsed.values.trace); // errors name the resolved path
    return await run({ mode, config: parsed.values.config, proxies, agent, trace, isolation, initializeTimeoutMs, early });
  } finally {
    await early?.discard(); // only if nothing adopted it: Cordon stopped before starting the chain
  }
}
