/**
 * `cordon remove <name> [--config chain.json]`: drops the chain entry of that name and its lock
 * entry, each file written atomically. The stored component stays (another chain may use it).
 */
import { type ChainFiles, openChain, saveChain } from "./chain-files.js";
import { EXIT, failure, parseCommand, UsageError } from "./distribution-command.js";

const USAGE = "usage: cordon remove <name> [--config chain.json]\n";

export async function remove(argv: string[]): Promise<number> {
  let files: ChainFiles | undefined;
  try {
    const { values, positionals } = parseCommand("remove", argv, ["config"]);
    if (values.help) {
      process.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (positionals.length !== 1) throw new UsageError(`cordon remove: give exactly one proxy name\n${USAGE}`);
    const [name] = positionals;
    files = await openChain(values.config);
    const proxies = files.raw.proxies ?? [];
    const index = proxies.findIndex((p) => p.name === name);
    if (index === -1 && !files.lock.proxies[name]) throw new UsageError(`cordon remove: no proxy named "${name}" in ${files.configPath}`);
    if (index !== -1) proxies.splice(index, 1);
    delete files.lock.proxies[name];
    await saveChain(files);
    process.stdout.write(`removed "${name}" from ${files.configPath}\n`);
    return EXIT.ok;
  } catch (error) {
    return failure("remove", error);
  } finally {
    await files?.release();
  }
}
