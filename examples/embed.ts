/**
 * Embedding Cordon: drive an agent through a sandboxed proxy chain from TypeScript.
 *
 *   make embed-example        (= make build && node dist/examples/embed.js)
 *
 * Starts the chain in this process — context, redact, tool-guard and arrow as WebAssembly proxies in
 * front of Cordon's reference agent — and walks a session: typed events, tool calls correlated by
 * id, a permission policy, files lent to the agent, the text-only helper, a mode change,
 * cancellation with an AbortSignal, listing, loading, forking and deleting sessions, and a clean
 * shutdown.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect, type PromptEvent } from "@cordon/cli";

const root = fileURLToPath(new URL("../../", import.meta.url)); // the checkout (this file runs from dist/examples/)
const workspace = mkdtempSync(join(tmpdir(), "cordon-embed-"));
writeFileSync(join(workspace, "notes.txt"), "first line\n");

const cordon = await connect({
  chain: {
    proxies: [
      { name: "context", wasm: "proxies/dist/context.wasm", config: { text: "Project rules: answer briefly." } },
      { name: "redact", wasm: "proxies/dist/redact.wasm" },
      { name: "tool-guard", wasm: "proxies/dist/tool-guard.wasm", config: { deny: ["rm -rf*"] } },
      { name: "arrow", wasm: "proxies/dist/arrow.wasm" },
    ],
    agent: {
      command: process.execPath,
      args: [join(root, "bin/cordon.js"), "reference-agent"],
      env: { CORDON_AGENT_STORE: join(workspace, ".sessions") },
    },
  },
  baseDir: root, // relative wasm paths resolve here
  // Allow everything except edits; a real application would ask its user.
  permissions: ({ toolCall }) => (toolCall.kind === "edit" ? "deny" : "allow"),
  // Declared to the agent because implemented: it reads and writes files only through us.
  fs: {
    readTextFile: ({ path }) => ({ content: readFileSync(path, "utf8") }),
    writeTextFile: ({ path, content }) => writeFileSync(path, content),
  },
});
console.log(`chain: ${cordon.components.join(" → ")}`);
console.log(`agent: ${cordon.agentInfo?.name} ${cordon.agentInfo?.version}; supports fork: ${cordon.supports.forkSession}`);

const session = await cordon.newSession({ cwd: workspace });
console.log(`session ${session.id}, modes ${session.modes?.availableModes.map((m) => m.id).join("/")}\n`);

function show(event: PromptEvent): void {
  switch (event.type) {
    case "text":
      return void process.stdout.write(`  text: ${event.text}`);
    case "thought":
      return void process.stdout.write(`  thought: ${event.text}`);
    case "tool_call":
    case "tool_call_update": {
      const { call } = event;
      const details = [
        call.kind,
        call.text && JSON.stringify(call.text),
        call.diffs.length && `${call.diffs.length} diff(s)`,
        call.locations.map((l) => l.path).join(","),
      ];
      return console.log(
        `  ${event.type === "tool_call" ? "tool call" : "   update"} ${call.toolCallId} "${call.title}" ${call.status} ${details.filter(Boolean).join(" ")}`,
      );
    }
    case "permission":
      return console.log(`  permission for "${event.toolCall.title}": ${event.outcome}`);
    case "stop":
      return console.log(`  stop: ${event.stopReason}\n`);
    default:
      return console.log(`  ${event.type}`);
  }
}

console.log('prompt 1: "think …, tool …, secret, read notes.txt, edit notes.txt …"');
for await (const event of session.prompt(
  ["think planning", "tool Run tests", "secret", "read notes.txt", "edit notes.txt second line"].join("\n"),
))
  show(event);

console.log("prompt 2, text only:");
console.log(`  ${JSON.stringify(await session.prompt("hello again").text())}\n`);

await session.setMode("code");
console.log(`mode is now ${session.currentModeId}`);
try {
  await session.setMode("yolo");
} catch (error) {
  console.log(`setMode("yolo") refused before sending: ${(error as Error).message}\n`);
}

console.log('prompt 3: "wait", cancelled after 300 ms with an AbortSignal');
for await (const event of session.prompt("wait", { signal: AbortSignal.timeout(300) })) show(event);

const listed = await cordon.listSessions({ cwd: workspace });
console.log(`stored sessions in the workspace: ${listed.sessions.length}`);
const reloaded = await cordon.loadSession(session.id, { cwd: workspace });
console.log(`loaded again: ${reloaded.history.length} events replayed`);
const fork = await cordon.forkSession(session.id);
console.log(`forked into ${fork.id}; deleting the fork`);
await cordon.deleteSession(fork.id);
try {
  await fork.prompt("anyone there?").result;
} catch (error) {
  console.log(`prompting the deleted fork is refused before sending: ${(error as Error).message}\n`);
}

const exit = await cordon.close();
console.log(`closed (code ${exit.code}); the agent's process group has ended`);
