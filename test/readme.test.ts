/**
 * The README's commands, run as written. Every ```sh block marked `<!-- runnable … -->` is run,
 * in README order, as one bash script (`set -euo pipefail`: the first failing command fails the
 * test), the way a reader follows the page in one terminal: from the checkout, stdin closed (a
 * client that hangs up at once), HOME a fresh temporary folder, and `cordon` installed the way
 * `npm i -g` installs it — a global prefix whose `lib/node_modules/@cordon/cli` is this checkout
 * and whose `bin/cordon` is its `bin/cordon.js`. Only cheap blocks are marked: nothing that builds
 * (`make test` has built the proxies before this runs) and nothing that needs the network.
 *
 * Also checked over every sh block, marked or not: no bare `acpx` (it is a dev dependency, not on
 * PATH; `npx acpx` is), and `npm pack` in the checkout only after `make build` (dist/ is not in
 * a clone).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/paths.js";

const README = readFileSync(join(ROOT, "README.md"), "utf8");

interface Block {
  line: number;
  text: string;
  runnable: boolean;
}

/** The README's ```sh blocks, each marked runnable when a `<!-- runnable … -->` line comes just before it. */
function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[i])) continue;
    let j = i - 1;
    while (j >= 0 && lines[j].trim() === "") j--;
    const runnable = j >= 0 && /^<!--\s*runnable\b.*-->\s*$/.test(lines[j]);
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end].startsWith("```")) end++;
    blocks.push({ line: start, text: lines.slice(start, end).join("\n"), runnable });
    i = end;
  }
  return blocks;
}

/** The shell commands of a block, comments dropped. */
const commands = (block: Block) =>
  block.text
    .split("\n")
    .map((l) => l.replace(/(^|\s)#.*$/, "").trim())
    .filter(Boolean);

function run(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("README", () => {
  const blocks = shellBlocks(README);

  it("never runs acpx bare, and packs the checkout only after make build", () => {
    const bare = blocks.flatMap((b) =>
      commands(b)
        .filter((c) => /(^|[;&|]\s*)acpx\s/.test(c))
        .map((c) => `line ${b.line}: ${c}`),
    );
    expect(bare).toEqual([]);
    const unbuilt = blocks.flatMap((b) =>
      commands(b)
        .filter((c) => /\bnpm pack\b/.test(c))
        .filter((c) => !/\bmake build\b/.test(c.slice(0, c.indexOf("npm pack"))))
        .map((c) => `line ${b.line}: ${c}`),
    );
    expect(unbuilt).toEqual([]);
  });

  it("runs every block marked runnable, as written, with cordon installed and a fresh HOME", async () => {
    const runnable = blocks.filter((b) => b.runnable);
    expect(runnable.length).toBeGreaterThanOrEqual(2);
    const home = mkdtempSync(join(tmpdir(), "cordon-readme-home-"));
    const prefix = mkdtempSync(join(tmpdir(), "cordon-readme-prefix-"));
    mkdirSync(join(prefix, "lib", "node_modules", "@cordon"), { recursive: true });
    mkdirSync(join(prefix, "bin"));
    symlinkSync(ROOT.replace(/\/$/, ""), join(prefix, "lib", "node_modules", "@cordon", "cli"));
    symlinkSync(join(ROOT, "bin", "cordon.js"), join(prefix, "bin", "cordon"));
    const script = [
      "set -euo pipefail",
      ...runnable.flatMap((b, i) => [`echo "--- README line ${b.line}" >&2`, b.text, `echo "README block ${i + 1} ok"`]),
    ].join("\n");
    const env = {
      ...process.env,
      HOME: home,
      PATH: `${join(prefix, "bin")}:${process.env.PATH}`,
      npm_config_prefix: prefix,
      NPM_CONFIG_PREFIX: prefix,
      npm_config_offline: "true", // nothing here may need the registry
      CORDON_LOG: "warn",
    };
    const { code, stdout, stderr } = await run(script, env);
    expect({ code, tail: stderr.split("\n").slice(-30).join("\n") }).toEqual({ code: 0, tail: expect.any(String) });
    for (let i = 1; i <= runnable.length; i++) expect(stdout).toContain(`README block ${i} ok`);
    // What the blocks say they do, seen: the help, the inspected manifest, and acpx's answers through the chain.
    expect(stdout).toMatch(/^Usage:/m);
    expect(stdout).toMatch(/^redact \d+\.\d+\.\d+ — /m);
    expect(stdout).toContain("here is a fake openai API key: [REDACTED]");
    expect(stdout).toContain("permission allowed: Delete cache");
  }, 180_000);
});
