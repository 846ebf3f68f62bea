/**
 * The only WASI a proxy can ever be given: the wall clock and randomness, and only when its chain
 * config grants them (`"grants": ["wasi:clocks"]`, `["wasi:random"]`). They reveal nothing about
 * the machine and reach nothing outside the guest. Filesystem, sockets, environment, CLI, HTTP —
 * every other WASI interface — stay refused whatever the config says.
 *
 * The implementations are `@bytecodealliance/preview2-shim`'s; the canonical-ABI lowering (the
 * `retptr` layouts below) is done here, by the same host that lowers the channel, so no jco glue
 * runs per call. Only functions without resources are offered (no pollables).
 */
import { createRequire } from "node:module";

type Shim = typeof import("@bytecodealliance/preview2-shim/clocks") & typeof import("@bytecodealliance/preview2-shim/random");
let shim: Shim | null = null;

/** The shim, loaded the first time a guest is granted WASI (loading it costs start-up time every other chain would pay for nothing). */
function loadShim(): Shim {
  if (shim === null) {
    const require = createRequire(import.meta.url);
    shim = { ...require("@bytecodealliance/preview2-shim/clocks"), ...require("@bytecodealliance/preview2-shim/random") } as Shim;
  }
  return shim;
}

export const WASI_GRANTS = ["wasi:clocks", "wasi:random"] as const;
export type WasiGrant = (typeof WASI_GRANTS)[number];

/** Interface (without version) → the grant it needs and the functions offered from it. */
const INTERFACES: Record<string, { grant: WasiGrant; functions: string[] }> = {
  "wasi:clocks/wall-clock": { grant: "wasi:clocks", functions: ["now", "resolution"] },
  "wasi:random/random": { grant: "wasi:random", functions: ["get-random-bytes", "get-random-u64"] },
  "wasi:random/insecure": { grant: "wasi:random", functions: ["get-insecure-random-bytes", "get-insecure-random-u64"] },
  "wasi:random/insecure-seed": { grant: "wasi:random", functions: ["insecure-seed"] },
};

/** `wasi:random/random@0.2.3` → `wasi:random/random`, for any 0.2.x. */
function unversioned(name: string): string | null {
  const m = /^(wasi:[a-z-]+\/[a-z-]+)@0\.2\.\d+$/.exec(name);
  return m ? m[1] : null;
}

/** The grant a WASI interface needs, or null when no grant can make it available. */
export function grantForInterface(name: string): WasiGrant | null {
  const base = unversioned(name);
  return base && INTERFACES[base] ? INTERFACES[base].grant : null;
}

/** Whether a core import (module, field) is a WASI function the grants allow. */
export function allowedWasiImport(module: string, field: string, grants: readonly string[]): boolean {
  const base = unversioned(module);
  const entry = base ? INTERFACES[base] : undefined;
  return !!entry && grants.includes(entry.grant) && entry.functions.includes(field);
}

export interface GuestMemory {
  memory(): WebAssembly.Memory;
  realloc(oldPtr: number, oldSize: number, align: number, newSize: number): number;
  /** Charges the work of a call to the guest's fuel, before it is done (throws when it runs out). */
  charge?(units: number): void;
}

/** Fuel per random byte (generating one costs about as much as a few simple instructions). */
const RANDOM_BYTE_FUEL = 4;

/** Largest random buffer one call may ask for (the guest names the length). */
const MAX_RANDOM_BYTES = 1 << 20;

/** Host functions for the granted WASI imports of `module`, lowered for the guest. */
/** A host function handed to the guest as an import (its arguments are whatever the ABI passes). */
type HostFunction = (...args: never[]) => unknown;

export function wasiImports(
  module: WebAssembly.Module,
  grants: readonly string[],
  guest: GuestMemory,
): Record<string, Record<string, HostFunction>> {
  const { wallClock, random, insecure, insecureSeed } = loadShim();
  const view = () => new DataView(guest.memory().buffer);
  const writeDatetime = (retptr: number, t: { seconds: bigint; nanoseconds: number }) => {
    const v = view();
    v.setBigUint64(retptr, t.seconds, true);
    v.setUint32(retptr + 8, t.nanoseconds, true);
  };
  const bytes = (source: (len: bigint) => Uint8Array) => (len: bigint, retptr: number) => {
    if (len > BigInt(MAX_RANDOM_BYTES)) throw new Error(`guest asked for ${len} random bytes (limit ${MAX_RANDOM_BYTES})`);
    guest.charge?.(Number(len) * RANDOM_BYTE_FUEL);
    const data = source(len);
    const ptr = guest.realloc(0, 0, 1, data.length) >>> 0;
    new Uint8Array(guest.memory().buffer, ptr, data.length).set(data);
    const v = view();
    v.setUint32(retptr, ptr, true);
    v.setUint32(retptr + 4, data.length, true);
  };
  const impl: Record<string, HostFunction> = {
    now: (retptr: number) => writeDatetime(retptr, wallClock.now()),
    resolution: (retptr: number) => writeDatetime(retptr, wallClock.resolution()),
    "get-random-bytes": bytes((n) => random.getRandomBytes(n)),
    "get-random-u64": () => random.getRandomU64(),
    "get-insecure-random-bytes": bytes((n) => insecure.getInsecureRandomBytes(n)),
    "get-insecure-random-u64": () => insecure.getInsecureRandomU64(),
    "insecure-seed": (retptr: number) => {
      const [a, b] = insecureSeed.insecureSeed();
      const v = view();
      v.setBigUint64(retptr, a, true);
      v.setBigUint64(retptr + 8, b, true);
    },
  };
  const imports: Record<string, Record<string, HostFunction>> = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (!allowedWasiImport(imp.module, imp.name, grants)) continue;
    (imports[imp.module] ??= {})[imp.name] = impl[imp.name];
  }
  return imports;
}
