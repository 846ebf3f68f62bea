import { describe, expect, it } from "vitest";
import { OrphanUpdates } from "./orphan-updates.js";

const chunk = (text: string) => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });

function orphans(withDeliver: boolean, limits = {}) {
  const delivered: Array<[string, unknown]> = [];
  const warnings: string[] = [];
  const o = new OrphanUpdates(withDeliver ? (id, u) => void delivered.push([id, u]) : undefined, (w) => warnings.push(w), limits);
  return { o, delivered, warnings };
}

describe("orphan updates", () => {
  it("with no setup pending, keeps nothing: each goes to onUpdate as it comes, or is dropped with a warning", () => {
    const given = orphans(true);
    for (let i = 0; i < 10_000; i++) given.o.receive(`ghost-${i}`, chunk("x".repeat(100)));
    expect(given.o.stats).toEqual({ pendingSetups: 0, updates: 0, bytes: 0 });
    expect(given.delivered).toHaveLength(10_000);

    const none = orphans(false);
    for (let i = 0; i < 10_000; i++) none.o.receive(`ghost-${i}`, chunk("x".repeat(100)));
    expect(none.o.stats.updates).toBe(0);
    expect(none.warnings).toHaveLength(10_000); // the connection passes a throttled warn
    expect(none.warnings[0]).toBe(
      'dropped a session/update for session "ghost-0", which this connection did not set up (no session setup is pending; give onUpdate to receive such updates)',
    );
  });

  it("while a setup is pending, holds them in order; the answer claims its session's, and the rest are released when no setup is pending", () => {
    const { o, delivered } = orphans(true);
    const endA = o.setupStarted();
    const endB = o.setupStarted();
    o.receive("s-new", chunk("1"));
    o.receive("other", chunk("o1"));
    o.receive("s-new", chunk("2"));
    expect(o.stats).toMatchObject({ pendingSetups: 2, updates: 3 });
    expect(delivered).toEqual([]);
    expect(o.claim("s-new")).toEqual([chunk("1"), chunk("2")]);
    endA();
    endA(); // idempotent
    expect(o.stats).toMatchObject({ pendingSetups: 1, updates: 1 });
    endB();
    expect(o.stats).toEqual({ pendingSetups: 0, updates: 0, bytes: 0 });
    expect(delivered).toEqual([["other", chunk("o1")]]);
  });

  it("holds at most the bound in count and bytes; beyond, updates pass (or drop) at once", () => {
    const { o, delivered } = orphans(true, { maxUpdates: 5, maxBytes: 1000 });
    o.setupStarted();
    for (let i = 0; i < 20; i++) o.receive("s", chunk(String(i)));
    expect(o.stats.updates).toBe(5);
    expect(delivered).toHaveLength(15);
    const big = orphans(true, { maxUpdates: 100, maxBytes: 1000 });
    big.o.setupStarted();
    for (let i = 0; i < 20; i++) big.o.receive("s", chunk("y".repeat(300)));
    expect(big.o.stats.updates).toBe(2);
    expect(big.o.stats.bytes).toBeLessThanOrEqual(1000);
  });
});
