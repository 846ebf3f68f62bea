/**
 * The sandbox-level hostile suite (`sandbox-bounds.test.ts`: table bombs, oversized and piled-up
 * sends, CPU and output budgets, legit 10 MiB traffic) again, with every guest in a
 * `ThreadSandbox` — in this test's own thread, so the process surviving is part of the check.
 *
 * One adjustment: the slow-but-legal guest spins a sixth as long per delivery. Metered, its tight
 * loop (7 instructions) runs ~2.5× slower in baseline-compiled code, so at the original length its
 * first delivery alone would exceed the 0.5 s CPU budget — still stopped by the budget, but the
 * test wants some deliveries to pass first.
 */
import { vi } from "vitest";

vi.mock("./worker-sandbox.js", async () => {
  const { ThreadSandbox } = await import("./thread-sandbox.js");
  return { WorkerSandbox: ThreadSandbox };
});

vi.mock("../../test/fixtures/hostile/sandbox-wat.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../test/fixtures/hostile/sandbox-wat.js")>();
  return { ...original, slowEcho: (iterations: number) => original.slowEcho(Math.round(iterations / 6)) };
});

await import("./sandbox-bounds.test.js");
