/** Where the tests find the built pieces (make test builds them first). */
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const CORDON = `${ROOT}bin/cordon.js`;
export const NODE = process.execPath;
export const proxyWasm = (name: string) => `${ROOT}proxies/dist/${name}.wasm`;
export const SCRIPTED_AGENT = [NODE, `${ROOT}test/peers/scripted-agent.mjs`];
export const REFERENCE_AGENT = [NODE, CORDON, "reference-agent"];

/** `cordon run` args: each proxy in order, then the agent command. */
export function cordonRun(proxies: string[], agent: string[], extra: string[] = []): string[] {
  return [CORDON, "run", ...extra, ...proxies.flatMap((p) => ["--proxy", p.endsWith(".wasm") ? p : proxyWasm(p)]), "--", ...agent];
}
