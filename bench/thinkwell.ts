/**
 * `@thinkwell/conductor` 0.5.7 on this process's stdio, for the benchmark (the package has no
 * command of its own): `node thinkwell.js [proxy command]... -- <agent command>`, each command one
 * string. The conductor spawns every proxy and the agent as processes.
 */
import { type ComponentConnection, type ComponentConnector, Conductor, fromCommands } from "@thinkwell/conductor";
import { readLines } from "./ndjson.js";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const commands = [...argv.slice(0, split), argv.slice(split + 1).join(" ")];

/** The client side: this process's stdin and stdout. */
const stdioClient: ComponentConnector = {
  async connect(): Promise<ComponentConnection> {
    const queue: unknown[] = [];
    let wake: (() => void) | null = null;
    let ended = false;
    readLines(process.stdin, (line) => {
      if (!line.trim()) return;
      queue.push(JSON.parse(line));
      wake?.();
    });
    process.stdin.on("end", () => {
      ended = true;
      wake?.();
    });
    return {
      send: (message) => void process.stdout.write(JSON.stringify(message) + "\n"),
      messages: {
        async *[Symbol.asyncIterator]() {
          for (;;) {
            while (queue.length > 0) yield queue.shift() as never;
            if (ended) return;
            await new Promise<void>((resolve) => (wake = resolve));
            wake = null;
          }
        },
      },
      close: async () => {},
    };
  },
};

const conductor = new Conductor({ instantiator: fromCommands(commands), mcpBridgeMode: "disabled" });
process.stdin.on("end", () => void conductor.shutdown().then(() => process.exit(0)));
await conductor.connect(stdioClient);
