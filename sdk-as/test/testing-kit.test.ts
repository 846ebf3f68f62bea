/**
 * The SDK's testing kit: ProxyUnderTest (load, start, send/sides, fromClient/fromAgent), the
 * message builders, and golden transcripts (runTranscript, cordon test / cordon-test-proxy).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { CORDON, NODE } from "../../test/helpers/paths.js";
import {
  agentUpdate,
  clientPrompt,
  clientRequest,
  clientUpdate,
  fromClient,
  loadFixture,
  ProxyUnderTest,
  parseTranscript,
  ROOT,
  result,
  runTranscript,
  sides,
  textChunk,
  toAgent,
} from "./harness.js";

const HELPERS_WASM = join(ROOT, "sdk-as", "test", "fixtures", "dist", "helpers.wasm");
const GOLDEN = join(ROOT, "sdk-as", "test", "transcripts", "helpers.jsonl");
const dir = mkdtempSync(join(tmpdir(), "cordon-kit-"));
let helpers: LoadedComponent;
let aborts: LoadedComponent;
beforeAll(async () => {
  helpers = await loadFixture("helpers");
  aborts = await loadFixture("aborts");
}, 180_000);

const golden = () => readFileSync(GOLDEN, "utf8");
const edit = (text: string, line: number, replace: (l: string) => string) =>
  text
    .split("\n")
    .map((l, i) => (i === line - 1 ? replace(l) : l))
    .join("\n");

describe("ProxyUnderTest", () => {
  it("start() configures and initializes; send() sorts the output by direction, envelopes unwrapped", async () => {
    const p = await ProxyUnderTest.start(HELPERS_WASM, {}, { name: "kit" });
    const sent = p.send(clientPrompt("go", "s", 4));
    expect(sent.toClient).toEqual([]);
    expect(sent.answers).toEqual([]);
    expect(sent.toAgent).toEqual([
      {
        jsonrpc: "2.0",
        id: expect.any(Number),
        method: "session/prompt",
        params: { sessionId: "s", prompt: [{ type: "text", text: "go" }] },
      },
    ]);
    expect(p.wire.at(-1)).toBe(
      JSON.stringify(toAgent("session/prompt", { sessionId: "s", prompt: [{ type: "text", text: "go" }] }, sent.toAgent[0].id)),
    );
    expect(p.fromAgent("fs/read_text_file", { sessionId: "s", path: "/a" }, "r1").toClient).toEqual([
      clientRequest("fs/read_text_file", { sessionId: "s", path: "/a" }, expect.any(Number)),
    ]);
    expect(sides(p.deliver(agentUpdate(textChunk("x"), "s")))).toEqual({
      toClient: [clientUpdate(textChunk("x"), "s")],
      toAgent: [],
      answers: [],
    });
    expect(p.fromClient("session/cancel", { sessionId: "s" }).toAgent).toEqual([
      { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } },
    ]);
    expect(fromClient("x", undefined, 1)).toEqual({ jsonrpc: "2.0", id: 1, method: "x" });
    expect(p.deliver(result(sent.toAgent[0].id, { stopReason: "end_turn" })).at(-1)).toEqual(result(4, { stopReason: "end_turn" }));
  });
});

describe("golden transcripts", () => {
  it("the golden transcript passes", () => {
    expect(runTranscript(helpers, golden())).toEqual({ ok: true, steps: 13, failure: null });
  });

  it("a difference names the line, the path and both messages", () => {
    const r = runTranscript(
      helpers,
      edit(golden(), 5, (l) => l.replace('"text": "hi"}}}}}', '"text": "HI"}}}}}')),
    );
    expect(r.ok).toBe(false);
    expect(r.failure!.line).toBe(5);
    expect(r.failure!.message).toMatch(
      /^a message toward the client differs at \.params\.update\.content\.text:\n {2}expected .*"HI".*\n {2}actual {3}.*"hi"/,
    );
  });

  it("a message the transcript does not expect fails at the next delivery", () => {
    const lines = golden().split("\n");
    lines.splice(4, 1); // drop the expected forwarded chunk
    const r = runTranscript(helpers, lines.join("\n"));
    expect(r.failure).toEqual({
      line: 5,
      message: expect.stringMatching(/^the proxy sent toward the client that the transcript does not expect: .*"hi"/),
    });
  });

  it("$names bind to what the proxy chose; a second use must agree", () => {
    const r = runTranscript(
      helpers,
      edit(golden(), 12, (l) => l.replace('"id": "$p"', '"id": "$other"')).replace(
        '{"to": "answer", "message": {"id": 2',
        '{"to": "answer", "message": {"id": "$p"',
      ),
    );
    expect(r.ok).toBe(false);
  });

  it("trap lines check a trap's text; an unexpected trap fails", () => {
    const base = [
      '{"from": "client", "message": {"id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "map"}]}}}',
    ];
    expect(runTranscript(aborts, [...base, '{"trap": "Key does not exist at ~lib/map.ts"}'].join("\n")).ok).toBe(true);
    expect(runTranscript(aborts, base.join("\n")).failure?.message).toMatch(/^the proxy trapped: Key does not exist/);
  });

  it("malformed lines are refused with their line number", () => {
    expect(() => parseTranscript('{"comment": 1}\n{"from": "server", "message": {}}')).toThrow(/"from" is "client" or "agent"/);
    expect(runTranscript(helpers, '{"comment": 1}\nnot json').failure).toEqual({ line: 2, message: expect.stringMatching(/^not JSON/) });
  });

  it("cordon test proxy.wasm transcript.jsonl: ok / FAIL lines and the exit code", () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(
      bad,
      edit(golden(), 14, (l) => l.replace("end_turn", "cancelled")),
    );
    const ok = spawnSync(NODE, [CORDON, "test", HELPERS_WASM, GOLDEN], { encoding: "utf8" });
    expect(ok.stdout).toMatch(/^ok {4}.*helpers\.jsonl \(13 steps\)$/m);
    expect(ok.status).toBe(0);
    const failed = spawnSync(NODE, [join(ROOT, "sdk-as", "tools", "test-proxy.mjs"), HELPERS_WASM, GOLDEN, bad], { encoding: "utf8" });
    expect(failed.stdout).toMatch(/^FAIL {2}.*bad\.jsonl:14: an answer differs at \.result\.stopReason/m);
    expect(failed.status).toBe(1);
  });
});
