/**
 * The sandbox-level hostile suite (`sandbox-bounds.test.ts`: table bombs, oversized and piled-up
 * sends, CPU and output budgets, legit 10 MiB traffic) again, with every guest in a
 * `ThreadSandbox` — in this test's own thread, so the process surviving is part of the check. (Metered
 * with today's fuel the slow-but-legal guest runs at its unmetered pace, so it needs no shortening.)
 */
import { vi } from "vitest";

vi.mock("./worker-sandbox.js", async () => {
  const { ThreadSandbox } = await import("./thread-sandbox.js");
  return { WorkerSandbox: ThreadSandbox };
});

await import("./sandbox-bounds.test.js");
