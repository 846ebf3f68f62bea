/**
 * Where a package comes from and with what credentials, as npm decides it: `--registry`, then the
 * `npm_config_registry` environment variable, then `registry=` in the project's `.npmrc` (beside
 * the chain config), then the user's `~/.npmrc`, then the public registry. A scope's own registry
 * (`@acme:registry=…`) wins for that scope, as in npm. Auth tokens come from `//host/path/:_authToken`
 * lines (with `${ENV}` expanded), matched by the longest registry path prefix, and are only ever
 * sent to that registry.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse } from "ini";

const DEFAULT_REGISTRY = "https://registry.npmjs.org/";

export interface RegistrySettings {
  /** The default registry (trailing slash). */
  registry: string;
  /** Per-scope registries, `@acme` → URL. */
  scopes: Map<string, string>;
  /** `//host/path/` → token. */
  tokens: Map<string, string>;
}

export interface Registry {
  url: string;
  token?: string;
}

const slash = (url: string) => (url.endsWith("/") ? url : `${url}/`);
const expand = (value: string) => value.replace(/\$\{([^}]+)\}/g, (_, name: string) => process.env[name] ?? "");

function readNpmrc(path: string): Record<string, unknown> {
  try {
    return parse(readFileSync(path, "utf8"));
  } catch {
    return {};
  }
}

/** Settings for a project folder: the flag wins, then the environment, then the project's and user's `.npmrc`. */
export function registrySettings(projectDir: string, flag?: string): RegistrySettings {
  const files = [readNpmrc(join(homedir(), ".npmrc")), readNpmrc(join(projectDir, ".npmrc"))]; // later wins
  const settings: RegistrySettings = { registry: DEFAULT_REGISTRY, scopes: new Map(), tokens: new Map() };
  for (const file of files) {
    for (const [key, raw] of Object.entries(file)) {
      if (typeof raw !== "string") continue;
      const value = expand(raw);
      if (key === "registry") settings.registry = slash(value);
      else if (/^@[^:]+:registry$/.test(key)) settings.scopes.set(key.slice(0, key.indexOf(":")), slash(value));
      else if (key.startsWith("//") && key.endsWith(":_authToken")) settings.tokens.set(slash(key.slice(0, -":_authToken".length)), value);
    }
  }
  const env = process.env.npm_config_registry || process.env.NPM_CONFIG_REGISTRY;
  if (env) settings.registry = slash(env);
  if (flag) settings.registry = slash(flag);
  return settings;
}

/** The registry serving `name`, with its token if one is configured for it. */
export function registryFor(name: string, settings: RegistrySettings): Registry {
  const scope = name.startsWith("@") ? name.slice(0, name.indexOf("/")) : null;
  const url = (scope && settings.scopes.get(scope)) || settings.registry;
  const bare = url.replace(/^https?:/, "");
  let best: string | undefined;
  let bestLength = -1;
  for (const [prefix, token] of settings.tokens) {
    if (bare.startsWith(prefix) && prefix.length > bestLength) [best, bestLength] = [token, prefix.length];
  }
  return best === undefined ? { url } : { url, token: best };
}
