/**
 * The SDK is a package that works outside this repository: `npm pack` of sdk-as/, installed into a
 * fresh project in a temp folder (nothing of the checkout reachable), builds a proxy with one
 * command (`cordon-build-proxy`, the project's `npm run build`) and unit-tests it with one command
 * (`cordon-test-proxy`: golden transcripts + node --test with `@cordon/sdk-as/testing`).
 * npm installs from the packed tarball and the npm cache, else the registry.
 */
import { type SpawnSyncOptions, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./harness.js";

const work = mkdtempSync(join(tmpdir(), "cordon-sdk-package-"));
const project = join(work, "shout");

function run(command: string, args: string[], options: SpawnSyncOptions = {}) {
  const r = spawnSync(command, args, { encoding: "utf8", timeout: 240_000, ...options });
  return { status: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

const SOURCE = `import { Proxy, SessionUpdate, register } from "@cordon/sdk-as";
class Shout extends Proxy {
  onSessionUpdate(update: SessionUpdate): void {
    if (update.isTextChunk) update.text = update.text.toUpperCase();
    this.forward(update);
  }
}
register(new Shout());
`;

const TEST = `import assert from "node:assert/strict";
import { test } from "node:test";
import { ProxyUnderTest, agentUpdate, clientUpdate, textChunk } from "@cordon/sdk-as/testing";
test("shouts", async () => {
  const p = await ProxyUnderTest.start("dist/shout.wasm");
  assert.deepEqual(p.deliver(agentUpdate(textChunk("hi"))), [clientUpdate(textChunk("HI"))]);
});
`;

const TRANSCRIPT = [
  { initialize: true },
  {
    from: "agent",
    message: {
      method: "session/update",
      params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hey" } } },
    },
  },
  {
    to: "client",
    message: {
      method: "session/update",
      params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "HEY" } } },
    },
  },
]
  .map((l) => JSON.stringify(l))
  .join("\n");

let tarball = "";
beforeAll(() => {
  const packed = run("npm", ["pack", "--pack-destination", work, "--silent"], { cwd: join(ROOT, "sdk-as") });
  expect(packed.status, packed.out).toBe(0);
  tarball = join(work, readdirSync(work).find((f) => f.endsWith(".tgz"))!);
  mkdirSync(join(project, "src"), { recursive: true });
  mkdirSync(join(project, "test"));
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({
      name: "shout",
      private: true,
      type: "module",
      scripts: { build: "cordon-build-proxy", test: "cordon-test-proxy" },
      cordon: { entry: "src/shout.ts", out: "dist/shout.wasm" },
    }),
  );
  writeFileSync(join(project, "src", "shout.ts"), SOURCE);
  writeFileSync(join(project, "test", "shout.test.mjs"), TEST);
  writeFileSync(join(project, "test", "shout.jsonl"), TRANSCRIPT);
  const installed = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], { cwd: project });
  expect(installed.status, installed.out).toBe(0);
}, 300_000);

describe("@cordon/sdk-as, packed and installed outside the repository", () => {
  it("the tarball holds the SDK, the WIT contract, the compiled tools and testing kit, and no repository paths", () => {
    const list = run("tar", ["tzf", tarball]).out.split("\n");
    for (const file of [
      "package/index.ts",
      "package/assembly/proxy.ts",
      "package/wit/proxy.wit",
      "package/wit/proxy-wasi.wit",
      "package/tools/build-proxy.mjs",
      "package/dist/sdk-as/tools/cli.js",
      "package/dist/sdk-as/testing/index.js",
      "package/dist/sdk-as/testing/examples/mcp-server.js",
      "package/dist/runtime/sandbox/canonical-host.js",
    ]) {
      expect(list, file).toContain(file);
    }
    expect(list.some((f) => f.includes("/test/"))).toBe(false);
    expect(existsSync(join(ROOT, "sdk-as", "dist"))).toBe(false); // postpack cleaned up
  });

  it("npm run build (cordon-build-proxy) builds the project's proxy", () => {
    const built = run("npm", ["run", "build"], { cwd: project });
    expect(built.status, built.out).toBe(0);
    expect(built.out).toMatch(/built +shout +\d+\.\d KB/);
    expect(existsSync(join(project, "dist", "shout.wasm"))).toBe(true);
  }, 240_000);

  it("npm test (cordon-test-proxy) replays the transcript and runs the unit test; a wrong expectation fails it", () => {
    const tested = run("npm", ["test"], { cwd: project });
    expect(tested.status, tested.out).toBe(0);
    expect(tested.out).toMatch(/up to date +shout/);
    expect(tested.out).toMatch(/^ok {4}test\/shout\.jsonl \(3 steps\)$/m);
    expect(tested.out).toMatch(/^# pass 1$/m);
    writeFileSync(join(project, "test", "shout.jsonl"), TRANSCRIPT.replace('"HEY"', '"hey"'));
    const failed = run("npm", ["test"], { cwd: project });
    expect(failed.status).not.toBe(0);
    expect(failed.out).toMatch(/^FAIL {2}test\/shout\.jsonl:3: a message toward the client differs at \.params\.update\.content\.text/m);
  }, 240_000);
});
