/**
 * What a chain entry's `"package"` may say: a registry package name with an exact version, a
 * range or a dist-tag (`@acme/redact@^1.2`, `redact@1.4.0`, `redact@latest`, `redact` = any).
 * Parsed with npm's own grammar (`npm-package-arg`), so a spec means what it means to npm; the
 * other kinds npm accepts (git, file, remote URLs, `npm:` aliases) are refused with the reason,
 * because none of them names bytes a registry vouches for.
 */
import npa from "npm-package-arg";
import { PackageRefused } from "./errors.js";

export interface PackageSpec {
  /** As written. */
  raw: string;
  name: string;
  /** `version`: exact; `range`: a semver range; `tag`: a dist-tag. */
  type: "version" | "range" | "tag";
  /** The version, range or tag (`*` for a bare name). */
  selector: string;
}

/** npm's rules for new package names: lowercase, URL-safe, at most 214 characters, optional scope. */
const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

const REFUSED: Record<string, string> = {
  git: "git sources are not verifiable by a registry; publish the proxy and name it by version",
  file: 'local tarballs and folders are not supported yet; use a chain entry with "wasm" for a local build',
  directory: 'local tarballs and folders are not supported yet; use a chain entry with "wasm" for a local build',
  remote: "tarball URLs carry no integrity a registry vouches for; name the package by version",
  alias: "npm: aliases are not supported; name the package itself",
};

export function parseSpec(raw: string): PackageSpec {
  let parsed: ReturnType<typeof npa>;
  try {
    parsed = npa(raw);
  } catch (error) {
    throw new PackageRefused("ESPEC", `invalid package spec ${JSON.stringify(raw)}: ${(error as Error).message}`);
  }
  const type = parsed.type as string;
  if (type !== "version" && type !== "range" && type !== "tag") {
    throw new PackageRefused("ESPEC", `package spec ${JSON.stringify(raw)} is refused: ${REFUSED[type] ?? `a ${type} spec`}`);
  }
  const name = parsed.name ?? "";
  if (!NAME.test(name) || name.length > 214) {
    throw new PackageRefused(
      "ESPEC",
      `package spec ${JSON.stringify(raw)}: ${JSON.stringify(name)} is not a valid package name (lowercase, URL-safe)`,
    );
  }
  return { raw, name, type, selector: parsed.fetchSpec ?? "*" };
}

/** `@acme/redact` → `redact`: the default chain entry name. */
export const baseName = (name: string) => name.slice(name.lastIndexOf("/") + 1);
