import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChainBusy, lockChain } from "./chain-lock.js";

const config = () => join(mkdtempSync(join(tmpdir(), "cordon-chain-lock-")), "chain.json");

describe("lockChain", () => {
  it("lets one command at a time change a chain, and names the holder to the next", async () => {
    const path = config();
    const release = await lockChain(path);
    expect(readFileSync(`${path}.busy`, "utf8")).toBe(`${process.pid}\n`);
    const second = await lockChain(path, 300).then(
      () => null,
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(ChainBusy);
    expect((second as Error).message).toContain(`${path} is being changed by another cordon command (${path}.busy, pid ${process.pid})`);
    await release();
    expect(existsSync(`${path}.busy`)).toBe(false);
    await (await lockChain(path, 0))();
  });

  it("waits for the holder to finish", async () => {
    const path = config();
    const release = await lockChain(path);
    const waiting = lockChain(path, 5_000);
    setTimeout(() => void release(), 200);
    await (await waiting)();
  });

  it("takes over a lock left by a command that died", async () => {
    const path = config();
    writeFileSync(`${path}.busy`, "2147483646\n"); // above any pid_max: no such process
    const release = await lockChain(path, 0);
    expect(readFileSync(`${path}.busy`, "utf8")).toBe(`${process.pid}\n`);
    await release();
  });
});
