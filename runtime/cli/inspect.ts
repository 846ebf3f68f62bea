/**
 * `cordon inspect <file.wasm>`: what a proxy is and what it can touch, before you run it —
 * its manifest, world imports and exports, string encodings, memory and the cap that will
 * apply, what it watches (the messages that enter its sandbox; the rest pass it unseen), and its
 * SHA-256 (to pin in a chain config).
 */
import { basename } from "node:path";
import { loadComponent } from "../sandbox/component-loader.js";
import { PAGE_BYTES, readMemoryLimits } from "../sandbox/memory-cap.js";
import { DEFAULT_LIMITS } from "../sandbox/sandbox.js";
import { grantForInterface, WASI_GRANTS } from "../sandbox/wasi-grants.js";
import { grantLines } from "./grant-words.js";
import { watchLines } from "./watch-words.js";

const size = (pages: number) => {
  const bytes = pages * PAGE_BYTES;
  return bytes < 2 ** 20 ? `${bytes / 1024} KiB` : `${bytes / 2 ** 20} MiB`;
};

export async function inspect(path: string | undefined, json: boolean): Promise<number> {
  if (!path) {
    process.stderr.write("usage: cordon inspect <proxy.wasm> [--json]\n");
    return 2;
  }
  let c;
  try {
    // Inspect with every grant a config could give, and say which ones this component needs.
    c = await loadComponent(path, { grants: WASI_GRANTS, progress: (line) => process.stderr.write(`[cordon] ${line}\n`) });
  } catch (error) {
    process.stderr.write(`cordon inspect: ${(error as Error).message}\n`);
    return 1;
  }
  const memory = readMemoryLimits(c.coreBytes);
  const needs = [...new Set(c.imports.map(grantForInterface).filter((g) => g !== null))];
  const report = {
    file: path,
    sha256: c.sha256,
    manifest: c.manifest,
    imports: c.imports,
    exports: c.exports,
    stringEncoding: c.encodings,
    memory: {
      initialPages: memory?.initial ?? 0,
      declaredMaxPages: memory?.max ?? null,
      defaultCapPages: DEFAULT_LIMITS.maxMemoryPages,
    },
    coreModuleBytes: c.coreBytes.length,
    grantsNeeded: needs,
  };
  if (json) {
    process.stdout.write(JSON.stringify(report, null, 2) + "\n");
    return 0;
  }
  const m = c.manifest;
  const lines = [
    `${m?.name ?? basename(path)}${m?.version ? ` ${m.version}` : ""}${m?.description ? ` — ${m.description}` : ""}`,
    `  file          ${path}`,
    `  sha256        ${c.sha256}`,
    `  imports       ${c.imports.join(", ") || "(none)"}`,
    `  exports       ${c.exports.join(", ")}`,
    `  strings       receive ${c.encodings.receive}, send ${c.encodings.send}`,
    `  memory        starts at ${size(report.memory.initialPages)}; declares ${memory?.max == null ? "no maximum" : `a maximum of ${size(memory.max)}`}; Cordon caps it at ${size(DEFAULT_LIMITS.maxMemoryPages)} unless the chain config sets limits.maxMemoryMiB`,
    `  core module   ${(c.coreBytes.length / 1024).toFixed(1)} KiB`,
    `  grants asked  ${m?.grants?.length ? m.grants.join(", ") : "none"}`,
    ...grantLines(m?.grants ?? [], "                "),
    ...watchLines(m?.watches, "                ").map((line, i) => (i === 0 ? `  watches       ${line}` : line)),
    `  loads only if ${needs.length ? `the chain config grants ${needs.join(" and ")}` : "nothing more: it needs no sandbox grant"}`,
    `  config schema ${m?.config ? JSON.stringify(m.config) : "none declared"}`,
    "",
    needs.length
      ? `It can reach the ACP message channel and, once granted, ${needs.map((g) => (g === "wasi:clocks" ? "the wall clock" : "randomness")).join(" and ")}: no files, environment or network.`
      : "It can reach only the ACP message channel: no files, environment, network, clock or randomness.",
  ];
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}
