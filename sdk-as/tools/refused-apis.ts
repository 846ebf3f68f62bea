/**
 * Standard-library APIs a proxy can compile but never run: the build refuses them, naming where
 * the source uses them and what the SDK offers instead, so they are build errors rather than a
 * trap on every prompt.
 *
 * Two kinds, both checked on what asc actually compiled (never on the source text alone):
 * - APIs that need a host import Cordon does not provide (`Date.now`, `Math.random`, `console.*`,
 *   `performance.now`, `crypto.getRandomValues`, `trace`, `process.exit`…): seen as `env.*`
 *   imports of the core module;
 * - APIs whose standard-library body only aborts (`RegExp`: AssemblyScript has no regular
 *   expressions): seen as their functions in the module before optimization (`FunctionCollector`).
 *
 * Verified on AssemblyScript 0.28 by building a one-line proxy per API (each is in the build
 * tool's test). `process.env` (an empty map), `new Date(ms)` and the other pure parts work.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Transform } from "assemblyscript/transform";

interface RefusedApi {
  /** How the author spells it (for the message). */
  api: string;
  /** Finds the use in the author's source, for the location. */
  spelling: RegExp;
  /** Core-module imports (`module.name`, or a prefix ending in `*`) that only this API makes. */
  imports?: string[];
  /** Prefix of the standard-library functions that mean the API was compiled in. */
  functions?: string;
  why: string;
  instead: string;
}

const CLOCK = "the SDK's Clock (Clock.millis(), Clock.now(): the proxy-wasi world, which the chain must grant wasi:clocks)";

const REFUSED: RefusedApi[] = [
  {
    api: "RegExp",
    spelling: /\bRegExp\b/,
    functions: "~lib/regexp/",
    why: "AssemblyScript's standard library has no regular expressions: every RegExp call aborts",
    instead:
      'the SDK\'s glob patterns (import { Glob, globMatch } from "@cordon/sdk-as": Glob.compile("*.env").matches(path)) or String\'s includes, startsWith, endsWith, indexOf',
  },
  {
    api: "Date.now()",
    spelling: /\b(Date\.now|process\.time)\b/,
    imports: ["env.Date.now"],
    why: "it needs a host clock",
    instead: CLOCK,
  },
  {
    api: "performance.now()",
    spelling: /\b(performance\.now|process\.hrtime)\b/,
    imports: ["env.performance.now"],
    why: "it needs a host clock",
    instead: CLOCK,
  },
  {
    api: "Math.random()",
    spelling: /\bMathf?\.random\b/,
    imports: ["env.seed"],
    why: "it needs a host random seed",
    instead: "the SDK's Random (Random.float(), Random.u64(): the proxy-wasi world, which the chain must grant wasi:random)",
  },
  {
    api: "crypto.getRandomValues()",
    spelling: /\bcrypto\.getRandomValues\b/,
    imports: ["env.crypto.getRandomValues*"],
    why: "it needs host randomness",
    instead: "the SDK's Random.bytes(n) (the proxy-wasi world, which the chain must grant wasi:random)",
  },
  {
    api: "console",
    spelling: /\bconsole\.\w+/,
    imports: ["env.console.*"],
    why: "a proxy has no console",
    instead: "this.log(LogLevel.Info, text) in your Proxy, which reaches Cordon's log",
  },
  {
    api: "trace()",
    spelling: /\btrace\s*\(/,
    imports: ["env.trace"],
    why: "a proxy has no console",
    instead: "this.log(LogLevel.Debug, text) in your Proxy, which reaches Cordon's log",
  },
  {
    api: "process.exit()",
    spelling: /\bprocess\.exit\b/,
    imports: ["env.process.exit"],
    why: "a proxy is not a process and cannot exit",
    instead:
      "answering the request with an error (this.respondError) or, for a fatal problem, throwing (Cordon applies the proxy's failure policy)",
  },
];

const matchesImport = (pattern: string, spelled: string) =>
  pattern.endsWith("*") ? spelled.startsWith(pattern.slice(0, -1)) : spelled === pattern;

/** The refused API behind an import (`module.name`), if it is one. */
export function refusedImport(spelled: string): RefusedApi | undefined {
  return REFUSED.find((r) => r.imports?.some((p) => matchesImport(p, spelled)));
}

/** The refused APIs among compiled function names. */
export function refusedFunctions(names: Iterable<string>): RefusedApi[] {
  const found = new Set<RefusedApi>();
  for (const name of names) {
    for (const r of REFUSED) if (r.functions && name.startsWith(r.functions)) found.add(r);
  }
  return [...found];
}

/** `file:line:col` of the first use of `api` in the author's `sources` (outside comments), or null. */
export function whereUsed(api: RefusedApi, sources: readonly string[]): string | null {
  for (const file of sources) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const code = lines[i].replace(/\/\/.*$/, "");
      const m = api.spelling.exec(code);
      if (m) {
        const rel = path.relative(process.cwd(), file);
        return `${rel && !rel.startsWith("..") ? rel : file}:${i + 1}:${m.index + 1}`;
      }
    }
  }
  return null;
}

/** One sentence for the build error: what, where, why it cannot work, and what to use. */
export function refusalText(api: RefusedApi, sources: readonly string[]): string {
  const at = whereUsed(api, sources);
  return `${api.api}${at ? ` (${at})` : ""} compiles but cannot run in a proxy: ${api.why}; use ${api.instead}`;
}

/**
 * An asc transform that records the names of the standard-library functions a refused API is
 * made of, as compiled (before the optimizer inlines them away). One instance per compile.
 */
export function functionCollector(into: Set<string>): typeof Transform {
  const prefixes = REFUSED.flatMap((r) => (r.functions ? [r.functions] : []));
  return class FunctionCollector extends Transform {
    // binaryen's module type is not part of asc's public typings.
    // biome-ignore lint/suspicious/noExplicitAny: see above
    afterCompile(module: any): void {
      // biome-ignore lint/suspicious/noExplicitAny: see above
      const binaryen = (this as unknown as { binaryen: any }).binaryen;
      for (let i = 0, n = module.getNumFunctions(); i < n; i++) {
        const name: string = binaryen.getFunctionInfo(module.getFunctionByIndex(i)).name;
        if (prefixes.some((p) => name.startsWith(p))) into.add(name);
      }
    }
  };
}

/**
 * What to say when asc's errors are inside the standard library's host bindings (`process.argv`
 * is declared there without a value, so using it fails to compile with an error about that file,
 * not the author's).
 */
export function bindingsHint(diagnostics: string): string {
  if (!/~lib\/bindings\//.test(diagnostics)) return "";
  return ": the errors are in the standard library's host bindings, which a proxy does not have (process.argv and the like); a proxy's settings come from its config, in onConfigure";
}
