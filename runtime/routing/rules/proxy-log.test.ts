/** proxy-log: a proxy's `_cordon/log` lines reach stderr rate-limited per proxy, and say what was dropped. */
import { describe, expect, it } from "vitest";
import { memoryChain } from "../../../test/helpers/memory-chain.js";
import { passThrough } from "../../../test/helpers/memory-peer.js";
import { MAX_LOG_LINES } from "./proxy-log.js";

describe("proxy-log", () => {
  it(`a proxy logging 5,000 lines at once gets ${MAX_LOG_LINES} of them on stderr, one line saying the rest are dropped`, async () => {
    const { proxies, lines, request } = await memoryChain([passThrough, passThrough]);
    for (let i = 0; i < 5_000; i++)
      proxies[0].emit({ jsonrpc: "2.0", method: "_cordon/log", params: { level: "info", message: `line ${i}` } });
    proxies[1].emit({ jsonrpc: "2.0", method: "_cordon/log", params: { level: "info", message: "other proxy" } });
    // Routing goes on meanwhile, and the other proxy is not muted.
    expect((await request("session/new", { cwd: "/", mcpServers: [] })).result.sessionId).toBeDefined();
    expect(lines.filter((l) => /proxy "p0": line \d+/.test(l))).toHaveLength(MAX_LOG_LINES);
    expect(lines.filter((l) => l.includes(`proxy "p0": more than ${MAX_LOG_LINES} log lines in 10 s; dropping`))).toHaveLength(1);
    expect(lines.some((l) => l.includes('proxy "p1": other proxy'))).toBe(true);
  });
});
