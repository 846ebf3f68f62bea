import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { registryFor, registrySettings } from "./npmrc.js";
import { parseSpec } from "./spec.js";

describe("parseSpec", () => {
  it("takes npm's version, range and tag specs", () => {
    expect(parseSpec("@acme/redact@^1.2")).toEqual({ raw: "@acme/redact@^1.2", name: "@acme/redact", type: "range", selector: "^1.2" });
    expect(parseSpec("redact@1.2.3")).toMatchObject({ type: "version", selector: "1.2.3" });
    expect(parseSpec("redact@latest")).toMatchObject({ type: "tag", selector: "latest" });
    expect(parseSpec("redact")).toMatchObject({ type: "range", selector: "*" });
  });

  it.each([
    ["github:acme/redact", "git sources are not verifiable"],
    ["./redact-1.0.0.tgz", "local tarballs and folders are not supported"],
    ["https://example.com/redact.tgz", "tarball URLs carry no integrity"],
    ["x@npm:redact@1", "npm: aliases are not supported"],
    ["@Acme/Bad@1", '"@Acme/Bad" is not a valid package name'],
  ])("refuses %s with the reason", (spec, reason) => {
    expect(() => parseSpec(spec)).toThrow(reason);
  });
});

describe("registry settings", () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it("follows npm: flag, then environment, then the project's .npmrc; scopes and tokens from .npmrc", () => {
    const dir = mkdtempSync(join(tmpdir(), "cordon-npmrc-"));
    process.env.HOME = dir; // no user .npmrc
    process.env.MY_TOKEN = "s3cret";
    delete process.env.npm_config_registry;
    delete process.env.NPM_CONFIG_REGISTRY;
    writeFileSync(
      join(dir, ".npmrc"),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: .npmrc's own ${ENV} syntax
      "registry=https://mirror.example/npm\n@acme:registry=https://acme.example/\n//acme.example/:_authToken=${MY_TOKEN}\n",
    );
    expect(registryFor("redact", registrySettings(dir))).toEqual({ url: "https://mirror.example/npm/" });
    expect(registryFor("@acme/redact", registrySettings(dir))).toEqual({ url: "https://acme.example/", token: "s3cret" });
    process.env.npm_config_registry = "https://env.example/";
    expect(registryFor("redact", registrySettings(dir)).url).toBe("https://env.example/");
    expect(registryFor("redact", registrySettings(dir, "http://127.0.0.1:4873")).url).toBe("http://127.0.0.1:4873/");
    expect(registryFor("@acme/redact", registrySettings(dir, "http://127.0.0.1:4873")).url).toBe("https://acme.example/");
  });
});
