/**
 * Nothing the agent's MCP client or the proxy side sends may crash the bridge (issue 8, hole 4 in
 * runtime/mcp): prototype names used as ids of servers, connections, sessions and endpoints; deep
 * nesting; and a bug behind a socket callback (which Node would otherwise turn into an uncaught
 * exception ending the whole conductor).
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { socketLines } from "../../test/helpers/socket-lines.js";
import { createLogger } from "../log.js";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { McpBridgePeer } from "./bridge.js";
import { type Endpoint, type EndpointHost, newEndpointId, newSecret } from "./endpoints.js";
import type { McpLink } from "./link.js";
import { TcpEndpoint } from "./tcp-endpoint.js";

type Json = Record<string, any>;
const PROTO_NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

describe("a bug behind a socket callback", () => {
  it("fails that message with an error and logs it; the connection and the process go on", async () => {
    const errors: string[] = [];
    const one: Endpoint = { id: newEndpointId(), serverId: "srv", name: "tools", secret: newSecret(), sessionId: null, links: new Set() };
    const host: EndpointHost = {
      log: createLogger("error", (line) => errors.push(line)),
      endpoint: (id) => (id === one.id ? one : undefined),
      openLink: () =>
        ({
          fromClient(message: JsonRpcMessage, reply: (r: unknown) => void) {
            const m = message as Json;
            if (m.method === "boom") throw new TypeError("a bug");
            reply({ jsonrpc: "2.0", id: m.id, result: "fine" });
          },
          close() {
            throw new Error("a bug at close");
          },
        }) as unknown as McpLink,
    };
    const tcp = new TcpEndpoint(host);
    await tcp.listen();
    closers.push(() => tcp.close());
    const socket = connect({ host: "127.0.0.1", port: tcp.port });
    const { next } = socketLines(socket);
    socket.write(JSON.stringify({ cordonBridge: 1, endpoint: one.id, token: one.secret }) + "\n");
    expect(await next()).toEqual({ cordonBridge: "ok" });
    socket.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "boom" }) + "\n");
    expect(await next()).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32603, message: "Internal error in Cordon's MCP bridge" } });
    socket.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ok" }) + "\n");
    expect(await next()).toEqual({ jsonrpc: "2.0", id: 2, result: "fine" });
    socket.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(errors.map((e) => e.split("\\n")[0])).toEqual([
      expect.stringMatching(/internal error while handling a message from a stdio bridge: TypeError: a bug/),
      expect.stringMatching(/internal error while handling the end of a stdio bridge connection: Error: a bug at close/),
    ]);
  });
});

describe("prototype names from peers", () => {
  async function harness() {
    const warnings: string[] = [];
    const bridge = new McpBridgePeer({
      log: createLogger("debug", (l) => warnings.push(l)),
      bridgeCommand: { command: "/usr/bin/node", args: ["cordon.js", "mcp-bridge"] },
      mcpForm: "connection",
    });
    closers.push(() => bridge.close());
    const out: Json[] = [];
    await bridge.open({ message: (m) => out.push(m as Json), malformed: () => {}, closed: () => {} });
    const send = async (...ms: Json[]) => {
      for (const m of ms) bridge.send({ jsonrpc: "2.0", ...m } as never);
      await new Promise((r) => setImmediate(r));
    };
    const take = async () => {
      await new Promise((r) => setImmediate(r));
      return out.splice(0);
    };
    return { bridge, send, take, warnings };
  }

  it("are ordinary ids for servers, sessions, connections and requests (stdio bridging)", async () => {
    const h = await harness();
    await h.send({ id: "__proto__", method: "proxy/initialize", params: { protocolVersion: 1 } });
    const [init] = await h.take();
    await h.send({ id: init.id, result: { protocolVersion: 1, agentCapabilities: { mcpCapabilities: {} } } });
    expect((await h.take())[0]).toMatchObject({ id: "__proto__", result: { agentCapabilities: { mcpCapabilities: { acp: true } } } });
    const servers = PROTO_NAMES.map((name) => ({ type: "acp", name, serverId: name }));
    await h.send({ id: "constructor", method: "session/new", params: { cwd: "/w", mcpServers: servers } });
    let setup: Json | undefined;
    for (let i = 0; i < 100 && !setup; i++) {
      setup = (await h.take()).find((m) => m.params?.method === "session/new");
      if (!setup) await new Promise((r) => setTimeout(r, 10));
    }
    expect(setup!.params.params.mcpServers.map((s: Json) => s.name)).toEqual(PROTO_NAMES);
    await h.send({ id: setup!.id, result: { sessionId: "__proto__" } });
    expect(await h.take()).toEqual([{ jsonrpc: "2.0", id: "constructor", result: { sessionId: "__proto__" } }]);
    // mcp/message for connections that do not exist, under prototype names: passed on, nothing breaks
    for (const name of PROTO_NAMES) {
      await h.send({ id: `m-${name}`, method: "mcp/message", params: { connectionId: name, method: "ping" } });
      await h.send({ method: "$/cancel_request", params: { requestId: name } });
      await h.send({ id: name, result: {} }); // answers to ids it never used
    }
    const passed = await h.take();
    expect(passed.filter((m) => m.params?.method === "mcp/message")).toHaveLength(PROTO_NAMES.length);
    // a session ending under a prototype name drops its endpoints
    await h.send({ id: "end", method: "session/close", params: { sessionId: "__proto__" } });
    const [close] = await h.take();
    await h.send({ id: close.id, result: {} });
    expect(await h.take()).toEqual([{ jsonrpc: "2.0", id: "end", result: {} }]);
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
    expect(({} as Json).serverId).toBeUndefined();
  });

  it("the stdio bridge's links work when the proxy names its connection __proto__", async () => {
    const h = await harness();
    await h.send({ id: "c1", method: "proxy/initialize", params: {} });
    const [init] = await h.take();
    await h.send({ id: init.id, result: { agentCapabilities: { mcpCapabilities: {} } } });
    await h.take();
    await h.send({
      id: "c2",
      method: "session/new",
      params: { cwd: "/w", mcpServers: [{ type: "acp", name: "t", serverId: "__proto__" }] },
    });
    let setup: Json | undefined;
    for (let i = 0; i < 100 && !setup; i++) {
      setup = (await h.take()).find((m) => m.params?.method === "session/new");
      if (!setup) await new Promise((r) => setTimeout(r, 10));
    }
    await h.send({ id: setup!.id, result: { sessionId: "s1" } });
    await h.take();
    const { args, env } = setup!.params.params.mcpServers[0];
    const socket = connect({ host: "127.0.0.1", port: Number(args[args.length - 3]) });
    const { next } = socketLines(socket);
    socket.write(JSON.stringify({ cordonBridge: 1, endpoint: args[args.length - 1], token: env[0].value }) + "\n");
    expect(await next()).toEqual({ cordonBridge: "ok" });
    socket.write(JSON.stringify({ jsonrpc: "2.0", id: "__proto__", method: "initialize", params: {} }) + "\n");
    let connectRequest: Json | undefined;
    for (let i = 0; i < 100 && !connectRequest; i++) {
      connectRequest = (await h.take()).find((m) => m.method === "mcp/connect");
      if (!connectRequest) await new Promise((r) => setTimeout(r, 10));
    }
    expect(connectRequest!.params).toEqual({ serverId: "__proto__" });
    await h.send({ id: connectRequest!.id, result: { connectionId: "__proto__" } });
    const [message] = await h.take();
    expect(message).toMatchObject({ method: "mcp/message", params: { connectionId: "__proto__", method: "initialize" } });
    await h.send(
      { id: message.id, result: { ok: 1 } },
      { id: "p1", method: "mcp/message", params: { connectionId: "__proto__", method: "ping" } },
    );
    expect(await next()).toEqual({ jsonrpc: "2.0", id: "__proto__", result: { ok: 1 } });
    expect(await next()).toEqual({ jsonrpc: "2.0", id: expect.stringMatching(/^cordon-/), method: "ping" });
    socket.destroy();
  });
});
