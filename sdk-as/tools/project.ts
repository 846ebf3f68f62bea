/**
 * A proxy project (what `cordon new` makes): its package.json names the proxy's source and output,
 *   "cordon": { "entry": "src/hello.ts", "out": "dist/hello.wasm" }
 * so `cordon-build-proxy` / `cordon build` and `cordon-test-proxy` / `cordon test` need no arguments.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { WORLDS, type World } from "./compose.js";
import { BuildError } from "./errors.js";

export interface Project {
  dir: string;
  name: string;
  entry: string;
  out: string;
  world: World | null;
}

/** The project in `dir` (its package.json's `cordon` field), or null when there is none. */
export function findProject(dir: string = process.cwd()): Project | null {
  const file = path.join(dir, "package.json");
  if (!existsSync(file)) return null;
  let pkg: { name?: unknown; cordon?: { entry?: unknown; out?: unknown; world?: unknown } };
  try {
    pkg = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new BuildError(`${file} is not valid JSON (${(error as Error).message})`);
  }
  const c = pkg.cordon;
  if (c === undefined) return null;
  if (typeof c !== "object" || c === null || typeof c.entry !== "string") {
    throw new BuildError(
      `package.json: "cordon" must be {"entry": "src/<name>.ts", "out"?: "dist/<name>.wasm", "world"?: "proxy" | "proxy-wasi"}`,
    );
  }
  const entry = path.resolve(dir, c.entry);
  const name = path.basename(entry, ".ts");
  const out = path.resolve(dir, typeof c.out === "string" ? c.out : path.join("dist", `${name}.wasm`));
  let world: World | null = null;
  if (c.world !== undefined) {
    if (!WORLDS.includes(c.world as World)) throw new BuildError(`package.json: "cordon.world" must be one of ${WORLDS.join(", ")}`);
    world = c.world as World;
  }
  return { dir, name, entry, out, world };
}
