// `npm pack` of the cordon package: prepack packs the SDK package (@cordon/sdk-as) into vendor/, so
// an installed Cordon can scaffold projects (`cordon new`) that install the SDK without a registry;
// postpack removes it again. The tarball carries dist/, proxies/dist/ as built by `make build`.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const vendor = new URL("../../vendor", import.meta.url);

if (process.argv[2] === "prepack") {
  for (const built of ["dist/runtime/cli/main.js", "dist/sdk-as/tools/cli.js", "proxies/dist/passthrough.wasm"]) {
    if (!existsSync(new URL(`../../${built}`, import.meta.url))) throw new Error(`${built} is missing: run make build before npm pack`);
  }
  rmSync(vendor, { recursive: true, force: true });
  mkdirSync(vendor);
  execFileSync("npm", ["pack", "./sdk-as", "--pack-destination", "vendor", "--silent"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
} else {
  rmSync(vendor, { recursive: true, force: true });
}
