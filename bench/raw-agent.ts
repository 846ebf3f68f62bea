/**
 * The benchmark's agent: a minimal raw NDJSON ACP agent, so the conductor's own cost shows (the
 * reference agent persists every turn to disk). `initialize`, `session/new`, and `session/prompt`,
 * which answers with one `agent_message_chunk` update and then `end_turn` — or, for a prompt
 * `stream N`, N chunks first (written with backpressure). Everything else: method not found.
 */
import { LineWriter, readMessages } from "./ndjson.js";

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const out = new LineWriter(process.stdout);
let sessions = 0;

const chunk = (sessionId: string, text: string) => ({
  jsonrpc: "2.0",
  method: "session/update",
  params: { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
});

async function prompt(m: Json): Promise<void> {
  const sessionId = m.params?.sessionId;
  const text: string = m.params?.prompt?.[0]?.text ?? "";
  const stream = /^stream (\d+)$/.exec(text);
  if (stream) {
    const n = Number(stream[1]);
    for (let i = 0; i < n; i++) {
      out.write(chunk(sessionId, `chunk ${i}`));
      if (i % 256 === 255) await out.drained();
    }
  } else {
    out.write(chunk(sessionId, `ok (${text.length} chars)`));
  }
  out.write({ jsonrpc: "2.0", id: m.id, result: { stopReason: "end_turn" } });
}

readMessages(process.stdin, (m: Json) => {
  if (m.id === undefined || typeof m.method !== "string") return;
  switch (m.method) {
    case "initialize":
      return out.write({
        jsonrpc: "2.0",
        id: m.id,
        result: { protocolVersion: 1, agentCapabilities: {}, agentInfo: { name: "raw-agent", version: "1" } },
      });
    case "session/new":
      return out.write({ jsonrpc: "2.0", id: m.id, result: { sessionId: `s${++sessions}` } });
    case "session/prompt":
      return void prompt(m);
    default:
      return out.write({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `method not found: ${m.method}` } });
  }
});
process.stdin.on("end", () => process.exit(0));
