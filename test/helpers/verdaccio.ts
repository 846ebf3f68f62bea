/**
 * A real npm registry nobody here wrote — Verdaccio, in this process, on 127.0.0.1 at a free
 * port, with temporary storage, no uplinks (nothing leaves the machine) and htpasswd users. It is
 * installed on first use into `test/registry-compat/` from that folder's own lockfile (58 MB,
 * kept out of the main lockfile; needs only the npm registry, once).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./paths.js";

const COMPAT = join(ROOT, "test", "registry-compat");

function ensureInstalled(): void {
  if (existsSync(join(COMPAT, "node_modules", "verdaccio", "package.json"))) return;
  process.stderr.write("installing Verdaccio for the registry test (npm ci in test/registry-compat)\n");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: COMPAT, stdio: ["ignore", "ignore", "inherit"] });
}

export interface TestRegistry {
  url: string;
  /** Verdaccio's storage folder (`<storage>/@scope/name/name-1.0.0.tgz`). */
  storage: string;
  /** An npm user config (`--userconfig`) that publishes to it as a registered user. */
  npmrc: string;
  /** That user's token; `@private/*` packages are readable only with it. */
  token: string;
  close(): Promise<void>;
}

export async function startVerdaccio(): Promise<TestRegistry> {
  ensureInstalled();
  const { runServer } = createRequire(join(COMPAT, "package.json"))("verdaccio") as {
    runServer(config: object): Promise<{ listen(port: number, host: string, done: () => void): Server }>;
  };
  const dir = mkdtempSync(join(tmpdir(), "cordon-verdaccio-"));
  const storage = join(dir, "storage");
  const app = await runServer({
    self_path: dir,
    storage,
    auth: { htpasswd: { file: join(dir, "htpasswd"), max_users: 10 } },
    uplinks: {},
    packages: {
      "@private/*": { access: "$authenticated", publish: "$authenticated" },
      "**": { access: "$all", publish: "$authenticated" },
    },
    log: { type: "stdout", format: "pretty", level: "fatal" },
    web: { enable: false },
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const { port } = server.address() as { port: number };
  const url = `http://127.0.0.1:${port}/`;
  const user = await fetch(`${url}-/user/org.couchdb.user:author`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "author", password: "a-long-password", type: "user", roles: [] }),
  });
  const { token } = (await user.json()) as { token: string };
  const npmrc = join(dir, "author.npmrc");
  writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
  return {
    url,
    storage,
    npmrc,
    token,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
