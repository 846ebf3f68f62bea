#!/usr/bin/env node
// An agent that works on raw lines, for byte-fidelity tests: it never re-serialises what it got.
// Every line it receives is reported back verbatim inside a `_test/line` notification (as a JSON
// string); requests are answered with a fixed, unusually spelled text, and `_x/notify` requests
// are preceded by an unusually spelled notification.
import { createInterface } from "node:readline";

const out = (text) => process.stdout.write(text + "\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  out(JSON.stringify({ jsonrpc: "2.0", method: "_test/line", params: { line } }));
  if (!("id" in msg) || !("method" in msg)) return;
  const id = JSON.stringify(msg.id);
  if (msg.method === "initialize") {
    return out(`{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"raw-line-agent"}}}`);
  }
  if (msg.method === "_x/notify") {
    out(
      `{"jsonrpc":"2.0","method":"_x/note","params":{ "n" : 1.0, "big": 12345678901234567890, "s": "caf\\u00e9 \\/ \\ud83d\\ude00", "_meta": {"k": [ 1e2 ]} }}`,
    );
  }
  out(
    `{"jsonrpc":"2.0","id":${id},"result":{ "n" : 1.0, "big": 12345678901234567890, "s": "caf\\u00e9 \\/", "nested": {"a":[1.50, -0.0]} }}`,
  );
});
