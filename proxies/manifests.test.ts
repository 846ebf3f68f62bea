/**
 * Every example proxy, as built, declares what it watches: a chain of them then stays cheap, since
 * what a proxy does not watch is routed past it (interest filters). Read from the built `.wasm`,
 * the manifest the conductor itself reads.
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadComponent } from "../runtime/sandbox/component-loader.js";
import { proxyWasm, ROOT } from "../test/helpers/paths.js";

const names = readdirSync(join(ROOT, "proxies"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== "dist")
  .map((entry) => entry.name);

describe("the example proxies' manifests", () => {
  const cacheDir = mkdtempSync(join(tmpdir(), "cordon-manifests-"));
  it.each(names)("%s declares what it watches", async (name) => {
    const { manifest } = await loadComponent(proxyWasm(name), { cacheDir });
    expect(manifest?.watches, `${name}'s manifest has no "watches"`).toBeDefined();
    expect(Array.isArray(manifest!.watches!.methods) || Array.isArray(manifest!.watches!.updates)).toBe(true);
  });
});
