#!/usr/bin/env node
// A minimal raw-JSON ACP agent that can refuse to end, for the process-lifecycle tests.
//   --ignore-eof    keeps running after stdin ends
//   --ignore-term   ignores SIGTERM, SIGINT and SIGHUP
// initialize, session/new, session/prompt (echoes the text; the text "crash" exits with code 3
// before answering); anything else is answered "method not found".
// Records "agent <pid>" in the file $LIFECYCLE_PIDS, if set.
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const flags = new Set(process.argv.slice(2));
if (process.env.LIFECYCLE_PIDS) appendFileSync(process.env.LIFECYCLE_PIDS, `agent ${process.pid}\n`);
if (flags.has("--ignore-term")) for (const s of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(s, () => {});
if (flags.has("--ignore-eof")) setInterval(() => {}, 1 << 30);

const out = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined || msg.method === undefined) return;
  const reply = (result) => out({ jsonrpc: "2.0", id: msg.id, result });
  switch (msg.method) {
    case "initialize":
      return reply({ protocolVersion: 1, agentCapabilities: {}, authMethods: [] });
    case "session/new":
      return reply({ sessionId: "stubborn-1" });
    case "session/prompt": {
      const text = msg.params.prompt.find((b) => b.type === "text")?.text ?? "";
      if (text === "crash") process.exit(3);
      out({
        jsonrpc: "2.0",
        method: "session/update",
        params: { sessionId: msg.params.sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
      });
      return reply({ stopReason: "end_turn" });
    }
    default:
      return out({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `no ${msg.method}` } });
  }
});
lines.on("close", () => {
  if (!flags.has("--ignore-eof")) process.exit(0);
});
