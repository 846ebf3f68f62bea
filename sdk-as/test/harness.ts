/**
 * The repository's test harness for AssemblyScript proxies: the SDK's testing kit
 * (`@cordon/sdk-as/testing`, sdk-as/testing/) plus builders for the example proxies and the SDK's
 * fixtures. Every assertion in the proxy and SDK tests goes through the real .wasm.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { type Manifest, readManifest } from "../../runtime/sandbox/manifest.js";
import { loadProxy } from "../testing/index.js";
import { buildProxy } from "../tools/build.js";

export * from "../testing/index.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Builds (when stale) and loads `proxies/dist/<name>.wasm` from `proxies/<name>/<name>.ts`. */
export async function loadExampleProxy(name: string, options: { grants?: string[] } = {}): Promise<LoadedComponent> {
  const out = join(ROOT, "proxies", "dist", `${name}.wasm`);
  await buildProxy({ entry: join(ROOT, "proxies", name, `${name}.ts`), out });
  return loadProxy(out, options);
}

/** The `cordon:manifest` embedded in a built example proxy (after `loadExampleProxy`). */
export function exampleManifest(name: string): Manifest | null {
  return readManifest(readFileSync(join(ROOT, "proxies", "dist", `${name}.wasm`)));
}

/**
 * Builds (when stale) and loads an SDK test fixture `sdk-as/test/fixtures/<name>.ts`. `grants` are
 * the WASI grants the load is checked against (a proxy-wasi fixture needs them).
 */
export async function loadFixture(name: string, options: { grants?: string[] } = {}): Promise<LoadedComponent> {
  const out = join(ROOT, "sdk-as", "test", "fixtures", "dist", `${name}.wasm`);
  await buildProxy({ entry: join(ROOT, "sdk-as", "test", "fixtures", `${name}.ts`), out });
  return loadProxy(out, options);
}
