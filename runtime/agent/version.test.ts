import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PACKAGE_NAME } from "../package-root.js";
import { cordonVersion } from "./version.js";

describe("cordonVersion", () => {
  it("is the version of Cordon's package.json above the module, read once", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { name: string; version: string };
    expect(pkg.name).toBe(PACKAGE_NAME);
    expect(cordonVersion()).toBe(pkg.version);
    expect(cordonVersion()).toBe(cordonVersion());
  });
});
