import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { PackageRefused } from "./errors.js";
import { readTarball, TAR_LIMITS } from "./tar-read.js";
import { type TarEntry, writeTarball } from "./tar-write.js";

const file = (name: string, text = "x") => ({ name, data: Buffer.from(text) });

function refusal(entries: TarEntry[] | Buffer): PackageRefused {
  try {
    readTarball(Array.isArray(entries) ? writeTarball(entries) : entries, "evil@1.0.0");
  } catch (error) {
    expect(error).toBeInstanceOf(PackageRefused);
    return error as PackageRefused;
  }
  throw new Error("the tarball was accepted");
}

describe("readTarball", () => {
  it("reads the files under the package folder, byte for byte", () => {
    const files = readTarball(writeTarball([file("package/package.json", "{}"), file("package/lib/a.wasm", "wasm")]), "ok@1.0.0");
    expect([...files.keys()]).toEqual(["package.json", "lib/a.wasm"]);
    expect(Buffer.from(files.get("lib/a.wasm")!).toString()).toBe("wasm");
  });

  it("honours pax path records (node-tar's long names)", () => {
    const long = `package/${"d/".repeat(60)}x.txt`;
    const body = ` path=${long}\n`;
    let length = body.length + 1;
    while (String(length).length + body.length !== length) length++; // the length counts its own digits
    const pax = `${length}${body}`;
    const files = readTarball(writeTarball([{ name: "PaxHeader", type: "x", data: Buffer.from(pax) }, file("package/short")]), "ok@1.0.0");
    expect([...files.keys()]).toEqual([long.slice("package/".length)]);
  });

  it.each([
    [
      "a symbolic link",
      { name: "package/proxy.wasm", type: "2", linkname: "/etc/passwd" },
      /"package\/proxy\.wasm": a symbolic link to "\/etc\/passwd" \(only regular files/,
    ],
    ["a hard link", { name: "package/proxy.wasm", type: "1", linkname: "package/other" }, /a hard link to "package\/other"/],
    ["a directory", { name: "package/dir/", type: "5" }, /a directory \(only regular files/],
    ["a device", { name: "package/dev", type: "3" }, /a character device/],
  ])("refuses %s, naming it", (_what, entry, message) => {
    const error = refusal([file("package/package.json"), entry]);
    expect(error.code).toBe("ETARTYPE");
    expect(error.message).toMatch(message);
    expect(error.message).toContain("evil@1.0.0");
  });

  it.each([
    ["a ../ path", "package/../../.bashrc", 'refused entry "package/../../.bashrc": a ".." path component'],
    ["an absolute path", "/etc/cron.d/x", 'refused entry "/etc/cron.d/x": an absolute path'],
    ["a path outside the top folder", "package", "not inside the package's top folder"],
    ["a backslash", "package\\..\\x", "a backslash in a path"],
  ])("refuses %s", (_what, name, message) => {
    const error = refusal([file(name)]);
    expect(error.code).toBe("ETARPATH");
    expect(error.message).toContain(message);
  });

  it("refuses a duplicate name (a later entry must not shadow an earlier one)", () => {
    expect(refusal([file("package/a.wasm"), file("package/./a.wasm")]).message).toContain("a duplicate name");
  });

  it("refuses too many files", () => {
    const many = Array.from({ length: TAR_LIMITS.maxFiles + 1 }, (_, i) => file(`package/f${i}`));
    const error = refusal(many);
    expect(error.code).toBe("ETARFILES");
    expect(error.message).toBe(`evil@1.0.0: more than ${TAR_LIMITS.maxFiles} files (refused)`);
  });

  it("refuses a gzip bomb without inflating past the cap", () => {
    const bomb = gzipSync(Buffer.alloc(TAR_LIMITS.maxBytes + 2 ** 20), { level: 9 });
    expect(bomb.length).toBeLessThan(200_000);
    const error = refusal(bomb);
    expect(error.code).toBe("ETARSIZE");
    expect(error.message).toBe("evil@1.0.0: decompresses to more than 64 MiB (refused)");
  });

  it("refuses what is not gzip, and a damaged header", () => {
    expect(refusal(Buffer.from("not a tarball")).message).toMatch(/not a gzip file/);
    const tar = Buffer.alloc(1024);
    tar.write("package/x", 0);
    expect(refusal(gzipSync(tar)).message).toMatch(/malformed|checksum/);
  });
});

describe("writeTarball", () => {
  it("is deterministic: the same entries give the same bytes", () => {
    const entries = [file("package/package.json", "{}"), file("package/x.wasm", "abc")];
    expect(writeTarball(entries).equals(writeTarball(entries))).toBe(true);
  });
});
