/**
 * The security suite's parser-differential ring: a hostile AssemblyScript proxy (test/fixtures/
 * hostile/smuggler.ts) writes, from inside a real `cordon run`, messages that JSON.parse — what
 * Cordon's gates read — reads as one thing and another reader as another. What reaches the client
 * and the agent is read with three lax readers (test/helpers/json-readers.ts: Go-style, first-key,
 * raw-key) beside JSON.parse: none of them may read a method, a path, a session or an MCP server
 * the others do not, nothing smuggled may arrive at all, and each refusal is logged and told to
 * the proxy. The rule itself has unit tests in runtime/protocol/i-json.test.ts and in-process
 * routing tests in runtime/routing/conductor.test.ts.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { prompt, session, useConfigChains } from "./helpers/config-chain.js";
import { readers, readings } from "./helpers/json-readers.js";
import { CORDON, NODE, ROOT, SCRIPTED_AGENT } from "./helpers/paths.js";
import { type Json, RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
const SMUGGLER = join(ROOT, "test/fixtures/dist/smuggler.wasm");
const RAW_LINE_AGENT = [NODE, join(ROOT, "test/peers/raw-line-agent.mjs")];

beforeAll(async () => {
  await exec(NODE, [join(ROOT, "sdk-as/tools/build-proxy.mjs"), join(ROOT, "test/fixtures/hostile/smuggler.ts"), "-o", SMUGGLER]);
}, 120_000);

const chain = useConfigChains({ protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } });
const smuggler = { name: "smuggler", wasm: SMUGGLER };

/** A chain with the smuggler whose client keeps the raw lines it reads from then on. */
async function smugglerChain(): Promise<RawClient & { lines: string[] }> {
  const client = await chain([smuggler]);
  client.lines = [];
  return client as RawClient & { lines: string[] };
}

/** The members of `line` each reader must read alike, with what each read where they differ. */
function disagreements(line: string, paths: (string | number)[][]): string[] {
  const found: string[] = [];
  for (const path of paths) {
    const seen = readings(line, ...path);
    const distinct = new Set(Object.values(seen).map((v) => JSON.stringify(v)));
    if (distinct.size > 1) found.push(`${path.join(".")}: ${JSON.stringify(seen)} in ${line}`);
  }
  return found;
}

const ENVELOPE = [["method"], ["id"], ["params", "method"], ["params", "sessionId"], ["params", "path"], ["params", "mcpServers"]];

/** Every smuggled request was answered to the proxy with an error naming I-JSON (the proxy logs it). */
async function proxyWasTold(stderr: () => string, ids: string[]): Promise<void> {
  for (const id of ids) await expect.poll(stderr).toContain(`proxy "smuggler": told ${id}: refused, I-JSON`);
}

describe("the readers this suite uses disagree on each smuggled spelling (so the suite can fail)", () => {
  it("Go-style, first-key and raw-key each read a method JSON.parse does not", () => {
    expect(readings(`{"method":"_x/y","Method":"_cordon/notice"}`, "method")).toMatchObject({ "JSON.parse": "_x/y", go: "_cordon/notice" });
    expect(readings(`{"method":"fs/read_text_file","method":"_x/y"}`, "method")).toMatchObject({
      "JSON.parse": "_x/y",
      "first-key": "fs/read_text_file",
    });
    expect(readings(`{"method":"fs/read_text_file","m\\u0065thod":"_x/y"}`, "method")).toMatchObject({
      "JSON.parse": "_x/y",
      "raw-key": "fs/read_text_file",
    });
    expect(readers.map((r) => r.get(`{"params":{"mcpServers":[1],"mcpServers":[]}}`, "params", "mcpServers"))).toEqual([[], [], [1], []]);
  });
});

describe("a hostile proxy cannot smuggle a message past the gates in a spelling another reader reads otherwise", () => {
  it("toward the client: no forged _cordon/notice or fs/read_text_file reaches it in any reading; refusals logged, the proxy told", async () => {
    const client = await smugglerChain();
    const s = await session(client);
    expect((await prompt(client, s, "client")).result).toEqual({ stopReason: "end_turn" });
    // Everything the proxy sent before forwarding the prompt was routed before its answer (one ordered loop).
    expect(client.lines.flatMap((line) => disagreements(line, ENVELOPE))).toEqual([]);
    for (const reader of readers) {
      const methods = client.lines.map((line) => reader.get(line, "method"));
      expect(methods, reader.name).not.toContain("_cordon/notice");
      expect(methods, reader.name).not.toContain("fs/read_text_file");
    }
    expect(client.lines.filter((line) => line.includes("smuggled"))).toEqual([]);
    await expect.poll(() => client.stderr).toMatch(/proxy "smuggler" sent a session\/update that breaks I-JSON \(RFC 7493\): .*surrogate/);
    await proxyWasTold(() => client.stderr, ["smuggle-go", "smuggle-first", "smuggle-raw"]);
    expect(client.stderr).toMatch(
      /proxy "smuggler" sent a _x\/y that breaks I-JSON \(RFC 7493\): members "method" and "Method" in the top level/,
    );
    expect(client.stderr).toMatch(/proxy "smuggler" sent a _x\/y that breaks I-JSON \(RFC 7493\): member "method" appears twice/);
    expect(client.stderr.match(/proxy "smuggler" sent a \S+ that breaks I-JSON/g)).toHaveLength(7);
    // Cordon and the proxy go on: the next prompt is served.
    expect((await prompt(client, s, "hello")).result).toEqual({ stopReason: "end_turn" });
  });

  it("a repeated path in the agent's forwarded fs/read_text_file is refused; the agent's own request still reaches the client", async () => {
    const client = await smugglerChain(); // no fs:read grant: only the agent's own request may pass
    const reads: Json[] = [];
    client.onRequest = (m) => (reads.push(m), { result: { content: `contents of ${m.params.path}` } });
    const s = await session(client);
    await prompt(client, s, "path");
    const ask = { ask: { method: "fs/read_text_file", params: { sessionId: s, path: "/tmp/ok" } } };
    expect((await prompt(client, s, JSON.stringify([ask, { report: true }]))).result).toEqual({ stopReason: "end_turn" });
    const fsLines = client.lines.filter((line) => readers.some((r) => r.get(line, "method") === "fs/read_text_file"));
    expect(fsLines.flatMap((line) => disagreements(line, ENVELOPE))).toEqual([]);
    expect(reads.map((m) => m.params.path)).toEqual(["/tmp/ok"]);
    const report = await client.waitFor((m) => m.method === "_test/answers");
    expect(report.params.answers[0].result).toEqual({ content: "contents of /tmp/ok" });
    await proxyWasTold(() => client.stderr, ["smuggle-path"]);
    expect(client.stderr).toMatch(/proxy "smuggler" sent a fs\/read_text_file that breaks I-JSON .*member "path" appears twice in params/);
  });
});

describe("answers toward the agent", () => {
  it("a permission answer whose allow only a Go-style reader sees never reaches the agent; the agent gets an error", async () => {
    const client = await chain([smuggler]); // no permission:allow grant
    let asked = 0;
    client.onRequest = () => (asked++, { result: { outcome: { outcome: "cancelled" } } });
    const s = await session(client);
    await prompt(client, s, "allow");
    const options = [
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ];
    const ask = {
      ask: { method: "session/request_permission", params: { sessionId: s, toolCall: { toolCallId: "t1", title: "rm -rf ~" }, options } },
    };
    expect((await prompt(client, s, JSON.stringify([ask, { report: true }]))).result).toEqual({ stopReason: "end_turn" });
    const answer = JSON.stringify((await client.waitFor((m) => m.method === "_test/answers")).params.answers[0]);
    expect(
      disagreements(answer, [
        ["result", "outcome", "optionId"],
        ["result", "outcome", "outcome"],
      ]),
    ).toEqual([]);
    expect(answer).not.toContain("smuggled");
    expect(JSON.parse(answer).error.message).toMatch(
      /proxy "smuggler" answered with a result that breaks I-JSON .*"OptionId" in result\.outcome/,
    );
    expect(client.stderr).toMatch(/proxy "smuggler" answered with a message that breaks I-JSON/);
    expect(asked).toBe(0);
  });
});

describe("toward the agent (inside proxy/successor), and from a native proxy", () => {
  const open: RawClient[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  it("a native --proxy-cmd proxy is held to the same rule: its smuggled notices never reach the client", async () => {
    const native = `${JSON.stringify(NODE)} ${JSON.stringify(join(ROOT, "test/peers/smuggling-native-proxy.mjs"))}`;
    const client = new RawClient(NODE, [CORDON, "run", "--proxy-cmd", native, "--", ...SCRIPTED_AGENT]);
    open.push(client);
    await client.request("initialize", { protocolVersion: 1 });
    client.lines = [];
    const s = await session(client);
    expect((await prompt(client, s, "smuggle")).result).toEqual({ stopReason: "end_turn" });
    expect(client.lines.flatMap((line) => disagreements(line, ENVELOPE))).toEqual([]);
    expect(client.lines.filter((line) => line.includes("smuggled"))).toEqual([]);
    await expect.poll(() => client.stderr.match(/ sent a _x\/y that breaks I-JSON \(RFC 7493\)/g)?.length).toBe(3);
  });

  it("no hidden MCP server, other session or near-spelled method reaches the agent in any reading", async () => {
    // The raw-line agent reports every line it receives, verbatim (`_test/line`).
    const client = new RawClient(NODE, [CORDON, "run", "--proxy", SMUGGLER, "--", ...RAW_LINE_AGENT]);
    open.push(client);
    await client.request("initialize", { protocolVersion: 1 });
    await client.request("session/new", { cwd: "/tmp", mcpServers: [] });
    await prompt(client, "s-1", "agent");
    const agentLines = client.received.filter((m) => m.method === "_test/line").map((m) => m.params.line as string);
    expect(agentLines.some((line) => JSON.parse(line).method === "session/prompt")).toBe(true);
    expect(agentLines.flatMap((line) => disagreements(line, ENVELOPE))).toEqual([]);
    expect(agentLines.filter((line) => line.includes("smuggled"))).toEqual([]);
    await proxyWasTold(() => client.stderr, ["smuggle-mcp", "smuggle-sid"]);
    await expect.poll(() => client.stderr).toMatch(/members "method" and "Method" in params are one name to a reader that ignores case/);
    expect(client.stderr).toMatch(
      /sent a proxy\/successor that breaks I-JSON \(RFC 7493\): member "mcpServers" appears twice in params\.params/,
    );
    expect(client.stderr).toMatch(/member "sessionId" appears twice in params\.params/);
  });
});
