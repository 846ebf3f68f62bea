/**
 * A component that is a native process speaking ACP on its stdio: the agent (and, later,
 * trusted native proxies). It inherits the conductor's environment, as editors do, plus any
 * variables the chain config adds. Its stderr is passed through to ours and the last few KB are
 * kept, so that when it dies the error the client gets says why.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { NdjsonChannel } from "../protocol/ndjson-channel.js";
import type { Peer, PeerSink } from "../routing/peer.js";
import { ChannelPeer } from "./channel-peer.js";

export interface ProcessSpec {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

const STDERR_TAIL_BYTES = 4096;

export class ChildProcessPeer extends ChannelPeer implements Peer {
  readonly label: string;
  private child: ChildProcess | null = null;
  private stderrTail = "";
  private exited: Promise<void> = Promise.resolve();

  constructor(
    private readonly spec: ProcessSpec,
    role: string,
    private readonly passStderr: (chunk: Buffer) => void = (chunk) => process.stderr.write(chunk),
    name?: string,
  ) {
    super();
    this.label = `${role} "${name ?? [spec.command, ...spec.args].join(" ")}"`;
  }

  open(sink: PeerSink): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.spec.command, this.spec.args, {
        cwd: this.spec.cwd,
        env: { ...process.env, ...this.spec.env },
        stdio: ["pipe", "pipe", "pipe"],
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
        resolve();
      });
      child.once("error", (error: NodeJS.ErrnoException) => {
        if (!spawned) reject(new Error(`cannot start ${this.label}: ${error.code === "ENOENT" ? "command not found" : error.message}`));
      });
      child.stderr!.on("data", (chunk: Buffer) => {
        this.passStderr(chunk);
        this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
      });
      child.once("exit", (code, signal) => {
        exitInfo = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        if (this.stderrTail.trim()) exitInfo += `; stderr: ${lastLines(this.stderrTail)}`;
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

  /** EOF on its stdin, then SIGTERM after a grace period, then SIGKILL. */
  async close(graceMs = 1500): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.channel?.closeOutput();
    const term = setTimeout(() => child.kill("SIGTERM"), graceMs);
    const kill = setTimeout(() => child.kill("SIGKILL"), graceMs * 2);
    await this.exited;
    clearTimeout(term);
    clearTimeout(kill);
  }
}

function lastLines(text: string, count = 5): string {
  return text.trimEnd().split("\n").slice(-count).join(" | ");
}
