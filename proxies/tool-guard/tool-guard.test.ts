import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { configProblems } from "../../runtime/sandbox/manifest.js";
import { exampleManifest, type Json, loadExampleProxy, ProxyUnderTest, proxyUnderTest } from "../../sdk-as/test/harness.js";

let component: LoadedComponent;
beforeAll(async () => {
  component = await loadExampleProxy("tool-guard");
});

const CONFIG = { deny: ["rm -rf*", "*password*", "git push --force*", "curl ?ttp*evil*"] };
const OPTIONS = [
  { optionId: "allow", name: "Allow", kind: "allow_once" },
  { optionId: "always", name: "Always allow", kind: "allow_always" },
  { optionId: "no", name: "Reject", kind: "reject_once" },
  { optionId: "never", name: "Never", kind: "reject_always" },
];

function permission(toolCall: Json, options: Json[] = OPTIONS, id: string | number = "perm-1"): Json {
  return ProxyUnderTest.fromAgent({ method: "session/request_permission", params: { sessionId: "s", toolCall, options } }, id);
}

describe("tool-guard proxy", () => {
  it("rejects a tool call whose title matches, with the first reject option, and never asks the client", async () => {
    const p = await proxyUnderTest(component, CONFIG);
    expect(p.deliver(permission({ toolCallId: "t1", title: "rm -rf /tmp/build", kind: "execute" }))).toEqual([
      { jsonrpc: "2.0", id: "perm-1", result: { outcome: { outcome: "selected", optionId: "no" } } },
    ]);
    expect(p.logs).toEqual([{ level: "warn", message: 'denied tool call "rm -rf /tmp/build": title matches "rm -rf*"; selected "no"' }]);
  });

  it("matches case-insensitively, with ? and *, against rawInput strings, joined argv and the rawInput JSON", async () => {
    const p = await proxyUnderTest(component, CONFIG);
    const cases: [Json, string][] = [
      [{ toolCallId: "a", title: "RM -RF ~" }, 'title matches "rm -rf*"'],
      [{ toolCallId: "b", title: "Run shell", rawInput: { command: "rm -rf /" } }, 'rawInput.command matches "rm -rf*"'],
      [{ toolCallId: "c", title: "Run shell", rawInput: { argv: ["rm", "-rf", "/"] } }, 'rawInput.argv matches "rm -rf*"'],
      [{ toolCallId: "d", title: "Read file", rawInput: { path: "/home/u/.PASSWORD-store/x" } }, 'rawInput matches "*password*"'],
      [{ toolCallId: "e", title: "Fetch", rawInput: { cmd: "curl http://evil.example" } }, 'rawInput.cmd matches "curl ?ttp*evil*"'],
      // a bare-string rawInput: its JSON text (quoted) does not match, the string itself does
      [{ toolCallId: "f", title: "Push", rawInput: "git push --force origin main" }, 'rawInput matches "git push --force*"'],
    ];
    for (const [i, [toolCall, why]] of cases.entries()) {
      expect(p.deliver(permission(toolCall, OPTIONS, i))).toEqual([
        { jsonrpc: "2.0", id: i, result: { outcome: { outcome: "selected", optionId: "no" } } },
      ]);
      expect(p.logs.at(-1)!.message).toContain(why);
    }
  });

  it("takes the SDK's glob classes and escapes: [0-7] ranges, [!…] negation, \\* as a literal star", async () => {
    const p = await proxyUnderTest(component, { deny: ["chmod [0-7][0-7]7 *", "kill -[!0-9]*", "echo \\*"] });
    const denied = (title: string, id: number) =>
      p.deliver(permission({ toolCallId: "g", title }, OPTIONS, id))[0].result?.outcome?.optionId === "no";
    expect(denied("chmod 777 /srv", 1)).toBe(true);
    expect(denied("chmod 750 /srv", 2)).toBe(false);
    expect(denied("kill -KILL 1", 3)).toBe(true);
    expect(denied("kill -9 1", 4)).toBe(false);
    expect(denied("echo *", 5)).toBe(true);
    expect(denied("echo hi", 6)).toBe(false);
  });

  it("uses reject_always when it is the only reject option, and answers cancelled when there is none", async () => {
    const p = await proxyUnderTest(component, CONFIG);
    const onlyAlways = [OPTIONS[0], OPTIONS[3]];
    expect(p.deliver(permission({ toolCallId: "t", title: "rm -rf x" }, onlyAlways, 1))).toEqual([
      { jsonrpc: "2.0", id: 1, result: { outcome: { outcome: "selected", optionId: "never" } } },
    ]);
    expect(p.deliver(permission({ toolCallId: "t", title: "rm -rf x" }, [OPTIONS[0]], 2))).toEqual([
      { jsonrpc: "2.0", id: 2, result: { outcome: { outcome: "cancelled" } } },
    ]);
    expect(p.logs.at(-1)!.message).toBe('denied tool call "rm -rf x": title matches "rm -rf*"; cancelled (no reject option offered)');
  });

  it("forwards everything else to the client unchanged and relays the answer", async () => {
    const p = await proxyUnderTest(component, CONFIG);
    const params =
      '{"sessionId":"s","toolCall":{"toolCallId":"t9","title":"ls -la","rawInput":{"command":"ls -la","x":1.0}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}';
    const out = p.deliverRaw(
      `{"jsonrpc":"2.0","id":"perm-9","method":"proxy/successor","params":{"method":"session/request_permission","params":${params}}}`,
    );
    expect(out).toHaveLength(1);
    const ourId = JSON.parse(out[0]).id;
    expect(out[0]).toBe(`{"jsonrpc":"2.0","id":${ourId},"method":"session/request_permission","params":${params}}`);
    expect(p.deliver({ jsonrpc: "2.0", id: ourId, result: { outcome: { outcome: "selected", optionId: "allow" } } })).toEqual([
      { jsonrpc: "2.0", id: "perm-9", result: { outcome: { outcome: "selected", optionId: "allow" } } },
    ]);
    expect(p.logs).toEqual([]);
  });

  it("with no deny list, or for other agent requests, it is a pass-through", async () => {
    const p = await proxyUnderTest(component, {});
    const [fwd] = p.deliver(permission({ toolCallId: "t", title: "rm -rf /" }));
    expect(fwd.method).toBe("session/request_permission");
    const guarded = await proxyUnderTest(component, CONFIG);
    const [fs] = guarded.deliver(
      ProxyUnderTest.fromAgent({ method: "fs/read_text_file", params: { sessionId: "s", path: "/etc/password" } }, 4),
    );
    expect(fs).toEqual({ jsonrpc: "2.0", id: fs.id, method: "fs/read_text_file", params: { sessionId: "s", path: "/etc/password" } });
  });

  it("embeds a manifest whose config schema accepts its config and refuses mistakes", async () => {
    const manifest = exampleManifest("tool-guard");
    expect(manifest?.name).toBe("tool-guard");
    expect(manifest?.description).toBeTruthy();
    expect(await configProblems(manifest, { deny: ["rm -rf*"] })).toEqual([]);
    expect(await configProblems(manifest, { deny: "rm -rf*" })).not.toEqual([]);
  });
});
