// `npm pack` of @cordon/sdk-as from the repository: prepack compiles the build tool and the testing
// kit (with the runtime modules they reuse) into dist/ and copies the WIT contract in; postpack
// removes both again, so the repository keeps one copy of each.
import { execFileSync } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const sdk = fileURLToPath(new URL("..", import.meta.url));
const wit = new URL("../wit/proxy.wit", import.meta.url);
const require = createRequire(import.meta.url);

if (process.argv[2] === "prepack") {
  rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
  execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: sdk, stdio: "inherit" });
  copyFileSync(new URL("../../wit/proxy.wit", import.meta.url), wit);
} else {
  rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
  rmSync(wit, { force: true });
}
