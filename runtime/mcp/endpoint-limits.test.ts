/**
 * What a stranger on the machine can make the bridge's loopback listeners hold (issue 8, hole 9):
 * before authenticating, a connection buffers a few KiB at most, must authenticate quickly, and only
 * a few may wait at once — so a flood of junk connections is closed early and memory stays flat,
 * while the agent's authenticated traffic still flows. Endpoints run in process against a fake host.
 */
import { spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { socketLines } from "../../test/helpers/socket-lines.js";
import { createLogger } from "../log.js";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { type Endpoint, type EndpointHost, newEndpointId, newSecret } from "./endpoints.js";
import { HttpEndpoint } from "./http-endpoint.js";
import type { McpLink } from "./link.js";
import { MAX_HELLO_BYTES, TcpEndpoint } from "./tcp-endpoint.js";

type Json = Record<string, any>;

/** A host with one endpoint whose links echo every request's params back as its result. */
function fakeHost(): EndpointHost & { endpoints: Map<string, Endpoint>; warnings: string[]; one: Endpoint } {
  const warnings: string[] = [];
  const endpoints = new Map<string, Endpoint>();
  const one: Endpoint = { id: newEndpointId(), serverId: "srv", name: "tools", secret: newSecret(), sessionId: "s1", links: new Set() };
  endpoints.set(one.id, one);
  return {
    endpoints,
    warnings,
    one,
    log: createLogger("warn", (line) => warnings.push(line)),
    endpoint: (id) => endpoints.get(id),
    openLink(endpoint, toClient) {
      const link = {
        fromClient(message: JsonRpcMessage, reply: (r: unknown) => void = () => {}) {
          const m = message as Json;
          if (m.method === "_test/notify") toClient({ jsonrpc: "2.0", method: "notifications/message", params: m.params });
          if ("id" in m && "method" in m) reply({ jsonrpc: "2.0", id: m.id, result: { echo: m.params ?? null } });
        },
        abandon() {},
        close() {
          endpoint.links.delete(link as unknown as McpLink);
        },
        connectionId: "k1",
      };
      endpoint.links.add(link as unknown as McpLink);
      return link as unknown as McpLink;
    },
  };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const JUNK = Buffer.alloc(64 * 1024, "A"); // one shared chunk: the test's own writes cost no memory

/** Writes `total` bytes of junk (no newline) as fast as the socket takes them; resolves with what was written when it is closed or done. */
function flood(socket: Socket, total: number): Promise<number> {
  return new Promise((resolve) => {
    let written = 0;
    const pump = () => {
      while (written < total && !socket.destroyed) {
        written += JUNK.length;
        if (!socket.write(JUNK)) return socket.once("drain", pump);
      }
      if (written >= total) resolve(written);
    };
    socket.on("error", () => {});
    socket.once("close", () => resolve(written));
    socket.once("connect", pump);
  });
}

async function tcpEndpoint(limits = {}) {
  const host = fakeHost();
  const tcp = new TcpEndpoint(host, limits);
  await tcp.listen();
  closers.push(() => tcp.close());
  return { host, tcp };
}

const settle = async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  (globalThis as { gc?: () => void }).gc?.();
};
const heldBytes = () => {
  const m = process.memoryUsage();
  return m.arrayBuffers + m.heapUsed;
};

describe("the stdio bridge's TCP listener before authentication", () => {
  it("closes connections that send megabytes of junk instead of a hello, holding a few KiB of each; memory stays flat", async () => {
    const { tcp } = await tcpEndpoint();
    await settle();
    const before = heldBytes();
    const started = performance.now();
    const sockets = Array.from({ length: 12 }, () => connect({ host: "127.0.0.1", port: tcp.port }));
    const written = await Promise.all(sockets.map((s) => flood(s, 16 * 1024 * 1024)));
    const elapsed = performance.now() - started;
    await settle();
    const grown = heldBytes() - before;
    // 12 × 16 MiB of junk left the process holding next to nothing (the old bound: 64 MiB each)…
    expect(grown).toBeLessThan(24 * 1024 * 1024);
    // …because each was cut off long before its 16 MiB (and long before any hello timeout).
    for (const w of written) expect(w).toBeLessThan(16 * 1024 * 1024);
    expect(elapsed).toBeLessThan(2500);
    expect(tcp.stats).toEqual({ open: 0, unauthenticated: 0 });
  });

  it("refuses a hello line longer than the bound at once, naming it", async () => {
    const { tcp } = await tcpEndpoint();
    const socket = connect({ host: "127.0.0.1", port: tcp.port });
    const l = socketLines(socket);
    socket.write(`{"cordonBridge":1,"endpoint":"${"x".repeat(MAX_HELLO_BYTES)}"`);
    expect(await l.next()).toEqual({ cordonBridge: "refused", reason: `hello longer than ${MAX_HELLO_BYTES} bytes` });
    await l.closed;
  });

  it("closes a connection that says nothing, after the hello timeout", async () => {
    const { tcp } = await tcpEndpoint({ helloTimeoutMs: 200 });
    const socket = connect({ host: "127.0.0.1", port: tcp.port });
    const l = socketLines(socket);
    const started = performance.now();
    expect(await l.next()).toEqual({ cordonBridge: "refused", reason: "no hello in time" });
    await l.closed;
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("lets only a few connections wait to authenticate; one more is told busy without being read, and the agent's bridge gets in once a slot frees", async () => {
    const { host, tcp } = await tcpEndpoint({ maxUnauthenticated: 4, helloTimeoutMs: 400 });
    const idle = Array.from({ length: 4 }, () => connect({ host: "127.0.0.1", port: tcp.port }));
    for (const s of idle) s.on("error", () => {});
    await new Promise((r) => setTimeout(r, 50));
    expect(tcp.stats.unauthenticated).toBe(4);
    const extra = connect({ host: "127.0.0.1", port: tcp.port });
    const l = socketLines(extra);
    extra.write(JUNK);
    expect(await l.next()).toEqual({ cordonBridge: "busy", reason: "too many connections waiting to authenticate; try again" });
    await l.closed;
    expect(host.warnings.filter((w) => w.includes("waiting to authenticate"))).toHaveLength(1);
    // The idle ones time out; then a real hello is accepted and traffic flows.
    await new Promise((r) => setTimeout(r, 600));
    const agent = connect({ host: "127.0.0.1", port: tcp.port });
    const a = socketLines(agent);
    agent.write(JSON.stringify({ cordonBridge: 1, endpoint: host.one.id, token: host.one.secret }) + "\n");
    expect(await a.next()).toEqual({ cordonBridge: "ok" });
    agent.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { x: 1 } }) + "\n");
    expect(await a.next()).toEqual({ jsonrpc: "2.0", id: 1, result: { echo: { x: 1 } } });
    agent.destroy();
  });

  it("after the hello the per-message limits apply as before: a line of several MiB is relayed, even in the hello's packet", async () => {
    const { host, tcp } = await tcpEndpoint();
    const agent = connect({ host: "127.0.0.1", port: tcp.port });
    const a = socketLines(agent);
    const big = "y".repeat(5 * 1024 * 1024);
    agent.write(
      JSON.stringify({ cordonBridge: 1, endpoint: host.one.id, token: host.one.secret }) +
        "\n" +
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { big } }) +
        "\n",
    );
    expect(await a.next()).toEqual({ cordonBridge: "ok" });
    expect((await a.next()).result.echo.big).toHaveLength(big.length);
    agent.destroy();
  });

  it("closes a connection whose reader leaves more than the bound unread, instead of buffering without end", async () => {
    const { host, tcp } = await tcpEndpoint({ maxUnreadOutputBytes: 4 * 1024 * 1024 });
    const agent = connect({ host: "127.0.0.1", port: tcp.port });
    const a = socketLines(agent);
    agent.write(JSON.stringify({ cordonBridge: 1, endpoint: host.one.id, token: host.one.secret }) + "\n");
    expect(await a.next()).toEqual({ cordonBridge: "ok" });
    agent.pause(); // the agent's MCP client stops reading
    const text = "z".repeat(512 * 1024);
    for (let i = 0; i < 100 && !agent.destroyed; i++) {
      agent.write(JSON.stringify({ jsonrpc: "2.0", id: i, method: "_test/notify", params: { text } }) + "\n");
      await new Promise((r) => setImmediate(r));
    }
    for (let i = 0; i < 200 && tcp.stats.open > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(tcp.stats.open).toBe(0);
    expect(host.warnings.some((w) => /leaves more than 4194304 bytes unread; closing its bridge connection/.test(w))).toBe(true);
    agent.destroy();
  });

  it("answers a message nested deeper than the framing bound with an error and goes on", async () => {
    const { host, tcp } = await tcpEndpoint();
    const agent = connect({ host: "127.0.0.1", port: tcp.port });
    const a = socketLines(agent);
    agent.write(JSON.stringify({ cordonBridge: 1, endpoint: host.one.id, token: host.one.secret }) + "\n");
    expect(await a.next()).toEqual({ cordonBridge: "ok" });
    agent.write(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":${"[".repeat(100_000)}${"]".repeat(100_000)}}\n`);
    expect(await a.next()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: expect.stringMatching(/nests deeper than \d+ levels/) },
    });
    agent.write(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }) + "\n");
    expect(await a.next()).toEqual({ jsonrpc: "2.0", id: 4, result: { echo: null } });
    agent.destroy();
  });

  it("prototype names are not endpoints", async () => {
    const { tcp } = await tcpEndpoint();
    for (const endpoint of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      const socket = connect({ host: "127.0.0.1", port: tcp.port });
      const l = socketLines(socket);
      socket.write(JSON.stringify({ cordonBridge: 1, endpoint, token: "x" }) + "\n");
      expect(await l.next()).toEqual({ cordonBridge: "refused", reason: "unknown endpoint or wrong token" });
      await l.closed;
    }
  });
});

describe("cordon mcp-bridge against a busy listener", () => {
  it("tries again while the listener is busy (someone flooding it) and gets in once a slot frees", async () => {
    const { host, tcp } = await tcpEndpoint({ maxUnauthenticated: 1, helloTimeoutMs: 60_000 });
    const squatter = connect({ host: "127.0.0.1", port: tcp.port });
    squatter.on("error", () => {});
    await new Promise((r) => setTimeout(r, 50));
    const cordon = fileURLToPath(new URL("../../bin/cordon.js", import.meta.url));
    const command = spawn(process.execPath, [cordon, "mcp-bridge", "--port", String(tcp.port), "--endpoint", host.one.id], {
      env: { ...process.env, CORDON_BRIDGE_TOKEN: host.one.secret },
    });
    let out = "";
    command.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    command.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { n: 1 } }) + "\n");
    // The squatter leaves only once the bridge command has been told busy.
    for (let i = 0; i < 1500 && !host.warnings.some((w) => w.includes("waiting to authenticate")); i++)
      await new Promise((r) => setTimeout(r, 10));
    squatter.destroy();
    for (let i = 0; i < 1500 && !out.includes("\n"); i++) await new Promise((r) => setTimeout(r, 10));
    command.stdin.end();
    expect(await new Promise((resolve) => command.once("exit", resolve))).toBe(0);
    expect(JSON.parse(out.trim())).toEqual({ jsonrpc: "2.0", id: 1, result: { echo: { n: 1 } } });
    expect(host.warnings.some((w) => w.includes("waiting to authenticate"))).toBe(true);
  });
});

async function httpEndpoint(limits = {}) {
  const host = fakeHost();
  const http = new HttpEndpoint(host, limits);
  await http.listen();
  closers.push(() => http.close());
  return { host, http, path: `/mcp/${host.one.id}`, auth: `Bearer ${host.one.secret}` };
}

/** A raw HTTP/1.1 request whose body is `bodyBytes` of junk; resolves with the status line and how much of the body went out before the connection closed. */
function rawPost(
  port: number,
  path: string,
  bodyBytes: number,
  headers: Record<string, string> = {},
): Promise<{ status: number; written: number; answer: string }> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let answer = "";
    socket.setEncoding("utf8").on("data", (c: string) => (answer += c));
    const head = [
      `POST ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      "Content-Type: application/json",
      `Content-Length: ${bodyBytes}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ].join("\r\n");
    socket.once("connect", () => socket.write(head + "\r\n\r\n"));
    const sent = flood(socket, bodyBytes);
    socket.once("close", async () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(answer)?.[1] ?? 0), written: await sent, answer }));
  });
}

/** A socket connected to the listener, sending nothing yet. */
function connected(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.on("error", () => {});
    socket.once("connect", () => resolve(socket));
  });
}

/** Whether `socket` is closed within `ms` (resolves as soon as it is). */
function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** What a raw socket receives, with a wait for a pattern. */
function socketText(socket: Socket) {
  let text = "";
  const waiters: Array<() => void> = [];
  socket.setEncoding("utf8").on("data", (c: string) => {
    text += c;
    for (const w of waiters.splice(0)) w();
  });
  return {
    async until(pattern: RegExp): Promise<string> {
      while (!pattern.test(text)) await new Promise<void>((r) => waiters.push(r));
      return text;
    },
  };
}

/** An HTTP request with a JSON body through node:http; resolves with status and parsed body. */
function post(port: number, path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (c: string) => (text += c));
        res.once("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      },
    );
    req.once("error", reject);
    req.end(body);
  });
}

describe("the HTTP bridge listener's bounds", () => {
  it("answers unauthorized requests without reading their bodies and closes them; a flood of 12 × 16 MiB leaves memory flat", async () => {
    const { http, path } = await httpEndpoint();
    await settle();
    const before = heldBytes();
    const results = await Promise.all([
      ...Array.from({ length: 8 }, () => rawPost(http.port, path, 16 * 1024 * 1024)),
      ...Array.from({ length: 2 }, () => rawPost(http.port, "/mcp/nope", 16 * 1024 * 1024)),
      ...Array.from({ length: 2 }, () => rawPost(http.port, path, 16 * 1024 * 1024, { Authorization: "Bearer wrong" })),
    ]);
    await settle();
    expect(heldBytes() - before).toBeLessThan(24 * 1024 * 1024);
    expect(results.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 401, 401, 401, 404, 404, 401, 401]);
    for (const r of results) expect(r.written).toBeLessThan(16 * 1024 * 1024);
    expect(http.bodiesBeingRead).toBe(0);
  });

  it("cuts an authorized body off at the per-request limit (413) instead of reading it to the end", async () => {
    const { http, path, auth } = await httpEndpoint({ maxBodyBytes: 1024 * 1024 });
    const r = await rawPost(http.port, path, 16 * 1024 * 1024, { Authorization: auth });
    expect(r.status).toBe(413);
    expect(r.answer).toContain("Payload Too Large: more than 1048576 bytes");
    expect(r.written).toBeLessThan(16 * 1024 * 1024);
    expect(http.bodiesBeingRead).toBe(0);
  });

  it("bodies being read at once share a budget: one more is refused with 503 while they are pending", async () => {
    const { http, path, auth } = await httpEndpoint({ maxBodyBytes: 4 * 1024 * 1024, maxBodiesBytes: 5 * 1024 * 1024 });
    // Two slow bodies that announce 4 MiB and send 2 MiB each, then wait.
    const slow = [0, 1].map(() => {
      const socket = connect({ host: "127.0.0.1", port: http.port });
      socket.on("error", () => {});
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${http.port}\r\nAuthorization: ${auth}\r\nContent-Length: ${4 * 1024 * 1024}\r\n\r\n`,
      );
      for (let i = 0; i < 32; i++) socket.write(JUNK);
      return socket;
    });
    for (let i = 0; i < 200 && http.bodiesBeingRead < 4 * 1024 * 1024; i++) await new Promise((r) => setTimeout(r, 10));
    expect(http.bodiesBeingRead).toBe(4 * 1024 * 1024);
    const third = await rawPost(http.port, path, 4 * 1024 * 1024, { Authorization: auth });
    expect(third.status).toBe(503);
    for (const s of slow) s.destroy();
    for (let i = 0; i < 200 && http.bodiesBeingRead > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(http.bodiesBeingRead).toBe(0);
    // and then an ordinary request goes through
    const ok = await post(http.port, path, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { x: 1 } }), {
      Authorization: auth,
    });
    expect(ok).toEqual({ status: 200, body: { jsonrpc: "2.0", id: 1, result: { echo: { x: 1 } } } });
  });

  it("accepts a bounded number of connections", async () => {
    const { http, path, auth } = await httpEndpoint({ maxConnections: 3 });
    const idle = Array.from({ length: 3 }, () => connect({ host: "127.0.0.1", port: http.port }));
    for (const s of idle) s.on("error", () => {});
    await new Promise((r) => setTimeout(r, 50));
    const extra = connect({ host: "127.0.0.1", port: http.port });
    extra.on("error", () => {});
    await new Promise<void>((resolve) => extra.once("close", () => resolve()));
    for (const s of idle) s.destroy();
    await new Promise((r) => setTimeout(r, 50));
    const ok = await post(http.port, path, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize" }), { Authorization: auth });
    expect(ok.status).toBe(200);
  });

  it("closes a connection that sends no complete, authenticated request head within the pre-auth time (silent, or a head dribbled in)", async () => {
    const { host, http, path } = await httpEndpoint({ preAuthTimeoutMs: 300 });
    const silent = await connected(http.port);
    const dribbling = await connected(http.port);
    dribbling.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${http.port}\r\n`);
    const keepDribbling = setInterval(() => dribbling.writable && dribbling.write("X-Slow: 1\r\n"), 50);
    expect(http.unauthenticated).toBe(2);
    // Node alone would keep both for headersTimeout (10 s), checked only every 30 s.
    const closed = await Promise.all([silent, dribbling].map((s) => closedWithin(s, 5000)));
    clearInterval(keepDribbling);
    expect(closed).toEqual([true, true]);
    expect(http.unauthenticated).toBe(0);
    expect(host.warnings.some((w) => /closed an HTTP connection that sent no authenticated request within 300 ms/.test(w))).toBe(true);
  });

  it("64 silent connections: at most 16 wait (the oldest are closed), and the agent's authenticated request still gets through", async () => {
    const { host, http, path, auth } = await httpEndpoint();
    const silent: Socket[] = [];
    for (let i = 0; i < 64; i++) silent.push(await connected(http.port));
    for (let i = 0; i < 200 && silent.filter((s) => !s.destroyed).length > 16; i++) await new Promise((r) => setTimeout(r, 10));
    expect(silent.filter((s) => !s.destroyed)).toHaveLength(16);
    expect(http.unauthenticated).toBe(16);
    // The first 48 were closed, the newest 16 still wait.
    expect(silent.slice(48).every((s) => !s.destroyed)).toBe(true);
    const ok = await post(http.port, path, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { x: 1 } }), {
      Authorization: auth,
    });
    expect(ok).toEqual({ status: 200, body: { jsonrpc: "2.0", id: 1, result: { echo: { x: 1 } } } });
    expect(host.warnings.filter((w) => w.includes("waiting to authenticate"))).toHaveLength(1); // throttled
    for (const s of silent) s.destroy();
  });

  it("an authenticated connection leaves the waiting room and stays open past the pre-auth time (keep-alive, SSE)", async () => {
    const { http, path, auth } = await httpEndpoint({ preAuthTimeoutMs: 200 });
    const socket = await connected(http.port);
    const l = socketText(socket);
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize" });
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${http.port}\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await l.until(/"result"/);
    expect(http.unauthenticated).toBe(0);
    expect(await closedWithin(socket, 600)).toBe(false);
    socket.destroy();
  });

  it("refuses a request head longer than 4 KiB with 431", async () => {
    const { http, path, auth } = await httpEndpoint();
    const r = await post(http.port, path, "{}", { Authorization: auth, "X-Junk": "j".repeat(5000) }).catch(() => ({ status: -1 }));
    // Node's parser answers 431 and closes; node:http's client may see the reset first.
    expect([431, -1]).toContain(r.status);
    const raw = await rawPost(http.port, path, 0, { Authorization: auth, "X-Junk": "j".repeat(5000) });
    expect(raw.status).toBe(431);
  });

  it("refuses deep nesting and huge batches with 400, and a malformed %-escape with 404 (not 500)", async () => {
    const { http, path, auth } = await httpEndpoint();
    const deep = await post(
      http.port,
      path,
      `{"jsonrpc":"2.0","id":1,"method":"initialize","params":${"[".repeat(50_000)}${"]".repeat(50_000)}}`,
      { Authorization: auth },
    );
    expect(deep).toEqual({
      status: 400,
      body: { jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/nests deeper than \d+ levels/) } },
    });
    const batch = await post(
      http.port,
      path,
      JSON.stringify(Array.from({ length: 1001 }, (_, i) => ({ jsonrpc: "2.0", method: "notifications/x", params: { i } }))),
      { Authorization: auth },
    );
    expect(batch.status).toBe(400);
    expect(batch.body.error.message).toMatch(/batch of more than 1000/);
    const badEscape = await post(http.port, "/mcp/%E0%A4%A", "{}", { Authorization: auth });
    expect(badEscape.status).toBe(404);
    for (const name of ["__proto__", "constructor", "toString"])
      expect((await post(http.port, `/mcp/${name}`, "{}", { Authorization: auth })).status).toBe(404);
  });
});
