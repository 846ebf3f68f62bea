#!/usr/bin/env node
// A raw-JSON ACP agent for wire-level tests: it never parses messages into a typed model, so the
// tests can check exactly what reached the agent and send exactly what they want back.
//
// - initialize → {protocolVersion: 1, agentCapabilities: $SCRIPTED_CAPS or {}, agentInfo, _meta}
// - session/new → {sessionId: "sess-<n>", _meta: {received: <params as received>}}, after a
//   session/update for the new id per entry of $SCRIPTED_SETUP_UPDATES (a JSON array of updates)
// - session/prompt: the first text block is a JSON array of steps, run in order:
//     {"send": <message>}            write a raw notification/request to the client
//     {"ask": <request sans id>}     send a request, wait for its answer, then go on
//     {"reply": <result>}            answer the prompt with this result (default {"stopReason":"end_turn"})
//     {"fail": {code, message, data}} answer the prompt with this error
//     {"waitCancel": true}           hold until session/cancel, then answer {"stopReason":"cancelled"}
//     {"exit": code}                 exit the process with this code
//     {"report": true}               send `_test/answers` with every answer to "ask" received so far
//     {"reflectPrompt": true}        send `_test/prompt` with the session/prompt params as received
//     {"pid": true}                  send `_test/pid` with this process's pid
// - any other request → {"echo": <the whole message as received, id removed>}
// - any notification other than session/cancel → `_test/seen` notification carrying it back
import { createInterface } from "node:readline";

const out = (m) => process.stdout.write(JSON.stringify(m) + "\n");
let sessions = 0;
let nextId = 1;
const waiting = new Map();
const answers = [];
const cancelWaiters = new Map();

async function runPrompt(msg) {
  const first = msg.params?.prompt?.find((b) => b.type === "text");
  let steps;
  try {
    steps = JSON.parse(first?.text ?? "[]");
  } catch {
    steps = [
      {
        send: {
          jsonrpc: "2.0",
          method: "session/update",
          params: {
            sessionId: msg.params.sessionId,
            update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `echo: ${first?.text ?? ""}` } },
          },
        },
      },
    ];
  }
  let result = { stopReason: "end_turn" };
  for (const step of steps) {
    if (step.send) out(step.send);
    else if (step.ask) {
      const id = `a${nextId++}`;
      const answer = await new Promise((resolve) => {
        waiting.set(id, resolve);
        out({ ...step.ask, jsonrpc: "2.0", id });
      });
      answers.push(answer);
    } else if (step.report) out({ jsonrpc: "2.0", method: "_test/answers", params: { answers } });
    else if (step.pid) out({ jsonrpc: "2.0", method: "_test/pid", params: { pid: process.pid } });
    else if (step.reflectPrompt) out({ jsonrpc: "2.0", method: "_test/prompt", params: { received: msg.params } });
    else if (step.reply) result = step.reply;
    else if (step.fail) return out({ jsonrpc: "2.0", id: msg.id, error: step.fail });
    else if (step.waitCancel) {
      await new Promise((resolve) => cancelWaiters.set(msg.params.sessionId, resolve));
      result = { stopReason: "cancelled" };
    } else if ("exit" in step) {
      process.stderr.write(`scripted agent exiting with ${step.exit} as asked\n`);
      process.exit(step.exit);
    }
  }
  out({ jsonrpc: "2.0", id: msg.id, result });
}

createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (!("method" in msg)) {
    const resolve = waiting.get(msg.id);
    waiting.delete(msg.id);
    resolve?.(msg);
    return;
  }
  if (!("id" in msg)) {
    if (msg.method === "session/cancel") cancelWaiters.get(msg.params?.sessionId)?.();
    else out({ jsonrpc: "2.0", method: "_test/seen", params: { message: msg } });
    return;
  }
  switch (msg.method) {
    case "initialize":
      return out({
        jsonrpc: "2.0",
        id: msg.id,
        result: {
          protocolVersion: 1,
          agentCapabilities: JSON.parse(process.env.SCRIPTED_CAPS ?? "{}"),
          agentInfo: { name: "scripted-agent", version: "1.0.0" },
          _meta: { "test/received": msg.params },
        },
      });
    case "session/new": {
      const sessionId = `sess-${++sessions}`;
      // $SCRIPTED_SETUP_UPDATES: updates sent for the new session before the answer names it.
      for (const update of JSON.parse(process.env.SCRIPTED_SETUP_UPDATES ?? "[]"))
        out({ jsonrpc: "2.0", method: "session/update", params: { sessionId, update } });
      return out({ jsonrpc: "2.0", id: msg.id, result: { sessionId, _meta: { received: msg.params } } });
    }
    case "session/prompt":
      return void runPrompt(msg);
    default: {
      const { id, ...rest } = msg;
      return out({ jsonrpc: "2.0", id, result: { echo: rest } });
    }
  }
});
