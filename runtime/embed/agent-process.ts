/**
 * The agent of an in-process chain: a native process speaking ACP on its stdio, started in its
 * own process group so that shutting the chain down ends everything the agent started (an MCP
 * server it spawned, a shell it left behind), not just the agent itself.
 *
 * Ending it: EOF on its stdin (the polite ACP way), then SIGTERM to the whole group after a grace
 * period, then SIGKILL. Once the agent has exited, what is left of its group gets SIGTERM too. If
 * the host process exits without closing the chain, the group is killed on the way out.
 *
 * Its stderr is the application's to route (`stderr` option); the last few KB are kept so that
 * when it dies the error the client gets says why, as `cordon run` does.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { NdjsonChannel } from "../protocol/ndjson-channel.js";
import type { Peer, PeerSink } from "../routing/peer.js";

export interface AgentProcessSpec {
  command: string;
  args: string[];
  /** Added to the host's environment (the agent inherits it, as editors do). */
  env?: Record<string, string>;
  cwd?: string;
  /** Receives the agent's stderr (default: discarded, but the tail is kept for error messages). */
  stderr?: (chunk: string) => void;
  /** How long EOF has to end the agent before SIGTERM, and SIGTERM before SIGKILL (default 1500 ms). */
  graceMs?: number;
}

const STDERR_TAIL_CHARS = 4096;
const groupKill = process.platform !== "win32";

/** Agents still running; one hook kills their groups if the host exits without closing them. */
const running = new Set<AgentProcessPeer>();
let hostExitHooked = false;
function track(peer: AgentProcessPeer): void {
  running.add(peer);
  if (hostExitHooked) return;
  hostExitHooked = true;
  process.once("exit", () => {
    for (const p of running) p.kill("SIGKILL");
  });
}

export class AgentProcessPeer implements Peer {
  readonly label: string;
  private child: ChildProcess | null = null;
  private channel: NdjsonChannel | null = null;
  private stderrTail = "";
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly spec: AgentProcessSpec) {
    this.label = `agent "${[spec.command, ...spec.args].join(" ")}"`;
  }

  /** The agent's process id (its process group id too), once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  open(sink: PeerSink): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.spec.command, this.spec.args, {
        cwd: this.spec.cwd,
        env: { ...process.env, ...this.spec.env },
        stdio: ["pipe", "pipe", "pipe"],
        detached: groupKill,
      });
      this.child = child;
      let spawned = false;
      let stdoutDone = false;
      let exitInfo: string | null = null;
      // Report the death only once its stdout is drained, so its last messages are routed first.
      const report = () => {
        if (stdoutDone && exitInfo !== null) sink.closed(exitInfo, this.stderrTail ? { stderr: this.stderrTail } : undefined);
      };
      this.exited = new Promise((done) => child.once("close", () => done()));
      child.once("spawn", () => {
        spawned = true;
        track(this);
        resolve();
      });
      child.once("error", (error: NodeJS.ErrnoException) => {
        if (!spawned) reject(new Error(`cannot start ${this.label}: ${error.code === "ENOENT" ? "command not found" : error.message}`));
      });
      child.stderr!.setEncoding("utf8");
      child.stderr!.on("data", (chunk: string) => {
        this.spec.stderr?.(chunk);
        this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
      });
      child.once("exit", (code, signal) => {
        running.delete(this);
        exitInfo = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        if (this.stderrTail.trim()) exitInfo += `; stderr: ${this.stderrTail.trimEnd().split("\n").slice(-5).join(" | ")}`;
        report();
      });
      this.channel = new NdjsonChannel(child.stdout!, child.stdin!, {
        message: (value) => sink.message(value),
        malformed: (detail) => sink.malformed(detail),
        congested: (congested) => sink.congested?.(congested),
        end: () => {
          stdoutDone = true;
          report();
        },
      });
    });
  }

  send(message: JsonRpcMessage): void {
    this.channel?.write(message);
  }

  pauseInput(): void {
    this.channel?.pause();
  }

  resumeInput(): void {
    this.channel?.resume();
  }

  /** EOF, then SIGTERM to the group, then SIGKILL; resolves when the agent is gone and its group was told to end. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const graceMs = this.spec.graceMs ?? 1500;
    if (child.exitCode === null && child.signalCode === null) {
      this.channel?.closeOutput();
      const term = setTimeout(() => this.kill("SIGTERM"), graceMs);
      const kill = setTimeout(() => this.kill("SIGKILL"), graceMs * 2);
      await this.exited;
      clearTimeout(term);
      clearTimeout(kill);
    }
    // Whatever the agent started in its group and left running ends with it.
    this.kill("SIGTERM");
  }

  /** Sends `signal` to the agent's process group (quietly nothing when it is gone). */
  kill(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      if (groupKill) process.kill(-pid, signal);
      else this.child?.kill(signal);
    } catch {
      // The group is already gone.
    }
  }
}
