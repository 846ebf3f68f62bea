// `npm pack` of @cordon/sdk-as from the repository: prepack compiles the build tool and the testing
// kit (with the runtime modules they reuse) into dist/ and copies the WIT contract in; postpack
// removes both again, so the repository keeps one copy of each. Two packs at once (the cordon
// package's prepack packs this one too) take turns: a lock directory is held from prepack to postpack.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const sdk = fileURLToPath(new URL("..", import.meta.url));
const wit = new URL("../wit/proxy.wit", import.meta.url);
const dist = new URL("../dist", import.meta.url);
const lock = new URL("../.pack-lock", import.meta.url);
const require = createRequire(import.meta.url);

function acquire() {
  const until = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      mkdirSync(lock);
      return;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 5 * 60_000) rmSync(lock, { recursive: true, force: true }); // left by a pack that died
      } catch {
        // released meanwhile
      }
      if (Date.now() > until) throw new Error(`${fileURLToPath(lock)} is held by another pack`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
}

if (process.argv[2] === "prepack") {
  acquire();
  rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: sdk, stdio: "inherit" });
  copyFileSync(new URL("../../wit/proxy.wit", import.meta.url), wit);
} else {
  rmSync(dist, { recursive: true, force: true });
  rmSync(wit, { force: true });
  rmSync(lock, { recursive: true, force: true });
}
