/**
 * What a proxy's guest keeps resident: its linear memory at start and after a long conversation,
 * for every example proxy (each is paid once per chain, per editor window; bench P5). WebAssembly
 * memory never shrinks, so a page grown once is kept for the proxy's life.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { jsonCacheSetting, memoryArgs } from "../tools/memory-options.js";
import { agentUpdate, answer, clientPrompt, loadExampleProxy, loadProxy, ProxyUnderTest, ROOT, textChunk } from "./harness.js";

const KiB = 1024;
const EXAMPLES = ["passthrough", "redact", "context", "tool-guard", "skills", "workspace-tools", "persona", "arrow", "subagent"];

/** `rounds` prompt turns: the prompt, three streamed chunks, the agent's answer. */
function converse(p: ProxyUnderTest, rounds: number): void {
  for (let i = 0; i < rounds; i++) {
    const forwarded = p
      .deliver(clientPrompt(`question ${i}`, "s1", i + 100))
      .find((m) => m.method === "proxy/successor" && m.id !== undefined);
    for (let k = 0; k < 3; k++) p.deliver(agentUpdate(textChunk(`chunk ${i}.${k}`), "s1"));
    if (forwarded) p.deliver(answer(forwarded, { stopReason: "end_turn" }));
  }
}

describe("guest memory", () => {
  // Was 1280 KiB at start and 2560 after the conversation, for every example: json-as's 1 MiB
  // string-cache arena, reserved though the cache is off, and the heap grown around it.
  it.each(EXAMPLES)("%s starts in at most 256 KiB and stays within 512 KiB over 2000 prompt turns", async (name) => {
    const p = new ProxyUnderTest(await loadExampleProxy(name));
    p.configure({});
    p.initialize();
    expect(p.host.memoryBytes).toBeLessThanOrEqual(256 * KiB);
    converse(p, 2000);
    expect(p.host.memoryBytes).toBeLessThanOrEqual(512 * KiB);
  });

  it("sizes json-as's arena to its minimum unless the author turns json-as's cache on", () => {
    for (const off of [undefined, "", "false", " OFF ", "no", "none", "0"]) {
      expect(jsonCacheSetting({ JSON_CACHE: off })).toBeNull();
      expect(memoryArgs({ JSON_CACHE: off })).toContain("JSON_CACHE_SIZE=0");
    }
    for (const on of ["true", "512kb", "1048576"]) {
      expect(jsonCacheSetting({ JSON_CACHE: on })).toBe(on);
      // json-as defines JSON_CACHE_SIZE itself then; a second definition would fail the build
      expect(memoryArgs({ JSON_CACHE: on }).join(" ")).not.toContain("JSON_CACHE_SIZE");
    }
  });

  it("builds with json-as's cache on (JSON_CACHE=true), which brings its arena back", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "cordon-json-cache-")), "passthrough.wasm");
    const tool = join(ROOT, "sdk-as", "tools", "build-proxy.mjs");
    const entry = join(ROOT, "proxies", "passthrough", "passthrough.ts");
    const run = spawnSync(process.execPath, [tool, entry, "-o", out], { encoding: "utf8", env: { ...process.env, JSON_CACHE: "true" } });
    expect(run.status, run.stderr).toBe(0);
    const p = new ProxyUnderTest(await loadProxy(out));
    p.configure({});
    expect(p.host.memoryBytes).toBeGreaterThan(1024 * KiB);
  }, 60_000);
});
