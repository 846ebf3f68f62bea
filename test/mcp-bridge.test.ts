/**
 * MCP-over-ACP through a real chain: a raw client → `cordon run` → passthrough.wasm → a native
 * tool proxy (`test/peers/mcp-tool-proxy.mjs`, which declares `{"type":"acp"}` MCP servers and
 * serves both MCP-over-ACP forms, or with `--forms connection` only the older connection form) →
 * passthrough.wasm → (Cordon's MCP bridge) → the reference agent, whose MCP client calls the tools.
 * The agent advertises (a) `acp` (it speaks MCP-over-ACP itself, connectionless form), (b) only
 * `http` (Cordon bridges over loopback streamable HTTP), (c) neither (Cordon bridges over a stdio
 * `cordon mcp-bridge` process); the bridge speaks the connection form to a proxy that answers
 * `mcp/connect`, and the connectionless form to one that refuses it (`--forms connectionless`).
 * Plus an agent written here with the ACP SDK's `McpOverAcpCaller`.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, ROOT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";
import { type SocketLines, socketLines } from "./helpers/socket-lines.js";

const TOOL_PROXY = join(ROOT, "test/peers/mcp-tool-proxy.mjs");
const toolProxy = (servers = "tools", forms = "both") => `"${NODE}" "${TOOL_PROXY}" --servers ${servers} --forms ${forms}`;
const CWD = mkdtempSync(join(tmpdir(), "cordon-mcp-cwd-"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

interface ChainOptions {
  /** The reference agent's `--mcp`. */
  mcp?: string;
  /** `--proxy-cmd` tool proxies, between two pass-through WASM proxies. */
  toolProxies?: string[];
  trace?: string;
  /** Another agent command instead of the reference agent. */
  agent?: string[];
}

function chain(o: ChainOptions): RawClient {
  const agent = o.agent ?? [NODE, CORDON, "reference-agent", "--mcp", o.mcp ?? "stdio"];
  const proxies = (o.toolProxies ?? [toolProxy()]).flatMap((p) => ["--proxy-cmd", p]);
  const args = [
    CORDON,
    "run",
    ...(o.trace ? ["--trace", o.trace] : []),
    "--proxy",
    proxyWasm("passthrough"),
    ...proxies,
    "--proxy",
    proxyWasm("passthrough"),
    "--",
    ...agent,
  ];
  const client = new RawClient(NODE, args);
  open.push(client);
  return client;
}

async function start(client: RawClient): Promise<Json> {
  const res = await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  expect(res.error, client.stderr).toBeUndefined();
  return res.result;
}

async function newSession(client: RawClient, mcpServers: Json[] = []): Promise<string> {
  const res = await client.request("session/new", { cwd: CWD, mcpServers });
  expect(res.error, client.stderr).toBeUndefined();
  return res.result.sessionId;
}

interface ToolOutcome {
  title: string;
  status: string;
  text: string;
}

/** Sends a prompt; resolves with its stop reason and every tool call's final status and text. */
async function prompt(
  client: RawClient,
  sessionId: string,
  text: string,
  timeoutMs = 20_000,
): Promise<{ stopReason: string; tools: ToolOutcome[] }> {
  const from = client.received.length;
  const id = `p-${Math.random()}`;
  client.send({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text }] } });
  const res = await client.waitFor((m) => m.id === id && !("method" in m), timeoutMs);
  expect(res.error, JSON.stringify(res.error)).toBeUndefined();
  return { stopReason: res.result.stopReason, tools: toolsOf(client, sessionId, from) };
}

function toolsOf(client: RawClient, sessionId: string, from = 0): ToolOutcome[] {
  const tools = new Map<string, ToolOutcome>();
  for (const m of client.received.slice(from)) {
    if (m.method !== "session/update" || m.params.sessionId !== sessionId) continue;
    const u = m.params.update;
    if (u.sessionUpdate === "tool_call") tools.set(u.toolCallId, { title: u.title, status: u.status, text: "" });
    if (u.sessionUpdate === "tool_call_update" && tools.has(u.toolCallId)) {
      const t = tools.get(u.toolCallId)!;
      t.status = u.status ?? t.status;
      const content = u.content?.[0]?.content?.text;
      if (typeof content === "string") t.text = content;
    }
  }
  return [...tools.values()];
}

/** The tool proxy's own record (its `stats` tool), through the agent. */
async function stats(
  client: RawClient,
  sessionId: string,
  server = "tools",
): Promise<{ connects: Json[]; disconnects: string[]; cancels: Json[]; notifications: Json[] }> {
  const { tools } = await prompt(client, sessionId, `use tool ${server}::stats`);
  expect(tools[0].status, tools[0].text).toBe("completed");
  return JSON.parse(tools[0].text);
}

/** Waits until a prompt's tool call is running. */
async function running(client: RawClient, sessionId: string, from: number): Promise<void> {
  await client.waitFor(
    (m) =>
      m.method === "session/update" &&
      m.params.sessionId === sessionId &&
      m.params.update.status === "in_progress" &&
      client.received.indexOf(m) >= from,
  );
}

/** The `mcpServers` the agent was given in each `session/new`, read from the conductor's trace. */
async function declarationsSeenByAgent(trace: string, count = 1): Promise<Json[][]> {
  for (let i = 0; i < 250; i++) {
    if (existsSync(trace)) {
      const events = readFileSync(trace, "utf8")
        .split("\n")
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as Json];
          } catch {
            return [];
          }
        });
      const setups = events.filter((e) => e.type === "request" && e.to === "agent" && e.method === "session/new");
      if (setups.length >= count) return setups.map((e) => e.params.mcpServers);
    }
    await sleep(20);
  }
  throw new Error("the trace never showed session/new reaching the agent");
}

/** The agent speaks the connectionless form itself; the bridge speaks the connection form to a proxy that answers `mcp/connect`. */
const MODES = [
  { mcp: "acp", form: "connectionless", http: false, proxyForms: "both" },
  { mcp: "http", form: "connection", http: true, proxyForms: "both" },
  { mcp: "stdio", form: "connection", http: false, proxyForms: "both" },
] as const;

/** A proxy that speaks only one form: the bridge speaks that one. */
const ONE_FORM = [
  { mcp: "http", form: "connection", http: true, proxyForms: "connection" },
  { mcp: "stdio", form: "connection", http: false, proxyForms: "connection" },
  { mcp: "http", form: "connectionless", http: true, proxyForms: "connectionless" },
  { mcp: "stdio", form: "connectionless", http: false, proxyForms: "connectionless" },
] as const;

describe.each([...MODES, ...ONE_FORM])(
  "reference agent advertising --mcp $mcp, a proxy serving $proxyForms forms: the $form form",
  ({ mcp, form, http, proxyForms }) => {
    it("sees mcpCapabilities.acp; lists and calls the proxy's tools; the tool sees the right session", async () => {
      const client = chain({ mcp, toolProxies: [toolProxy("tools", proxyForms)] });
      const init = await start(client);
      expect(init.agentCapabilities.mcpCapabilities).toEqual({ http, sse: false, acp: true });
      const session = await newSession(client);
      const first = await prompt(
        client,
        session,
        'list tools tools\nuse tool tools::echo {"text":"hello tools"}\nuse tool tools::whoami\nuse tool tools::fail',
      );
      expect(first.stopReason).toBe("end_turn");
      expect(first.tools.map((t) => [t.title, t.status])).toEqual([
        ["list tools tools", "completed"],
        ["tools::echo", "completed"],
        ["tools::whoami", "completed"],
        ["tools::fail", "failed"],
      ]);
      expect(first.tools[0].text.split("\n").map((l) => l.split(":")[0])).toEqual([
        "echo",
        "whoami",
        "slow",
        "fail",
        "ping-client",
        "stats",
      ]);
      expect(first.tools[1].text).toBe("echo: hello tools");
      expect(first.tools[2].text).toMatch(new RegExp(`^session=${session} server=tools serverId=tools:\\S+ form=${form}$`));
      expect(first.tools[3].text).toBe("this tool always fails");
      // A later turn reuses the MCP session: one connection in the connection form, none in the connectionless one.
      const again = await prompt(client, session, 'use tool tools::echo {"text":"again"}');
      expect(again.tools).toEqual([{ title: "tools::echo", status: "completed", text: "echo: again" }]);
      const seen = await stats(client, session);
      expect(seen.connects).toHaveLength(form === "connection" ? 1 : 0);
      if (form === "connection") expect(seen.notifications.map((n) => n.method)).toContain("notifications/initialized");
      // Server → client requests reach the agent's MCP client only in the connection form.
      const ping = await prompt(client, session, "use tool tools::ping-client");
      expect(ping.tools[0]).toMatchObject(
        form === "connection" ? { status: "completed", text: "client answered ping: {}" } : { status: "failed" },
      );
    });
  },
);

describe.each(MODES)("reference agent advertising --mcp $mcp", ({ mcp }) => {
  it("keeps two sessions' calls apart", async () => {
    const client = chain({ mcp });
    await start(client);
    const [a, b] = [await newSession(client), await newSession(client)];
    const [ra, rb] = await Promise.all([
      prompt(client, a, 'use tool tools::slow {"ms":150}\nuse tool tools::whoami\nuse tool tools::echo {"text":"from a"}'),
      prompt(client, b, 'use tool tools::whoami\nuse tool tools::slow {"ms":100}\nuse tool tools::echo {"text":"from b"}'),
    ]);
    const whoami = (r: typeof ra) => r.tools.find((t) => t.title === "tools::whoami")!.text;
    expect(whoami(ra)).toContain(`session=${a} `);
    expect(whoami(rb)).toContain(`session=${b} `);
    const serverId = (text: string) => /serverId=(\S+)/.exec(text)![1];
    expect(serverId(whoami(ra))).not.toBe(serverId(whoami(rb)));
    expect(ra.tools.map((t) => t.text)).toEqual(["slept 150", whoami(ra), "echo: from a"]);
    expect(rb.tools.map((t) => t.text)).toEqual([whoami(rb), "slept 100", "echo: from b"]);
  });

  it("several servers in one proxy and servers in several proxies, in one session", async () => {
    const client = chain({ mcp, toolProxies: [toolProxy("tools,more"), toolProxy("extra")] });
    await start(client);
    const session = await newSession(client);
    const r = await prompt(client, session, "use tool tools::whoami\nuse tool more::whoami\nuse tool extra::whoami\nlist tools extra");
    expect(r.tools.map((t) => t.status)).toEqual(["completed", "completed", "completed", "completed"]);
    const ids = r.tools.slice(0, 3).map((t) => /serverId=(\S+)/.exec(t.text)![1]);
    expect(new Set(ids).size).toBe(3);
    for (const [i, name] of ["tools", "more", "extra"].entries()) expect(r.tools[i].text).toContain(`session=${session} server=${name} `);
  });

  it("reaches a tool proxy inside a nested conductor (cordon proxy)", async () => {
    const nested = `"${NODE}" "${CORDON}" proxy --proxy-cmd '${toolProxy("inner")}'`;
    const client = chain({ mcp, toolProxies: [nested, toolProxy("outer")] });
    await start(client);
    const session = await newSession(client);
    const r = await prompt(client, session, "use tool inner::whoami\nuse tool outer::whoami");
    expect(r.tools.map((t) => t.status)).toEqual(["completed", "completed"]);
    expect(r.tools[0].text).toContain(`session=${session} server=inner `);
    expect(r.tools[1].text).toContain(`session=${session} server=outer `);
  });

  it("an unknown server id travels to the client and fails that call only; the session goes on", async () => {
    const client = chain({ mcp });
    await start(client);
    // The client declares a server nobody provides: the agent's calls to it go right→left through every proxy to the client.
    const session = await newSession(client, [{ type: "acp", name: "ghost", serverId: "ghost-1" }]);
    const r = await prompt(client, session, 'use tool ghost::echo\nuse tool tools::echo {"text":"still here"}');
    expect(r.tools[0]).toMatchObject({ title: "ghost::echo", status: "failed" });
    expect(r.tools[0].text).toMatch(/MCP error/);
    expect(r.tools[1]).toMatchObject({ status: "completed", text: "echo: still here" });
    const asked = client.received.filter((m) => "id" in m && typeof m.method === "string" && m.method.startsWith("mcp/"));
    // The bridge tries the connection form first; refused, it asks in the connectionless form.
    expect(asked.map((m) => m.method).slice(0, 2)).toEqual(mcp === "acp" ? ["mcp/message"] : ["mcp/connect", "mcp/message"]);
    const message = asked.find((m) => m.method === "mcp/message")!;
    expect(message.params.requestId).toEqual(expect.any(String));
    expect(message.params.serverId).toBe("ghost-1");
    expect((await prompt(client, session, "echo fine")).stopReason).toBe("end_turn");
  });

  it("session/cancel during a tool call withdraws it upstream; the session goes on", async () => {
    const client = chain({ mcp });
    await start(client);
    const session = await newSession(client);
    await prompt(client, session, "use tool tools::echo"); // connected
    const from = client.received.length;
    const turn = prompt(client, session, 'use tool tools::slow {"ms":20000}');
    await running(client, session, from);
    await sleep(100);
    client.notify("session/cancel", { sessionId: session });
    expect((await turn).stopReason).toBe("cancelled");
    await expect
      .poll(async () => (await stats(client, session)).cancels, { timeout: 5000 })
      .toEqual([expect.objectContaining({ how: "$/cancel_request" })]);
    expect((await prompt(client, session, 'use tool tools::echo {"text":"after"}')).tools[0].text).toBe("echo: after");
  });
});

// The endpoints' own behaviour, with a proxy that knows only the connection form: one connection per MCP session, DELETE / a closed line → mcp/disconnect.
describe("the HTTP bridge", () => {
  const post = (url: string, body: string | Json, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
      signal,
    });
  const INIT = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  };

  it("binds to loopback, refuses requests without the secret, answers malformed messages, withdraws a dropped call, serves several connections", async () => {
    const trace = join(mkdtempSync(join(tmpdir(), "cordon-mcp-trace-")), "trace.jsonl");
    const client = chain({ mcp: "http", trace, toolProxies: [toolProxy("tools", "connection")] });
    await start(client);
    const session = await newSession(client);
    expect((await prompt(client, session, "use tool tools::echo")).tools[0].status).toBe("completed");
    const [[declaration]] = await declarationsSeenByAgent(trace);
    expect(declaration).toEqual({
      type: "http",
      name: "tools",
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/[0-9a-f-]{36}$/),
      headers: [{ name: "Authorization", value: expect.stringMatching(/^Bearer \S{40,}$/) }],
    });
    const url: string = declaration.url;
    const auth = { authorization: declaration.headers[0].value };

    // Without the secret: 401, whatever the method.
    expect((await post(url, INIT)).status).toBe(401);
    expect((await post(url, INIT, { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await fetch(url, { headers: { accept: "text/event-stream" } })).status).toBe(401);
    expect((await post(url.replace(/[0-9a-f-]{36}$/, "00000000-0000-0000-0000-000000000000"), INIT, auth)).status).toBe(404);
    expect((await post(url, INIT, { ...auth, origin: "http://evil.example" })).status).toBe(403);

    // A second MCP session on the same server (the agent holds the first).
    const opened = await post(url, INIT, auth);
    expect(opened.status).toBe(200);
    const mcpSession = opened.headers.get("mcp-session-id")!;
    expect((await opened.json()).result.serverInfo.name).toBe("test-tools");
    const s = { ...auth, "mcp-session-id": mcpSession };
    expect((await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, s)).status).toBe(202);

    // Malformed messages: errors, and the MCP session goes on.
    const notJson = await post(url, "{not json", s);
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.code).toBe(-32700);
    const notRpc = await post(url, { jsonrpc: "2.0", id: 7 }, s);
    expect(notRpc.status).toBe(400);
    expect((await notRpc.json()).error.code).toBe(-32600);
    expect((await post(url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, auth)).status).toBe(400); // no session header
    expect((await post(url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, { ...auth, "mcp-session-id": "nope" })).status).toBe(404);
    const who = await (
      await post(url, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "whoami", arguments: {} } }, s)
    ).json();
    expect(who.result.content[0].text).toContain(`session=${session} `);
    const unknownTool = await (await post(url, { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "nope" } }, s)).json();
    expect(unknownTool).toEqual({ jsonrpc: "2.0", id: 4, error: { code: -32602, message: "Unknown tool: nope" } });

    // A call whose HTTP request is dropped mid-call is withdrawn upstream.
    const abort = new AbortController();
    const dropped = post(
      url,
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "slow", arguments: { ms: 20000 } } },
      s,
      abort.signal,
    ).catch((e: Error) => e);
    await sleep(300);
    abort.abort();
    expect(await dropped).toBeInstanceOf(Error);
    await expect.poll(async () => (await stats(client, session)).cancels.length, { timeout: 5000 }).toBe(1);

    const seen = await stats(client, session);
    expect(seen.connects).toHaveLength(2);
    expect(new Set(seen.connects.map((c) => c.serverId)).size).toBe(1);
    // DELETE ends the MCP session: mcp/disconnect, and the id is gone.
    expect((await fetch(url, { method: "DELETE", headers: s })).status).toBe(200);
    expect((await post(url, { jsonrpc: "2.0", id: 6, method: "tools/list" }, s)).status).toBe(404);
    await expect.poll(async () => (await stats(client, session)).disconnects.length, { timeout: 5000 }).toBe(1);
    // The agent's own MCP session was never disturbed.
    expect((await prompt(client, session, 'use tool tools::echo {"text":"ok"}')).tools[0].text).toBe("echo: ok");
  });
});

describe("the stdio bridge", () => {
  /** A raw TCP connection to the bridge listener, line by line. */
  function tcp(port: number): { socket: Socket } & SocketLines {
    const socket = connect({ host: "127.0.0.1", port });
    return { socket, ...socketLines(socket) };
  }

  /** Processes under `root` (by /proc parentage) whose command line mentions `word`. */
  function descendants(root: number, word: string): number[] {
    const parent = new Map<number, number>();
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      } catch {
        // Gone meanwhile.
      }
    }
    const under = (pid: number): boolean => {
      for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
      return false;
    };
    return [...parent.keys()].filter((pid) => {
      if (!under(pid)) return false;
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(word);
      } catch {
        return false;
      }
    });
  }

  it("refuses a connection without the secret, answers malformed lines, and survives a bridge killed mid-call", async () => {
    const trace = join(mkdtempSync(join(tmpdir(), "cordon-mcp-trace-")), "trace.jsonl");
    const client = chain({ mcp: "stdio", trace, toolProxies: [toolProxy("tools", "connection")] });
    await start(client);
    const session = await newSession(client);
    expect((await prompt(client, session, "use tool tools::echo")).tools[0].status).toBe("completed");
    const [[declaration]] = await declarationsSeenByAgent(trace);
    expect(declaration).toEqual({
      name: "tools",
      command: NODE,
      args: [
        join(ROOT, "bin/cordon.js"),
        "mcp-bridge",
        "--port",
        expect.stringMatching(/^\d+$/),
        "--endpoint",
        expect.stringMatching(/^[0-9a-f-]{36}$/),
      ],
      env: [{ name: "CORDON_BRIDGE_TOKEN", value: expect.stringMatching(/^\S{40,}$/) }],
    });
    const port = Number(declaration.args[3]);
    const endpoint: string = declaration.args[5];
    const token: string = declaration.env[0].value;

    // Wrong secret: refused and closed.
    const intruder = tcp(port);
    intruder.socket.write(JSON.stringify({ cordonBridge: 1, endpoint, token: "wrong" }) + "\n");
    expect(await intruder.next()).toMatchObject({ cordonBridge: "refused" });
    await intruder.closed;
    // The bridge command itself, with a wrong secret: its request is answered with an error, and it exits 1.
    const command = spawn(NODE, declaration.args, { env: { ...process.env, CORDON_BRIDGE_TOKEN: "wrong" } });
    let out = "";
    command.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    command.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }) + "\n");
    const code = await new Promise<number | null>((resolve) => command.once("exit", resolve));
    expect(code).toBe(1);
    expect(JSON.parse(out.trim())).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32603, message: expect.stringMatching(/refused/) },
    });

    // The right secret: malformed lines get errors and the connection goes on.
    const raw = tcp(port);
    raw.socket.write(JSON.stringify({ cordonBridge: 1, endpoint, token }) + "\n");
    expect(await raw.next()).toEqual({ cordonBridge: "ok" });
    raw.socket.write("{not json\n");
    expect(await raw.next()).toMatchObject({ id: null, error: { code: -32700 } });
    raw.socket.write(JSON.stringify({ jsonrpc: "2.0", id: 9 }) + "\n");
    expect(await raw.next()).toMatchObject({ id: 9, error: { code: -32600 } });
    raw.socket.write(JSON.stringify({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "whoami", arguments: {} } }) + "\n");
    const who = await raw.next();
    expect(who.id).toBe(10);
    expect(who.result.content[0].text).toContain(`session=${session} `);
    raw.socket.destroy();
    await raw.closed;

    // Kill the agent's bridge process mid-call: the call fails, the proxy's call is withdrawn, the session goes on.
    const from = client.received.length;
    const turn = prompt(client, session, 'use tool tools::slow {"ms":20000}');
    await running(client, session, from);
    await sleep(200);
    const bridges = descendants(client.child.pid!, "mcp-bridge");
    expect(bridges).toHaveLength(1);
    process.kill(bridges[0], "SIGKILL");
    const r = await turn;
    expect(r.stopReason).toBe("end_turn");
    expect(r.tools[0]).toMatchObject({ title: "tools::slow", status: "failed", text: expect.stringMatching(/MCP error/) });
    // The next use starts a new bridge; the proxy saw the cancellation and both disconnects.
    const seen = await stats(client, session);
    expect(seen.cancels).toEqual([expect.objectContaining({ how: "$/cancel_request" })]);
    expect(seen.disconnects).toHaveLength(2);
    expect(seen.connects).toHaveLength(3);
    expect((await prompt(client, session, 'use tool tools::echo {"text":"back"}')).tools[0].text).toBe("echo: back");
  });
});

describe("cordon mcp-bridge", () => {
  it("answers the agent's pending call with an error and exits 1 when the conductor drops the connection mid-call", async () => {
    // A stand-in for the conductor's listener: accepts the hello, takes one call, then drops the connection.
    const { createServer } = await import("node:net");
    const seen: Json[] = [];
    const server = createServer((socket) => {
      let buffer = "";
      socket.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
          const m = JSON.parse(buffer.slice(0, nl)) as Json;
          buffer = buffer.slice(nl + 1);
          seen.push(m);
          if (m.cordonBridge === 1) socket.write(JSON.stringify({ cordonBridge: "ok" }) + "\n");
          else if (m.method === "initialize") socket.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { ok: true } }) + "\n");
          else if (m.method === "tools/call") socket.destroy();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const command = spawn(NODE, [CORDON, "mcp-bridge", "--port", String(port), "--endpoint", "e-1"], {
        env: { ...process.env, CORDON_BRIDGE_TOKEN: "s3cret" },
      });
      let out = "";
      let err = "";
      command.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
      command.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
      command.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }) + "\n");
      command.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "slow" } }) + "\n");
      const code = await new Promise<number | null>((resolve) => command.once("exit", resolve));
      expect(code).toBe(1);
      expect(seen[0]).toEqual({ cordonBridge: 1, endpoint: "e-1", token: "s3cret" });
      expect(
        out
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l)),
      ).toEqual([
        { jsonrpc: "2.0", id: 1, result: { ok: true } },
        { jsonrpc: "2.0", id: 2, error: { code: -32603, message: "Cordon MCP bridge: the connection to the conductor closed" } },
      ]);
      expect(err).toContain("the connection to the conductor closed");
    } finally {
      server.close();
    }
  });
});

/** An agent written with `@agentclientprotocol/sdk` 2.4.0 whose tools calls use its `McpOverAcpCaller`. */
const SDK_AGENT = `
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
const caller = new acp.McpOverAcpCaller({ clientInfo: { name: "sdk-mcp-agent", version: "1" } });
const sessions = new Map();
let n = 0;
const app = acp
  .agent({ name: "sdk-mcp-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: { mcpCapabilities: { acp: true } }, authMethods: [] }))
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const sessionId = "sdk-sess-" + ++n;
    sessions.set(sessionId, params.mcpServers.filter(acp.isMcpServerAcp));
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const servers = sessions.get(params.sessionId);
    const idOf = (name) => servers.find((s) => s.name === name)?.serverId ?? "not-declared";
    for (const block of params.prompt) {
      const [word, name, tool, ...rest] = block.text.split(" ");
      let answer;
      try {
        if (word === "list") answer = { ok: await caller.request(client, idOf(name), "tools/list", {}) };
        else if (word === "call") answer = { ok: await caller.request(client, idOf(name), "tools/call", { name: tool, arguments: JSON.parse(rest.join(" ") || "{}") }) };
        else if (word === "bogus") answer = { ok: await caller.request(client, "no-such-server", "tools/list", {}) };
        else if (word === "raw") answer = { ok: await client.request("mcp/message", { serverId: idOf(name), requestId: "raw-1", ...JSON.parse([tool, ...rest].join(" ")) }) };
      } catch (error) {
        answer = { error: { code: error.code, message: error.message } };
      }
      await client.notify(acp.methods.client.session.update, { sessionId: params.sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: JSON.stringify(answer) } } });
    }
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.mcp.message, caller.handleNotification);
app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
`;

describe("an ACP-SDK agent with McpOverAcpCaller (connectionless form)", () => {
  it("lists and calls the proxy's tools through the chain; unknown server and malformed messages get errors", async () => {
    const client = chain({ agent: [NODE, "--input-type=module", "-e", SDK_AGENT] });
    const init = await start(client);
    expect(init.agentCapabilities.mcpCapabilities).toEqual({ acp: true });
    const session = await newSession(client);
    const answers = async (lines: string[]): Promise<Json[]> => {
      const from = client.received.length;
      const res = await client.request("session/prompt", { sessionId: session, prompt: lines.map((text) => ({ type: "text", text })) });
      expect(res.result?.stopReason, JSON.stringify(res)).toBe("end_turn");
      return client.received
        .slice(from)
        .filter((m) => m.method === "session/update" && m.params.sessionId === session)
        .map((m) => JSON.parse(m.params.update.content.text));
    };
    const [list, echo, who, unknownTool] = await answers([
      "list tools",
      'call tools echo {"text":"sdk"}',
      "call tools whoami",
      "call tools nope",
    ]);
    expect(list.ok.result.tools.map((t: Json) => t.name)).toContain("echo");
    expect(echo.ok).toEqual({ result: { content: [{ type: "text", text: "echo: sdk" }] } });
    expect(who.ok.result.content[0].text).toMatch(new RegExp(`^session=${session} server=tools serverId=\\S+ form=connectionless$`));
    expect(unknownTool.ok).toEqual({ error: { code: -32602, message: "Unknown tool: nope" } });
    const [bogus, malformed, after] = await answers(["bogus", 'raw tools {"params":{}}', 'call tools echo {"text":"still"}']);
    // Nobody owns the server id: the request reached the client, which answered method-not-found.
    expect(bogus.error.code).toBe(-32601);
    expect(malformed.error).toEqual({ code: -32602, message: expect.stringContaining("method") });
    expect(after.ok.result.content[0].text).toBe("echo: still");
  });
});

describe("an ACP-SDK agent with McpOverAcpCaller and the AssemblyScript workspace-tools.wasm", () => {
  it("lists and calls recall through pass-through proxies; each session recalls only itself", async () => {
    const args = [
      CORDON,
      "run",
      "--proxy",
      proxyWasm("passthrough"),
      "--proxy",
      proxyWasm("workspace-tools"),
      "--proxy",
      proxyWasm("passthrough"),
    ];
    const client = new RawClient(NODE, [...args, "--", NODE, "--input-type=module", "-e", SDK_AGENT]);
    open.push(client);
    await start(client);
    const ask = async (session: string, lines: string[]): Promise<Json[]> => {
      const from = client.received.length;
      const res = await client.request("session/prompt", { sessionId: session, prompt: lines.map((text) => ({ type: "text", text })) });
      expect(res.result?.stopReason, JSON.stringify(res)).toBe("end_turn");
      return client.received
        .slice(from)
        .filter((m) => m.method === "session/update" && m.params.sessionId === session)
        .map((m) => JSON.parse(m.params.update.content.text));
    };
    const a = await newSession(client);
    const b = await newSession(client);
    const [list] = await ask(a, ["list workspace"]);
    expect(list.ok.result.tools.map((t: Json) => t.name).sort()).toEqual(["read_file", "recall"]);
    await ask(a, ["list workspace marmalade"]); // a turn in session a that mentions a word
    const [inA] = await ask(a, ['call workspace recall {"query":"marmalade"}']);
    const [inB] = await ask(b, ['call workspace recall {"query":"marmalade"}']);
    expect(inA.ok.result.content[0].text).toContain("list workspace marmalade");
    expect(inB.ok.result.content[0].text).toBe('No earlier prompt or answer of this session mentions "marmalade".');
    const [noFs] = await ask(a, ['call workspace read_file {"path":"notes.txt"}']);
    expect(noFs.ok.result.isError).toBe(true); // no fs:read grant and no client fs: a tool error, not a protocol error
  });
});
