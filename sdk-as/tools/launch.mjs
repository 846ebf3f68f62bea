// Finds the compiled SDK tools: the SDK package's own `dist/`, or, inside the Cordon repository,
// the repository's `dist/` (`npx tsc -p tsconfig.build.json` / `make build` writes it).
import { existsSync, readFileSync } from "node:fs";

function inRepository() {
  try {
    return JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).name === "@cordon/cli";
  } catch {
    return false;
  }
}

/** Imports `dist/sdk-as/tools/<file>` and runs its `main(argv, command)`; sets the exit code. */
export async function launch(file, command) {
  const places = inRepository() ? ["../../dist/sdk-as/tools/", "../dist/sdk-as/tools/"] : ["../dist/sdk-as/tools/"];
  const found = places.map((p) => new URL(p + file, import.meta.url)).find((url) => existsSync(url));
  if (!found) {
    process.stderr.write(
      `${command}: the compiled tool (dist/sdk-as/tools/${file}) is missing; in the Cordon repository run \`make build\`\n`,
    );
    process.exitCode = 1;
    return;
  }
  const { main } = await import(found.href);
  process.exitCode = await main(process.argv.slice(2), command);
}
