/**
 * `cordon demo` (what `make run` runs): a real ACP client session — the official SDK client, as an
 * editor would use it — through `cordon run` with the example chain in front of the reference
 * agent, printed as a transcript that says what each proxy did.
 */
import { type ClientEvent, SpawnedAgent } from "../client/spawned-agent.js";
import { packagePath } from "../package-root.js";

const root = packagePath();
const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s: string) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);

const STEPS: { prompt: string; explain: string }[] = [
  {
    prompt: "hello from the demo",
    explain: "context prepends the project rules to the prompt (the agent echoes every block it got); arrow prefixes '>' to each message",
  },
  { prompt: "secret", explain: "the agent emits a fake API key; redact masks it before the client sees it" },
  { prompt: "think checking the build\ntool Run tests", explain: "thoughts and a tool call with its updates pass through unchanged" },
  { prompt: "permission Delete build cache", explain: "tool-guard finds no deny pattern, so the client is asked (and allows)" },
  { prompt: "permission rm -rf /", explain: "tool-guard matches 'rm -rf*' and rejects on the user's behalf: the client is never asked" },
  {
    prompt: 'use tool workspace::recall {"query":"secret"}',
    explain:
      "the agent calls an MCP tool that the workspace-tools proxy serves from inside its sandbox (bridged to the agent over stdio): recall searches this session's earlier turns",
  },
];

let contextShown = false;

function describeEvent(event: ClientEvent): string | null {
  if (event.kind === "permission") {
    const outcome = event.response.outcome;
    const answer = outcome.outcome === "selected" ? `selected "${outcome.optionId}"` : "cancelled";
    return `  ${bold("client asked")}: "${event.request.toolCall.title ?? event.request.toolCall.toolCallId}" → ${answer}`;
  }
  const u = event.notification.update;
  switch (u.sessionUpdate) {
    case "agent_message_chunk": {
      if (u.content.type !== "text") return `  agent: [${u.content.type}]`;
      const text = u.content.text.trimEnd();
      if (text.includes("Project rules")) {
        if (contextShown) return dim("  agent: >echo: Project rules… (context's block, echoed again)");
        contextShown = true;
      }
      return `  agent: ${text.replace(/\n/g, "\n         ")}`;
    }
    case "agent_thought_chunk":
      return u.content.type === "text" ? dim(`  thought: ${u.content.text.trimEnd()}`) : null;
    case "tool_call":
      return `  tool call: ${u.title} (${u.status ?? "pending"})`;
    case "tool_call_update": {
      const text = (u.content ?? [])
        .flatMap((c) => (c.type === "content" && c.content.type === "text" ? [c.content.text.trimEnd()] : []))
        .join(" | ");
      return `  tool update: ${u.toolCallId} → ${u.status ?? "…"}${text && u.status === "completed" ? `: ${text.replace(/\n/g, "\n         ")}` : ""}`;
    }
    default:
      return dim(`  ${u.sessionUpdate}`);
  }
}

export async function demo(): Promise<number> {
  const config = packagePath("examples", "demo-chain.json");
  const cordon = packagePath("bin", "cordon.js");
  const args = [cordon, "run", "--config", config, "--", process.execPath, cordon, "reference-agent"];
  console.log(bold("Cordon demo: an ACP session through five WebAssembly proxies"));
  console.log(
    `chain: client → context → redact → tool-guard → workspace-tools → arrow → reference agent   (${dim("examples/demo-chain.json")})`,
  );
  console.log(dim(`$ cordon run --config examples/demo-chain.json -- cordon reference-agent\n`));
  const proxyLogs: string[] = [];
  const agent = new SpawnedAgent({
    command: process.execPath,
    args,
    onEvent: (event) => {
      const line = describeEvent(event);
      if (line) console.log(line);
    },
    onStderr: (chunk) => {
      for (const line of chunk.split("\n")) if (line.includes('proxy "')) proxyLogs.push(line);
    },
  });
  try {
    const started = Date.now();
    const init = await agent.initialize({ fs: { readTextFile: false, writeTextFile: false }, terminal: false });
    console.log(
      `initialize → ${init.agentInfo?.name ?? "agent"} ${init.agentInfo?.version ?? ""} (chain up in ${Date.now() - started} ms)`,
    );
    const session = await agent.newSession(root);
    console.log(`session/new → ${session}\n`);
    for (const [i, step] of STEPS.entries()) {
      console.log(`${bold(`[${i + 1}] prompt:`)} ${JSON.stringify(step.prompt)}`);
      console.log(dim(`    ${step.explain}`));
      const logsBefore = proxyLogs.length;
      const response = await agent.prompt(session, step.prompt);
      await new Promise((r) => setTimeout(r, 20)); // let proxy logs on stderr catch up
      for (const line of proxyLogs.slice(logsBefore)) console.log(dim(`  log ${line.replace(/^\[cordon\]\s*/, "")}`));
      console.log(`  → stopReason: ${response.stopReason}\n`);
    }
    console.log(`${bold(`[${STEPS.length + 1}] prompt:`)} "wait", then session/cancel`);
    const waiting = agent.prompt(session, "wait");
    await new Promise((r) => setTimeout(r, 200));
    await agent.agent.notify("session/cancel", { sessionId: session });
    console.log(`  → stopReason: ${(await waiting).stopReason}\n`);
  } catch (error) {
    console.error(`demo failed: ${(error as Error).message}\n${agent.stderr}`);
    await agent.close();
    return 1;
  }
  const { code } = await agent.close();
  console.log(dim(`cordon exited with code ${code}. Try it yourself: cordon run --config examples/demo-chain.json`));
  return code === 0 ? 0 : 1;
}
