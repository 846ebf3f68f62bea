import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadComponent } from "../../runtime/sandbox/component-loader.js";
import { readManifest } from "../../runtime/sandbox/manifest.js";
import { BuildError, buildProxy, isUpToDate } from "../tools/index.js";
import { ProxyUnderTest, ROOT } from "./harness.js";

const TOOL = join(ROOT, "sdk-as", "tools", "build-proxy.mjs");
/** The compiled tool the command runs (what tsc regenerates on every \`make build\`). */
const TOOL_DIST = join(ROOT, "dist", "sdk-as", "tools");
// A project outside the repository, so `@cordon/sdk-as` is not in any node_modules asc searches:
// the tool must supply its own SDK.
const dir = mkdtempSync(join(tmpdir(), "cordon-build-tool-"));
const cacheDir = join(dir, ".cache");

function write(rel: string, text: string): string {
  const file = join(dir, rel);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  return file;
}

const GOOD = `import { Proxy, SessionUpdate, register } from "@cordon/sdk-as";
class Upper extends Proxy {
  onSessionUpdate(update: SessionUpdate): void {
    if (update.isTextChunk) update.text = update.text.toUpperCase();
    this.forward(update);
  }
}
register(new Upper());
`;

const GOOD_MANIFEST = {
  name: "upper",
  version: "1.2.3",
  description: "Shouts the agent's text",
  config: { type: "object", properties: { level: { type: "integer" } }, additionalProperties: false },
  grants: [],
};

let run: ReturnType<typeof spawnSync>;
beforeAll(() => {
  write("proxies/good/good.ts", GOOD);
  write(
    "proxies/bad/bad.ts",
    `import { Proxy, register } from "@cordon/sdk-as";\nconst n: i32 = "not a number";\nregister(new Proxy());\n`,
  );
  write(
    "proxies/dice/dice.ts",
    `import { Proxy, register } from "@cordon/sdk-as";\nclass Dice extends Proxy { roll(): f64 { return Math.random(); } }\nconst d = new Dice();\nd.roll();\nregister(d);\n`,
  );
  write(
    "proxies/pattern/pattern.ts",
    `import { Proxy, SessionUpdate, register } from "@cordon/sdk-as";\n// no RegExp here: a comment is not a use\nclass P extends Proxy {\n  onSessionUpdate(u: SessionUpdate): void {\n    if (new RegExp("a+").test(u.text)) this.forward(u);\n  }\n}\nregister(new P());\n`,
  );
  write(
    "proxies/chatty/chatty.ts",
    `import { Proxy, SessionUpdate, register } from "@cordon/sdk-as";\nclass P extends Proxy {\n  onSessionUpdate(u: SessionUpdate): void {\n    console.log("got one");\n    if (Date.now() > 0) this.forward(u);\n  }\n}\nregister(new P());\n`,
  );
  write(
    "proxies/hosted/hosted.ts",
    `import { Proxy, SessionUpdate, register } from "@cordon/sdk-as";\nclass P extends Proxy {\n  onSessionUpdate(u: SessionUpdate): void {\n    const bytes = new Uint8Array(4);\n    crypto.getRandomValues(bytes);\n    trace("seen");\n    if (performance.now() > 0) this.forward(u);\n    else process.exit(1);\n  }\n}\nregister(new P());\n`,
  );
  write(
    "proxies/argv/argv.ts",
    `import { Proxy, register } from "@cordon/sdk-as";\nclass P extends Proxy {}\nif (process.argv.length > 0) register(new P());\n`,
  );
  write("proxies/good/good.manifest.json", JSON.stringify(GOOD_MANIFEST, null, 2));
  write("proxies/badman/badman.ts", GOOD);
  write("proxies/badman/manifest.json", '{"name":"badman","grants":"fs:read"}');
  write("proxies/lonely/lonely.ts", `import { Proxy } from "@cordon/sdk-as";\nclass Lonely extends Proxy {}\nconst l = new Lonely();\n`);
  mkdirSync(join(dir, "proxies", "not-a-proxy"), { recursive: true });
  run = spawnSync(process.execPath, [TOOL, "--all", "proxies"], { cwd: dir, encoding: "utf8" });
}, 180_000);

describe("cordon-build-proxy", () => {
  it("--all builds every <name>/<name>.ts, reports asc's diagnostics for the broken one, and exits non-zero", () => {
    expect(run.status).toBe(1);
    const stderr = String(run.stderr);
    expect(stderr).toMatch(/^built +good +\d+\.\d KB +\d+\.\d\d s +proxies\/dist\/good\.wasm$/m);
    expect(stderr).toContain("error: bad: AssemblyScript compilation failed (1 compile error(s))");
    expect(stderr).toContain("TS2322: Type '~lib/string/String' is not assignable to type 'i32'.");
    expect(stderr).toContain("proxies/bad/bad.ts(2,16)");
    expect(stderr).toContain('error: badman: proxies/badman/manifest.json: "grants" must be an array of strings');
    expect(stderr).toContain("7 of 9 proxies failed");
    expect(existsSync(join(dir, "proxies", "dist", "bad.wasm"))).toBe(false);
  });

  it("embeds the proxy's manifest as the cordon:manifest custom section", () => {
    expect(readManifest(readFileSync(join(dir, "proxies", "dist", "good.wasm")))).toEqual(GOOD_MANIFEST);
    expect(readManifest(readFileSync(join(dir, "proxies", "dist", "lonely.wasm")))).toBeNull();
  });

  it("rebuilds a proxy when a manifest appears next to it", () => {
    const entry = join(dir, "proxies", "lonely", "lonely.ts");
    const out = join(dir, "proxies", "dist", "lonely.wasm");
    expect(isUpToDate(entry, out)).toBe(true);
    write("proxies/lonely/manifest.json", '{"name":"lonely"}');
    expect(isUpToDate(entry, out)).toBe(false);
  });

  it("produces a component the runtime loads and runs", async () => {
    const component = await loadComponent(join(dir, "proxies", "dist", "good.wasm"), { cacheDir });
    expect(component.imports).toEqual(["cordon:proxy/channel@0.1.0"]);
    expect(component.exports).toEqual(["cordon:proxy/handler@0.1.0"]);
    expect(component.encodings).toEqual({ receive: "utf16", send: "utf16" });
    const p = new ProxyUnderTest(component);
    const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "quiet" } };
    expect(p.deliver(ProxyUnderTest.fromAgent({ method: "session/update", params: { sessionId: "s", update } }))).toEqual([
      {
        jsonrpc: "2.0",
        method: "session/update",
        params: { sessionId: "s", update: { ...update, content: { type: "text", text: "QUIET" } } },
      },
    ]);
  });

  it("skips a proxy whose inputs hash as recorded, whatever their times, and rebuilds when a byte changes", async () => {
    const entry = join(dir, "proxies", "good", "good.ts");
    const out = join(dir, "proxies", "dist", "good.wasm");
    const before = statSync(out).mtimeMs;
    const later = new Date(Date.now() + 5_000);
    utimesSync(entry, later, later); // newer than the output, same content (a checkout, a touch)
    writeFileSync(join(dir, "proxies", "good", "good.manifest.json"), JSON.stringify(GOOD_MANIFEST, null, 2)); // rewritten, unchanged
    const again = await buildProxy({ entry, out });
    expect(again.skipped).toBe(true);
    expect(statSync(out).mtimeMs).toBe(before);
    writeFileSync(entry, `${GOOD}// a comment\n`);
    const rebuilt = await buildProxy({ entry, out });
    expect(rebuilt.skipped).toBe(false);
    expect(rebuilt.because).toBe(`${entry} changed`);
    expect(statSync(out).mtimeMs).toBeGreaterThan(before);
  }, 120_000);

  it("rebuilds an output that was replaced or damaged since its build", () => {
    const entry = join(dir, "proxies", "good", "good.ts");
    const out = join(dir, "proxies", "dist", "good.wasm");
    expect(isUpToDate(entry, out)).toBe(true);
    writeFileSync(out, Buffer.concat([readFileSync(out), Buffer.from([0])]));
    expect(isUpToDate(entry, out)).toBe(false);
  });

  it("refuses standard-library APIs that compile but only trap in a proxy, saying where and what to use instead", () => {
    const stderr = String(run.stderr);
    expect(stderr).toContain(
      "error: dice: Math.random() (proxies/dice/dice.ts:2:49) compiles but cannot run in a proxy: it needs a host random seed; use the SDK's Random (Random.float(), Random.u64(): the proxy-wasi world, which the chain must grant wasi:random)",
    );
    // RegExp imports nothing: it is found among the functions asc compiled (its body only aborts).
    expect(stderr).toContain(
      "error: pattern: RegExp (proxies/pattern/pattern.ts:5:13) compiles but cannot run in a proxy: AssemblyScript's standard library has no regular expressions: every RegExp call aborts; use the SDK's glob patterns",
    );
    expect(stderr).toMatch(
      /error: chatty: (console \(proxies\/chatty\/chatty\.ts:4:5\) .*this\.log\(LogLevel\.Info, text\).*; and Date\.now\(\) \(proxies\/chatty\/chatty\.ts:5:9\)|Date\.now\(\) \(proxies\/chatty\/chatty\.ts:5:9\) .*; and console \(proxies\/chatty\/chatty\.ts:4:5\)) .*Clock/,
    );
    const hosted = /^error: hosted: (.*)$/m.exec(stderr)?.[1] ?? "";
    for (const [api, where, instead] of [
      ["crypto.getRandomValues()", "5:5", "Random.bytes(n)"],
      ["trace()", "6:5", "this.log(LogLevel.Debug, text)"],
      ["performance.now()", "7:9", "Clock"],
      ["process.exit()", "8:10", "this.respondError"],
    ]) {
      expect(hosted).toContain(`${api} (proxies/hosted/hosted.ts:${where}) compiles but cannot run in a proxy`);
      expect(hosted).toContain(instead);
    }
    expect(stderr).toContain(
      "error: argv: AssemblyScript compilation failed (1 compile error(s)): the errors are in the standard library's host bindings, which a proxy does not have (process.argv and the like); a proxy's settings come from its config, in onConfigure",
    );
    for (const name of ["dice", "pattern", "chatty", "hosted", "argv"])
      expect(existsSync(join(dir, "proxies", "dist", `${name}.wasm`))).toBe(false);
  });

  it("warns when the source never registers a proxy, and prints usage for bad arguments", async () => {
    expect(run.stderr).toContain("warning: lonely: the source never calls register(...); the proxy will trap on its first message");
    expect(existsSync(join(dir, "proxies", "dist", "lonely.wasm"))).toBe(true);
    const missingError = await buildProxy({ entry: join(dir, "nope.ts") }).catch((e: unknown) => e);
    expect(missingError).toBeInstanceOf(BuildError);
    const usage = spawnSync(process.execPath, [TOOL], { cwd: dir, encoding: "utf8" });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain("usage: cordon-build-proxy [<entry.ts>] [-o <out.wasm>] [--world <world>] [--force]");
    const missing = spawnSync(process.execPath, [TOOL, "nope.ts"], { cwd: dir, encoding: "utf8" });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("error: nope: no such file nope.ts");
  });
});

describe("cordon-build-proxy --all, run again", () => {
  const project = mkdtempSync(join(tmpdir(), "cordon-rebuild-"));
  const proxy = (name: string) =>
    `import { Proxy, register } from "@cordon/sdk-as";\nclass P extends Proxy {}\nregister(new P()); // ${name}\n`;
  const build = () => spawnSync(process.execPath, [TOOL, "--all", "proxies"], { cwd: project, encoding: "utf8" });

  it("rebuilds nothing when nothing changed, though the tool was regenerated, and says so; a changed source rebuilds only its proxy", () => {
    for (const name of ["one", "two"]) {
      mkdirSync(join(project, "proxies", name), { recursive: true });
      writeFileSync(join(project, "proxies", name, `${name}.ts`), proxy(name));
    }
    const first = build();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/^built +one /m);
    expect(first.stderr).toMatch(/^built +two /m);

    // What \`make build\` does before the proxies: tsc rewrites the build tool (same content, new times).
    const now = new Date();
    for (const file of readdirSync(TOOL_DIST)) utimesSync(join(TOOL_DIST, file), now, now);
    const second = build();
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/^up to date +one /m);
    expect(second.stderr).toMatch(/^up to date +two /m);
    expect(second.stderr).toContain("2 proxies ok (all up to date, nothing rebuilt)");

    writeFileSync(join(project, "proxies", "two", "two.ts"), proxy("two, changed"));
    const third = build();
    expect(third.status, third.stderr).toBe(0);
    expect(third.stderr).toMatch(/^up to date +one /m);
    expect(third.stderr).toMatch(/^built +two .*\(proxies\/two\/two\.ts changed\)$/m);
    expect(third.stderr).toContain("2 proxies ok (1 built, 1 up to date)");
  }, 180_000);
});
