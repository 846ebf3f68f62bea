import { describe, expect, it } from "vitest";
import { MemoryPeer } from "../../test/helpers/memory-peer.js";
import { idKey } from "../protocol/json-rpc.js";
import { Hop } from "./hop.js";
import { agentHost, parentHost } from "./host.js";

const successor = (method: string, inner: object) => ({ jsonrpc: "2.0" as const, id: 7, method, params: inner });

describe("host strategies: where the chain ends", () => {
  it("agent host: the agent is a peer Cordon starts; everything on the client's connection is the client's", () => {
    const client = new Hop(new MemoryPeer("client"), { role: "client" });
    const host = agentHost(client, new MemoryPeer('agent "a"'));
    expect([host.startsAgent, host.agent.label, host.answerer(1)]).toEqual([true, 'agent "a"', client]);
    expect(host.successorCall(successor("proxy/successor", { method: "session/update" }), true)).toBeNull();
    expect(() => agentHost(client, undefined)).toThrow(/an agent is required/);
  });

  it("parent host: the parent's proxy/successor is our successor's call, unwrapped, and only after proxy/initialize", () => {
    const parent = new MemoryPeer("parent");
    const client = new Hop(parent, { role: "client" });
    const host = parentHost(client);
    expect(host.startsAgent).toBe(false);
    expect(host.successorCall({ jsonrpc: "2.0", id: 1, method: "session/prompt" }, true)).toBeNull(); // the parent's own call
    expect(host.successorCall(successor("proxy/successor", { method: "session/update" }), false)).toBe(
      'expected "proxy/initialize" before "session/update"',
    );
    expect(host.successorCall(successor("proxy/successor", { params: {} }), true)).toMatch(/needs params \{method, params\?\}/);
    expect(host.successorCall(successor("proxy/successor", { method: "fs/read_text_file", params: { path: "/x" } }), true)).toEqual({
      jsonrpc: "2.0",
      id: 7,
      method: "fs/read_text_file",
      params: { path: "/x" },
    });
    expect(client.dialect).toBe("rfd");
    host.successorCall(successor("_proxy/successor", { method: "session/update" }), true);
    expect(client.dialect).toBe("rust"); // the parent speaks the Rust SDK's spelling: so do we, back to it
  });

  it("parent host: one connection, two hops: an answer belongs to the successor's hop only for an id that hop issued", () => {
    const parent = new MemoryPeer("parent");
    const client = new Hop(parent, { role: "client" });
    const host = parentHost(client);
    const id = host.agent.issueId();
    expect(id).toBe("s1");
    host.agent.sent(idKey(id), { kind: "own", method: "x", answer: () => {} });
    expect(host.answerer("s1")).toBe(host.agent);
    expect(host.answerer(1)).toBe(client);
    expect(host.answerer(null)).toBe(client);
    // What goes to the successor leaves through the parent, wrapped in the parent's dialect.
    host.agent.peer.send({ jsonrpc: "2.0", id: "s1", method: "session/new", params: {} });
    expect(parent.received.at(-1)).toMatchObject({ id: "s1", method: "proxy/successor", params: { method: "session/new" } });
  });
});
