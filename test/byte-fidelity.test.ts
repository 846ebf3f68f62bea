/**
 * Byte-faithful forwarding: what a peer writes reaches the other end byte for byte, up to the ids
 * Cordon rewrites per hop — number spellings (`1.0`, `-0.0`, integers past 2^53), escapes
 * (`\u00e9`, `\/`), whitespace and key order included — through 0 proxies and through three
 * pass-through WASM proxies.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, ROOT } from "./helpers/paths.js";
import { RawClient } from "./helpers/raw-client.js";

const AGENT = [NODE, `${ROOT}test/peers/raw-line-agent.mjs`];
const open: RawClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** Raw lines the client received, kept by tapping stdout beside the RawClient's own parsing. */
function start(proxies: number) {
  const flags = Array.from({ length: proxies }, () => ["--proxy", proxyWasm("passthrough")]).flat();
  const client = new RawClient(NODE, [CORDON, "run", ...flags, "--", ...AGENT]);
  open.push(client);
  const lines: string[] = [];
  let buffer = "";
  client.child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    const parts = buffer.split("\n");
    buffer = parts.pop()!;
    lines.push(...parts);
  });
  return { client, lines };
}

/** The line the agent received for the request with this method (as it reported it). */
async function agentLine(client: RawClient, method: string): Promise<string> {
  const report = await client.waitFor((m) => m.method === "_test/line" && JSON.parse(m.params.line).method === method);
  return report.params.line;
}

const sameUpToId = (a: string, b: string) =>
  expect(a.replace(/"id":("[^"]*"|\d+)/, '"id":ID')).toBe(b.replace(/"id":("[^"]*"|\d+)/, '"id":ID'));

for (const proxies of [0, 3]) {
  describe(`through ${proxies} proxies`, () => {
    it("a request's params, a response and a notification arrive as their sender spelled them", async () => {
      const { client, lines } = start(proxies);
      await client.request("initialize", { protocolVersion: 1 });
      const request = `{"jsonrpc":"2.0","id":"q1","method":"_x/notify","params":{ "n": 1.0, "big": 9007199254740993, "s": "\\u00e9\\/", "deep": {"a": [ -0.0, 1E+2 ]} }}`;
      client.send(request);
      await client.waitFor((m) => m.id === "q1");
      sameUpToId(await agentLine(client, "_x/notify"), request);
      const response = lines.find((l) => l.includes('"id":"q1"'))!;
      sameUpToId(
        response,
        `{"jsonrpc":"2.0","id":1,"result":{ "n" : 1.0, "big": 12345678901234567890, "s": "caf\\u00e9 \\/", "nested": {"a":[1.50, -0.0]} }}`,
      );
      const note = lines.find((l) => l.includes('"_x/note"'))!;
      expect(note).toBe(
        `{"jsonrpc":"2.0","method":"_x/note","params":{ "n" : 1.0, "big": 12345678901234567890, "s": "caf\\u00e9 \\/ \\ud83d\\ude00", "_meta": {"k": [ 1e2 ]} }}`,
      );
    });

    if (proxies === 0) {
      it("with no proxy the id is replaced in place: a request keeps its key order and spacing", async () => {
        const { client } = start(0);
        await client.request("initialize", { protocolVersion: 1 });
        const request = `{ "params" : {"x" : 1.0}, "method" : "_x/odd", "id" : 42, "jsonrpc" : "2.0" }`;
        client.send(request);
        await client.waitFor((m) => m.id === 42);
        const seen = await agentLine(client, "_x/odd");
        expect(seen.replace(/"id" : \d+/, '"id" : ID')).toBe(request.replace('"id" : 42', '"id" : ID'));
      });
    }
  });
}
