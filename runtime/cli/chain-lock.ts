/**
 * One distribution command at a time per chain config: `add`, `install`, `update` and `remove` read
 * the config and its lock, work (often over the network), then write both; two at once would each
 * write what it read and lose the other's change. The holder creates `<config>.busy` (exclusively,
 * with its pid) before reading and removes it after writing. A command finding it waits up to
 * `waitMs`, then gives up naming the holder; a file whose process is gone is taken over.
 */
import { readFile, rm, writeFile } from "node:fs/promises";

export class ChainBusy extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ChainBusy";
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Takes the config's lock; resolves to its release. */
export async function lockChain(configPath: string, waitMs = 10_000): Promise<() => Promise<void>> {
  const path = `${configPath}.busy`;
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      await writeFile(path, `${process.pid}\n`, { flag: "wx" });
      return () => rm(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const pid = Number.parseInt(await readFile(path, "utf8").catch(() => ""), 10);
    if (Number.isInteger(pid) && pid > 0 && !alive(pid)) {
      await rm(path, { force: true }); // left by a command that died
      continue;
    }
    if (Date.now() > until) {
      throw new ChainBusy(
        `${configPath} is being changed by another cordon command (${path}, pid ${Number.isNaN(pid) ? "unknown" : pid}); try again when it is done, or remove ${path} if no such command runs`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
