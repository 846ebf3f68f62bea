/**
 * `chain.lock.json`, beside `chain.json` (paired by name, as package.json / package-lock.json):
 * per chain entry name, exactly which bytes run — package, version, the tarball's path relative to
 * the registry (so a mirror serves it too), its sha512 `integrity`, the `.wasm`'s sha256 — and the
 * authority that version *requests*. It holds no approvals: what the user grants stays the
 * config's `grants`, and the invariant requested ⊆ granted is checked against it.
 *
 * Deterministic: keys sorted at every level, arrays sorted by the writer, 2-space indent, LF,
 * a final newline, and no clock time but the registry's publish time. Same inputs, same bytes.
 */
import { readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../atomic-write.js";

const LOCKFILE_VERSION = 1;

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lowercase hex digits");

const lockEntry = z
  .object({
    spec: z.string().min(1),
    package: z.string().min(1),
    version: z.string().min(1),
    resolved: z.string().min(1),
    integrity: z.string().regex(/^sha512-[A-Za-z0-9+/]+={0,2}$/, "expected a sha512 SRI (sha512-…)"),
    publishedAt: z.string().optional(),
    wasm: z.object({ path: z.string().min(1), sha256: hex64, size: z.number().int().nonnegative() }).strict(),
    requested: z.object({ grants: z.array(z.string()), wasi: z.array(z.string()) }).strict(),
    registrySignature: z.union([
      z.object({ status: z.literal("verified"), keyid: z.string() }).strict(),
      z.object({ status: z.literal("not-offered") }).strict(),
    ]),
  })
  .strict();

const lockfile = z
  .object({
    lockfileVersion: z.literal(LOCKFILE_VERSION),
    proxies: z.record(z.string(), lockEntry),
  })
  .strict();

export type LockEntry = z.infer<typeof lockEntry>;
export type Lockfile = z.infer<typeof lockfile>;

export class LockfileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LockfileError";
  }
}

/** `chain.json` → `chain.lock.json`; `x` → `x.lock.json`. */
export function lockPathFor(configPath: string): string {
  const name = basename(configPath);
  return join(dirname(configPath), `${name.endsWith(".json") ? name.slice(0, -".json".length) : name}.lock.json`);
}

const emptyLock = (): Lockfile => ({ lockfileVersion: LOCKFILE_VERSION, proxies: {} });

/** The lock at `path`; an empty one when the file does not exist. Errors name the file and field. */
export async function readLockfile(path: string): Promise<Lockfile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyLock();
    throw new LockfileError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new LockfileError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  const parsed = lockfile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LockfileError(`${path}: invalid lockfile: ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
  }
  return parsed.data;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** The lock's bytes: the same lock always gives the same text. */
export function serializeLockfile(lock: Lockfile): string {
  const proxies = Object.fromEntries(
    Object.entries(lock.proxies).map(([name, e]) => [
      name,
      { ...e, requested: { grants: [...e.requested.grants].sort(), wasi: [...e.requested.wasi].sort() } },
    ]),
  );
  return `${JSON.stringify(sortKeys({ ...lock, proxies }), null, 2)}\n`;
}

export async function writeLockfile(path: string, lock: Lockfile): Promise<void> {
  await writeFileAtomic(path, serializeLockfile(lock));
}
