import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../test/helpers/paths.js";
import { locateSdkTool } from "./author-sdk.js";

const built = (tool: string) => join(ROOT, "dist", tool);

describe("locateSdkTool", () => {
  it("uses the project's @cordon/sdk-as: the repository's workspace link, or one linked into another project", () => {
    expect(locateSdkTool("sdk-as/tools/cli.js", "cordon build", { cwd: ROOT, cordon: null })).toEqual({
      file: built("sdk-as/tools/cli.js"),
    });
    const project = mkdtempSync(join(tmpdir(), "cordon-author-sdk-"));
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "p", devDependencies: { "@cordon/sdk-as": "*" } }));
    mkdirSync(join(project, "node_modules", "@cordon"), { recursive: true });
    symlinkSync(join(ROOT, "sdk-as"), join(project, "node_modules", "@cordon", "sdk-as"));
    mkdirSync(join(project, "src"));
    expect(locateSdkTool("sdk-as/testing/cli.js", "cordon test", { cwd: join(project, "src"), cordon: null })).toEqual({
      file: built("sdk-as/testing/cli.js"),
    });
  });

  it("falls back to a checkout's own compiled SDK, and otherwise says exactly what to install", () => {
    const empty = mkdtempSync(join(tmpdir(), "cordon-author-none-"));
    expect(locateSdkTool("sdk-as/tools/cli.js", "cordon build", { cwd: empty })).toEqual({ file: built("sdk-as/tools/cli.js") });
    // An installed runtime package: no sdk-as/ beside it.
    const installed = { dir: mkdtempSync(join(tmpdir(), "cordon-author-pkg-")), version: "1.2.3" };
    const found = locateSdkTool("sdk-as/tools/cli.js", "cordon build", { cwd: empty, cordon: installed });
    expect(found).toEqual({
      problem: expect.stringContaining(`cordon build: needs the proxy SDK, @cordon/sdk-as, which is not installed for ${empty}.`),
    });
    const { problem } = found as { problem: string };
    expect(problem).toContain("In a project made by `cordon new`: npm install");
    expect(problem).toContain("npm install --save-dev @cordon/sdk-as@^1.2.3");
  });
});
