/**
 * The heap's collections (assembly/collect.ts): the SDK builds with AssemblyScript's minimal
 * runtime, whose collector runs only when the SDK calls it, at the end of a delivery. What a
 * delivery leaves behind must be collected (memory stays bounded) and what the proxy keeps must
 * survive every collection.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { clientPrompt, type Json, loadFixture, ProxyUnderTest } from "./harness.js";

const KiB = 1024;
const MiB = 1024 * KiB;

let garbage: LoadedComponent;
beforeAll(async () => {
  garbage = await loadFixture("garbage");
}, 60_000);

/** The text of the one chunk the fixture answers a prompt with. */
function said(out: Json[]): string {
  const chunk = out.find((m) => m.method === "session/update");
  return chunk?.params?.update?.content?.text ?? "";
}

describe("the heap's collections", () => {
  it("collects what deliveries leave behind, however much a small message makes", async () => {
    const p = await ProxyUnderTest.start(garbage);
    // 300 small prompts that each build and drop ~330 KiB (200 strings of 500-700 bytes and one of
    // 200 KiB): ~100 MiB in all. Counted by deliveries alone (every 32), 32 of them would grow
    // memory by ~10 MiB before a collection; memory that grew during a delivery is collected at its end.
    let made = 200 * 512;
    for (let i = 0; i < 200; i++) made += `piece ${i}`.repeat(40).length;
    for (let i = 0; i < 300; i++) expect(said(p.deliver(clientPrompt("make 200", "s1", i + 1)))).toBe(`made ${made}`);
    expect(p.host.memoryBytes).toBeLessThanOrEqual(4 * MiB);
  });

  it("keeps what the proxy holds through collections, among deliveries that make garbage", async () => {
    const p = await ProxyUnderTest.start(garbage);
    const words: string[] = [];
    for (let i = 0; i < 400; i++) {
      if (i % 4 === 0) {
        const word = `w${i}-${"é".repeat(i % 13)}`;
        words.push(word + "!".repeat(word.length));
        expect(said(p.deliver(clientPrompt(`keep ${word}`, "s1", i + 1)))).toBe("kept");
      } else expect(said(p.deliver(clientPrompt(`make ${i % 50}`, i % 3 ? "s1" : "s2", i + 1)))).toMatch(/^made /);
    }
    expect(said(p.deliver(clientPrompt("check", "s1", 9999)))).toBe(words.join(","));
    expect(p.host.memoryBytes).toBeLessThanOrEqual(4 * MiB);
  });
});
