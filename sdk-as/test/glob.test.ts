/**
 * The SDK's glob helper (sdk-as/assembly/glob.ts), run in a real component: a fixture answers
 * `_test/glob` with what `Glob.compile(pattern, flags).matches(text)` says for each case (and
 * checks that the one-call `globMatch` agrees).
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { loadFixture, proxyUnderTest } from "./harness.js";

const IGNORE_CASE = 1;
const TEXT = 2;

let glob: LoadedComponent;
beforeAll(async () => {
  glob = await loadFixture("glob");
}, 180_000);

type Case = [pattern: string, text: string, expected: boolean, flags?: number];

async function check(cases: Case[]): Promise<void> {
  const p = await proxyUnderTest(glob);
  const [answer] = p.deliver({
    jsonrpc: "2.0",
    id: 1,
    method: "_test/glob",
    params: { cases: cases.map(([pattern, text, , flags]) => ({ pattern, text, flags: flags ?? 0 })) },
  });
  const got = answer.result as unknown[];
  expect(cases.map(([pattern, text, , flags], i) => [pattern, text, flags ?? 0, got[i]])).toEqual(
    cases.map(([pattern, text, expected, flags]) => [pattern, text, flags ?? 0, expected]),
  );
}

describe("glob patterns (SDK)", () => {
  it("match the whole text: literals, ? and * (which stop at / in path mode)", async () => {
    await check([
      ["abc", "abc", true],
      ["abc", "abcd", false],
      ["abc", "ab", false],
      ["", "", true],
      ["", "a", false],
      ["a?c", "abc", true],
      ["a?c", "ac", false],
      ["*.ts", "index.ts", true],
      ["*.ts", "src/index.ts", false],
      ["src/*", "src/a", true],
      ["src/*", "src/a/b", false],
      ["a?b", "a/b", false],
      ["*", "", true],
      ["a*b*c", "axxbyyc", true],
      ["a*b*c", "axxbyy", false],
    ]);
  });

  it("** crosses directories, and **/ matches none as well", async () => {
    await check([
      ["src/**/*.ts", "src/a/b/c.ts", true],
      ["src/**/*.ts", "src/c.ts", true],
      ["src/**/*.ts", "lib/c.ts", false],
      ["**/.env*", ".env", true],
      ["**/.env*", "app/config/.env.local", true],
      ["**/.env*", "app/env", false],
      ["**", "a/b/c", true],
      ["a/**", "a/b/c", true],
      ["a/**", "b/c", false],
    ]);
  });

  it("character classes: lists, ranges, negation, ] as a member, and an unclosed [ as itself", async () => {
    await check([
      ["file[0-9].txt", "file7.txt", true],
      ["file[0-9].txt", "filex.txt", false],
      ["[abc]", "b", true],
      ["[!abc]", "b", false],
      ["[^abc]", "d", true],
      ["[]a]", "]", true],
      ["[a-]", "-", true],
      ["x[", "x[", true],
      ["a[/]b", "a/b", false],
      ["\\*", "*", true],
      ["\\*", "a", false],
      ["\\[a]", "[a]", true],
    ]);
  });

  it("TEXT mode lets * and ? cross /; IGNORE_CASE compares lower-cased; ? is one code point", async () => {
    await check([
      ["rm -rf*", "rm -rf /tmp/build", true, TEXT],
      ["rm -rf*", "rm -rf /tmp/build", false],
      ["curl ?ttp*evil*", "curl http://evil.example", true, TEXT],
      ["*PASSWORD*", "/home/u/.password-store", true, TEXT | IGNORE_CASE],
      ["*PASSWORD*", "/home/u/.password-store", false, TEXT],
      ["Read*", "README.md", true, IGNORE_CASE],
      ["a?b", "a😀b", true],
      ["a??b", "a😀b", false],
      ["ü*", "Über", true, IGNORE_CASE],
    ]);
  });

  it("stays linear on patterns that make backtracking matchers explode", async () => {
    const text = "a".repeat(2000);
    await check([
      [`${"a*".repeat(30)}b`, text, false, TEXT],
      [`${"*a".repeat(30)}`, text, true, TEXT],
      [`${"**/".repeat(20)}x`, `${"d/".repeat(500)}x`, true],
    ]);
  });

  it("find: the leftmost, longest match inside a text (UTF-16 indices), from a position; canStart: could it still match", async () => {
    const p = await proxyUnderTest(glob);
    const ask = (cases: object[]) => p.deliver({ jsonrpc: "2.0", id: 2, method: "_test/glob", params: { cases } })[0].result as unknown[];
    expect(
      ask([
        { pattern: "sk-[a-z0-9]???*", text: "key: sk-abcd12 and sk-zz", flags: TEXT, op: "find" },
        { pattern: "sk-[a-z0-9]???", text: "key: sk-abcd12 and sk-zzzz", flags: TEXT, op: "find", from: 6 },
        { pattern: "b?", text: "😀ab😀", op: "find" },
        { pattern: "x", text: "abc", op: "find" },
        { pattern: "SK-*", text: "an sk-1", flags: TEXT | IGNORE_CASE, op: "find" },
      ]),
    ).toEqual([
      [5, 24], // TEXT: * runs to the end (longest)
      [19, 26],
      [3, 6], // after the emoji's two code units; ? takes the whole second emoji
      [-1, -1],
      [3, 7],
    ]);
    expect(
      ask([
        { pattern: "sk-[a-z]*", text: "sk", flags: TEXT, op: "canStart" },
        { pattern: "sk-[a-z]*", text: "sk-ab", flags: TEXT, op: "canStart" },
        { pattern: "sk-[a-z]*", text: "sx", flags: TEXT, op: "canStart" },
        { pattern: "abc", text: "", op: "canStart" },
        { pattern: "abc", text: "abcd", op: "canStart" },
      ]),
    ).toEqual([true, true, false, true, false]);
  });
});
