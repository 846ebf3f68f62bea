import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

// The reference agent keeps sessions on disk; each test run gets its own store, not the user's.
process.env.CORDON_AGENT_STORE ??= mkdtempSync(join(tmpdir(), "cordon-test-store-"));

export default defineConfig({
  test: {
    include: ["runtime/**/*.test.ts", "proxies/**/*.test.ts", "sdk-as/**/*.test.ts", "test/**/*.test.ts", "bench/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests spawn real processes and workers; two cores, so keep the fan-out modest.
    maxWorkers: 2,
  },
});
