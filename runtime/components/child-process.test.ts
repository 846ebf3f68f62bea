/**
 * Ending a component that never got going: a command that could not be spawned is not waited
 * for at all, and a process that was never sent anything (the chain failed to start around it)
 * is ended after a short grace instead of the full one. Timers are faked, so what is checked is
 * which step the ending reached by a given point of the clock, not how long anything took.
 */
import { setTimeout as realSleep } from "node:timers/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PeerSink } from "../routing/peer.js";
import { ChildProcessPeer } from "./child-process.js";

const FAKED = ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] as const;

function sink(): PeerSink & { reasons: string[] } {
  const reasons: string[] = [];
  return { reasons, message: () => {}, malformed: () => {}, closed: (reason) => void reasons.push(reason) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("ChildProcessPeer.close", () => {
  it("does not wait for a command that could not be spawned", async () => {
    const peer = new ChildProcessPeer({ command: "/nonexistent/cordon-agent", args: [] }, "agent", () => {});
    await expect(peer.open(sink())).rejects.toThrow('cannot start agent "/nonexistent/cordon-agent": command not found');
    vi.useFakeTimers({ toFake: [...FAKED] });
    let closed = false;
    const closing = peer.close().then(() => (closed = true));
    for (let i = 0; i < 10 && !closed; i++) await new Promise((r) => setImmediate(r));
    expect(closed).toBe(true); // no timer ran: nothing was waited for
    await closing;
  });

  it("ends a process that was never sent anything after a short grace: SIGTERM by 250 ms of the clock", async () => {
    // `sleep` never reads its stdin, so EOF does not end it; only the signal does.
    const peer = new ChildProcessPeer({ command: "sh", args: ["-c", "exec sleep 30"] }, "agent", () => {});
    const s = sink();
    await peer.open(s);
    vi.useFakeTimers({ toFake: [...FAKED] });
    const closing = peer.close();
    await vi.advanceTimersByTimeAsync(250);
    // The clock stays at 250 ms (the full grace is 1.5 s); the kernel and the pipes take real time.
    for (let i = 0; i < 200 && s.reasons.length === 0; i++) await realSleep(25);
    expect(s.reasons).toEqual(["was killed by SIGTERM"]);
    await vi.advanceTimersByTimeAsync(5000); // the rest of the ending, on the faked clock
    await closing;
  });
});

describe("ChildProcessPeer's report of a death", () => {
  it("holds the stderr written after the exit (a grandchild's, 100 ms later)", async () => {
    // stdout ends with the shell; stderr stays open in the grandchild until it has written.
    const script = '(sleep 0.1; echo "late words" >&2) >/dev/null </dev/null & exit 3';
    const peer = new ChildProcessPeer({ command: "sh", args: ["-c", script] }, "agent", () => {});
    const s = sink();
    await peer.open(s);
    for (let i = 0; i < 200 && s.reasons.length === 0; i++) await realSleep(10);
    expect(s.reasons).toEqual(["exited with code 3; stderr: late words"]);
    await peer.close();
  });
});
