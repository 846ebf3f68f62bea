import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["runtime/**/*.test.ts", "proxies/**/*.test.ts", "sdk-as/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests spawn real processes and workers; two cores, so keep the fan-out modest.
    maxWorkers: 2,
  },
});
