/**
 * A component that is a native process speaking ACP on its stdio: the agent, or a trusted native
 * proxy. It inherits the conductor's environment, as editors do, plus any variables the chain
 * config adds. Its stderr is passed through to ours and the last few KB are kept, and so are the
 * last lines of its stdout that were not JSON-RPC (a usage text, a banner: `output-tail.ts`), so
 * that when it dies — or never answers `initialize` — the error the client gets says why.
 *
 * It runs in its own process group (see `process-group.ts`), because what Cordon starts is often
 * a launcher (`npx …`, an npm wrapper around a native binary) whose child — the real agent —
 * inherits the pipes. Ending it means ending the group: EOF on its stdin, a grace, SIGTERM to the
 * group, a grace, SIGKILL to the group; nothing waits for pipes a grandchild may hold. When the
 * process Cordon started exits, the component is dead: what is left of its group is ended the
 * same way, and the death is reported once its stdout has drained (at most a second later).
 */
import type { ChildProcess } from "node:child_process";
import { writeStderr } from "../log.js";
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { NdjsonChannel } from "../protocol/ndjson-channel.js";
import type { FailureDetail, Peer, PeerSink } from "../routing/peer.js";
import { ChannelPeer } from "./channel-peer.js";
import {
  type ChildEvent,
  type ChildListener,
  type EarlyProcess,
  endProcess,
  type ProcessSpec,
  spawnComponent,
  spawnedOk,
  UNUSED_GRACE_MS,
} from "./early-process.js";
import { OutputTail } from "./output-tail.js";

import { unregisterGroup } from "./process-group.js";

export { EarlyProcess, type ProcessSpec } from "./early-process.js";

const STDERR_TAIL_BYTES = 4096;
/** After the process exits, how long its stdout and stderr may stay open (held by a grandchild) before the death is reported anyway. */
const DRAIN_AFTER_EXIT_MS = 1000;
/** The grace after EOF before SIGTERM, and after SIGTERM before SIGKILL. */
const END_GRACE_MS = 1500;

/** How long `close` waits, once the group is empty, for Node to reap the process it started. */
const REAP_WAIT_MS = 1000;

/** One spawned instance (a restarted proxy gets a new one). */
interface Instance {
  child: ChildProcess;
  /** Its process group id (its pid), when it runs in one. */
  pgid: number | undefined;
  channel: NdjsonChannel | null;
  exited: boolean;
  /** Whether anything was sent to it; one that got nothing is ended without the usual grace. */
  used: boolean;
  ending: Promise<void> | null;
}

export class ChildProcessPeer extends ChannelPeer implements Peer {
  readonly label: string;
  /** A native proxy's swimlane in traces: its name in the chain. */
  readonly traceName?: string;
  private current: Instance | null = null;
  private stderrTail = "";
  private readonly stdoutTail = new OutputTail();

  constructor(
    private readonly spec: ProcessSpec,
    role: string,
    private readonly passStderr: (chunk: Buffer) => void = writeStderr,
    name?: string,
    /** Already started for this peer (`EarlyProcess`): its first `open` adopts it instead of spawning. */
    private early?: EarlyProcess,
  ) {
    super();
    this.label = `${role} "${name ?? [spec.command, ...spec.args].join(" ")}"`;
    if (role === "proxy" && name) this.traceName = name;
  }

  /** The pid of the process Cordon started (the launcher, for `npx …`), while one runs. */
  get pid(): number | undefined {
    return this.current?.child.pid;
  }

  open(sink: PeerSink): Promise<void> {
    return new Promise((resolve, reject) => {
      const adopted = this.early?.adopt() ?? null;
      this.early = undefined;
      const { child, pgid } = adopted ?? spawnComponent(this.spec);
      const once = adopted?.once ?? ((event: ChildEvent, listener: ChildListener) => child.once(event, listener));
      const instance: Instance = { child, pgid, channel: null, exited: false, used: false, ending: null };
      this.current = instance;
      let spawned = false;
      let stdoutDone = false;
      let stderrDone = false;
      let reported = false;
      let exitInfo: string | null = null;
      // Report the death only once its stdout and stderr are drained, so its last messages are
      // routed first and the last lines it wrote to either are in the report (a pipe's last data
      // may come after the exit).
      const report = () => {
        if (reported || !stdoutDone || !stderrDone || exitInfo === null) return;
        reported = true;
        const { said, detail } = this.output();
        sink.closed(exitInfo + said, detail);
      };
      once("spawn", () => {
        spawned = true;
        resolve();
      });
      once("error", (error: NodeJS.ErrnoException) => {
        if (instance.pgid !== undefined) unregisterGroup(instance.pgid);
        // Never started: there is nothing to end (else closing would wait out every grace for an exit that never comes).
        if (!spawnedOk(child)) instance.exited = true;
        if (!spawned) reject(new Error(`cannot start ${this.label}: ${error.code === "ENOENT" ? "command not found" : error.message}`));
      });
      child.stderr!.on("data", (chunk: Buffer) => {
        this.passStderr(chunk);
        this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
      });
      child.stderr!.once("close", () => {
        stderrDone = true;
        report();
      });
      once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
        instance.exited = true;
        exitInfo = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        // Whatever it left behind in its group goes too; a grandchild holding stdout does not delay the report for long.
        void this.end(instance);
        setTimeout(() => {
          stdoutDone = stderrDone = true;
          report();
        }, DRAIN_AFTER_EXIT_MS).unref();
        report();
      });
      instance.channel = this.channel = new NdjsonChannel(child.stdout!, child.stdin!, {
        message: (value) => {
          if (!reported) sink.message(value);
        },
        malformed: (detail, line) => {
          if (line !== undefined) this.stdoutTail.push(line);
          if (!reported) sink.malformed(detail);
        },
        congested: (congested) => sink.congested?.(congested),
        end: () => {
          stdoutDone = true;
          report();
        },
      });
    });
  }

  /**
   * What the process said besides JSON-RPC, to complete an error about it: `said` for its message
   * (`; stdout (not JSON-RPC): Usage: … | …; stderr: …`, or ""), `detail` for its `data` (the
   * stdout lines and the stderr tail, or undefined when it said nothing).
   */
  output(): { said: string; detail: FailureDetail | undefined } {
    const stdout = this.stdoutTail.lines();
    const stderr = this.stderrTail.trim() ? this.stderrTail : "";
    let said = "";
    if (stdout.length > 0) said += `; stdout (not JSON-RPC): ${this.stdoutTail.text()}`;
    if (stderr) said += `; stderr: ${lastLines(stderr)}`;
    if (stdout.length === 0 && !stderr) return { said, detail: undefined };
    return { said, detail: { ...(stderr ? { stderr } : {}), ...(stdout.length > 0 ? { stdout } : {}) } };
  }

  override send(message: JsonRpcMessage): void {
    if (this.current) this.current.used = true;
    super.send(message);
  }

  /** Ends the current instance and everything in its process group (bounded: about 2 × 1.5 s + 1 s). */
  async close(): Promise<void> {
    if (this.current) await this.end(this.current);
  }

  private end(instance: Instance): Promise<void> {
    instance.ending ??= (async () => {
      const { child, pgid } = instance;
      await endProcess(
        child,
        pgid,
        instance.used ? END_GRACE_MS : UNUSED_GRACE_MS,
        () => instance.channel?.closeOutput(),
        () => instance.exited,
      );
      // The group is empty, but the process we started may not be reaped yet (the group check
      // ignores zombies): "gone" means Node has seen its exit too. Bounded: it is only a reap away.
      if (!instance.exited && spawnedOk(child)) {
        await Promise.race([
          new Promise((done) => child.once("exit", done)),
          new Promise((done) => setTimeout(done, REAP_WAIT_MS).unref()),
        ]);
      }
      // A process outside the group (one that left it on purpose) may still hold the pipes: stop
      // reading them rather than wait; nothing in the group is left to write to them.
      setTimeout(() => {
        for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
      }, 200).unref();
    })();
    return instance.ending;
  }
}

function lastLines(text: string, count = 5): string {
  return text.trimEnd().split("\n").slice(-count).join(" | ");
}
