/**
 * The two files the distribution commands (`add`, `install`, `update`, `remove`) edit together: the
 * chain config as the user wrote it (kept as raw JSON, so fields and entries these commands do not
 * own survive byte-for-byte in meaning) and its lock. Saving validates the config with the same
 * schema `cordon run` uses, then writes the lock and then the config, each atomically, so a crash
 * leaves either both old, or a new lock the old config still agrees with where it matters (the
 * lock only ever gains entries the config then names).
 */
import { readFile, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { writeFileAtomic } from "../atomic-write.js";
import { type Lockfile, lockPathFor, readLockfile, serializeLockfile } from "../distribution/lockfile.js";
import { type RegistrySettings, registrySettings } from "../distribution/npmrc.js";
import { ConfigError, type PackageProxyEntry, parseChainConfigFile } from "./chain-config.js";
import { lockChain } from "./chain-lock.js";

export interface ChainFiles {
  configPath: string;
  lockPath: string;
  /** The config as written. */
  raw: Record<string, unknown> & { proxies?: Record<string, unknown>[] };
  /** Whether the config existed (`add` creates it). */
  existed: boolean;
  lock: Lockfile;
  /** The lock's text as read, to write only when it changed. */
  lockText: string;
  /** Lets other commands change this chain again (`chain-lock.ts`); call when done, written or not. */
  release(): Promise<void>;
}

export const DEFAULT_CONFIG = "chain.json";

/** Opens a chain for changing, holding its lock (`release()` when done). */
export async function openChain(configPath: string | undefined, { create = false } = {}): Promise<ChainFiles> {
  const path = resolve(configPath ?? DEFAULT_CONFIG);
  if (
    create &&
    !(await stat(dirname(path)).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    throw new ConfigError(`cannot create chain config ${path}: its folder does not exist`);
  }
  const release = await lockChain(path);
  try {
    return await readChain(path, create, release);
  } catch (error) {
    await release();
    throw error;
  }
}

async function readChain(path: string, create: boolean, release: () => Promise<void>): Promise<ChainFiles> {
  let text: string | null = null;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || !create) {
      throw new ConfigError(`cannot read chain config ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  if (
    text === null &&
    !(await stat(dirname(path)).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    throw new ConfigError(`cannot create chain config ${path}: its folder does not exist`);
  }
  if (text !== null) parseChainConfigFile(text, path); // the same errors as cordon run
  const raw = text === null ? { proxies: [] } : JSON.parse(text);
  const lockPath = lockPathFor(path);
  const lock = await readLockfile(lockPath);
  return { configPath: path, lockPath, raw, existed: text !== null, lock, lockText: serializeLockfile(lock), release };
}

/** The config's package entries (validated), with their positions. */
export function packageEntries(files: ChainFiles): (PackageProxyEntry & { index: number })[] {
  const config = parseChainConfigFile(JSON.stringify(files.raw), files.configPath);
  return config.proxies.flatMap((p, index) => ("package" in p ? [{ ...p, index }] : []));
}

export const registriesFor = (files: ChainFiles, flag: string | undefined): RegistrySettings =>
  registrySettings(dirname(files.configPath), flag);

/** Validates the config, then writes the lock (if changed) and the config (unless `lockOnly`), each atomically. */
export async function saveChain(files: ChainFiles, { lockOnly = false } = {}): Promise<void> {
  const configText = `${JSON.stringify(files.raw, null, 2)}\n`;
  parseChainConfigFile(configText, files.configPath);
  const lockText = serializeLockfile(files.lock);
  if (lockText !== files.lockText) await writeFileAtomic(files.lockPath, lockText);
  if (!lockOnly) await writeFileAtomic(files.configPath, configText);
}

/** `--config x` for a command line shown to the user, when it is not the default. */
export function configFlag(configPath: string): string {
  return resolve(configPath) === resolve(DEFAULT_CONFIG) ? "" : ` --config ${configPath}`;
}
