/**
 * `cordon run` sets V8's incremental-marking triggers for its own process (heap-tuning.ts), says so
 * at debug level, and leaves V8's defaults with `CORDON_V8_TUNING=off`. The effect on the collector
 * is measured by the bench (README, Benchmarks), not asserted here.
 */
import { describe, expect, it } from "vitest";
import { CORDON, NODE, proxyWasm, SCRIPTED_AGENT } from "../../test/helpers/paths.js";
import { RawClient } from "../../test/helpers/raw-client.js";
import { HEAP_FLAGS, tuneHeap } from "./heap-tuning.js";

/** The stderr of a `cordon run` through one proxy, after one answered `initialize`. */
async function runLog(env: Record<string, string>): Promise<string> {
  const client = new RawClient(NODE, [CORDON, "run", "--proxy", proxyWasm("passthrough"), "--", ...SCRIPTED_AGENT], {
    CORDON_LOG: "debug",
    ...env,
  });
  try {
    const answer = await client.request("initialize", { protocolVersion: 1 });
    expect(answer.result?.protocolVersion).toBe(1);
  } finally {
    await client.close();
  }
  return client.stderr;
}

describe("V8 heap tuning", () => {
  it("is off with CORDON_V8_TUNING=off, else sets the two marking triggers", () => {
    expect(tuneHeap({ CORDON_V8_TUNING: "off" })).toBeNull();
    expect(HEAP_FLAGS).toMatch(/^--incremental-marking-soft-trigger=\d+ --incremental-marking-hard-trigger=\d+$/);
  });

  it("is applied by cordon run, and said at debug level; not with CORDON_V8_TUNING=off", async () => {
    expect(await runLog({})).toContain(`V8 heap: ${HEAP_FLAGS}`);
    expect(await runLog({ CORDON_V8_TUNING: "off" })).not.toContain("V8 heap:");
  });
});
