import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { Peer, PeerSink } from "../routing/peer.js";
import { allowWorkerPipes, findCommand, StartWatch, ttyHint, withOrigin } from "./start-diagnostics.js";

const peer = (open: () => Promise<void>): Peer => ({ label: "p", open, send() {}, close: async () => {} });
const sink: PeerSink = { message() {}, malformed() {}, closed() {} };

describe("start diagnostics", () => {
  it("hints only when stdin is a terminal", () => {
    expect(ttyHint("agent", { isTTY: true })).toMatch(/^cordon run: waiting for an ACP client on stdin\/stdout .*\n$/);
    expect(ttyHint("agent", { isTTY: true })!.trim().split("\n")).toHaveLength(1);
    expect(ttyHint("proxy", { isTTY: true })).toMatch(/^cordon proxy: waiting for a parent conductor/);
    expect(ttyHint("agent", { isTTY: false })).toBeNull();
    expect(ttyHint("agent", {})).toBeNull();
  });

  it("turns an ordinary end after a failed start into exit 1, and leaves other codes alone", async () => {
    const bad = peer(() => Promise.reject(new Error('cannot start agent "nope": command not found')));
    const good = peer(() => Promise.resolve());
    const watch = new StartWatch([good, bad, undefined], new Map([[bad, { command: "nope" }]]));
    const start = Promise.allSettled([good.open(sink), bad.open(sink)]);
    await watch.started(start);
    expect(watch.failed).toMatch(/command not found: "nope" is not in any directory of PATH/);
    expect(await watch.exitCode(0)).toBe(1);
    expect(await watch.exitCode(130)).toBe(130);
    const fine = new StartWatch([good]);
    await fine.started(good.open(sink));
    expect(await fine.exitCode(0)).toBe(0);
  });

  it("completes errors with the resolved path they are about", () => {
    expect(withOrigin("x.wasm cannot run as a Cordon proxy: cannot read it (ENOENT)", { path: "/abs/x.wasm" })).toBe(
      "x.wasm cannot run as a Cordon proxy: cannot read it (ENOENT) (/abs/x.wasm)",
    );
    expect(withOrigin('proxy "x" (/abs/x.wasm) failed to start', { path: "/abs/x.wasm" })).toBe('proxy "x" (/abs/x.wasm) failed to start');
    expect(withOrigin('cannot start agent "./a": command not found', { command: "./a", cwd: "/work" })).toBe(
      'cannot start agent "./a": command not found: /work/a does not exist or is not executable',
    );
    expect(findCommand("node")).toMatch(/\/node$/);
    expect(findCommand(process.execPath)).toBe(process.execPath);
    expect(findCommand("surely-no-such-command-here")).toBeNull();
  });

  it("gives stderr room for two pipes per worker", () => {
    const before = [process.stderr.getMaxListeners(), process.stdout.getMaxListeners()];
    try {
      allowWorkerPipes(8);
      expect(process.stderr.getMaxListeners()).toBeGreaterThanOrEqual(EventEmitter.defaultMaxListeners + 16);
    } finally {
      process.stderr.setMaxListeners(before[0]);
      process.stdout.setMaxListeners(before[1]);
    }
  });
});
