/**
 * Every example proxy, as built, declares what it watches: a chain of them then stays cheap, since
 * what a proxy does not watch is routed past it (interest filters). Read from the built `.wasm`,
 * the manifest the conductor itself reads.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
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

  // `watches.answers` lets the answers to the other requests a proxy forwards go past it: its hooks
  // that read answers would then never run for them.
  it.each(names)("%s watches the answers its hooks read", async (name) => {
    const { manifest } = await loadComponent(proxyWasm(name), { cacheDir });
    const answers = manifest?.watches?.answers;
    if (answers === undefined) return; // every answer comes back
    const source = readFileSync(join(ROOT, "proxies", name, `${name}.ts`), "utf8");
    expect(source, `${name} reads answers in onResponse but declares watches.answers`).not.toMatch(/\bonResponse\(/);
    if (/\bonTurnEnd\(/.test(source)) expect(answers, `${name}'s onTurnEnd needs the prompt's answer`).toContain("session/prompt");
  });

  it("context, skills and tool-guard watch no answers; redact only the prompt's (its held text is flushed at the turn's end)", async () => {
    const answers = async (name: string) => (await loadComponent(proxyWasm(name), { cacheDir })).manifest?.watches?.answers;
    expect(await answers("context")).toEqual([]);
    expect(await answers("skills")).toEqual([]);
    expect(await answers("tool-guard")).toEqual([]);
    expect(await answers("redact")).toEqual(["session/prompt"]);
  });
});
