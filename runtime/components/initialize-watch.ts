/**
 * A decorator around the agent's peer that reports an agent which never answers `initialize`.
 *
 * An agent that starts but never reads its stdin, or reads and never answers (a wrong binary, an
 * agent waiting for a login prompt on a terminal it does not have, a wrapper that swallowed its
 * input), would otherwise leave the editor waiting forever. When the agent has not answered the
 * `initialize` Cordon forwarded within the timeout, the agent is treated as failed: the peer
 * reports it closed with a reason naming the timeout, so the conductor logs one line
 * (`agent "…" did not answer initialize within 30 s …`), answers the client's `initialize` with a
 * JSON-RPC error carrying the same text through every proxy, and Cordon ends (exit 1). An answer
 * that arrives after that is dropped here. When the wrapped peer kept what the agent wrote besides
 * JSON-RPC (a banner, then silence: {@link SaysOutput}), the reason ends with it.
 *
 * Everything else passes through untouched; the wrapped peer stays the one that owns the process.
 */
import type { JsonRpcMessage } from "../protocol/json-rpc.js";
import { Methods } from "../protocol/methods.js";
import type { FailureDetail, Peer, PeerSink } from "../routing/peer.js";

/** A peer that keeps what its process wrote besides JSON-RPC (`ChildProcessPeer.output`). */
interface SaysOutput {
  output(): { said: string; detail: FailureDetail | undefined };
}

const saysOutput = (peer: Peer): peer is Peer & SaysOutput => typeof (peer as Partial<SaysOutput>).output === "function";

/** Default time the agent has to answer `initialize` (a cold `npx` start can take a while). */
export const DEFAULT_INITIALIZE_TIMEOUT_MS = 60_000;
/** Environment variable that sets the timeout (ms) when the command line does not. */
export const INITIALIZE_TIMEOUT_ENV = "CORDON_INITIALIZE_TIMEOUT_MS";

export interface InitializeWatchOptions {
  timeoutMs: number;
  /** How to change it, for the message (e.g. `--initialize-timeout <ms>`). */
  setBy?: string;
}

/**
 * The timeout: `value` (ms, a positive integer; throws on anything else), else the environment's
 * (ignored when it is not such a number), else the default.
 */
export function initializeTimeoutMs(value: string | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const parse = (raw: string) => {
    const ms = Number(raw);
    return Number.isSafeInteger(ms) && ms > 0 ? ms : null;
  };
  if (value !== undefined) {
    const ms = parse(value);
    if (ms === null)
      throw new Error(`the initialize timeout must be a positive whole number of milliseconds, not ${JSON.stringify(value)}`);
    return ms;
  }
  const fromEnv = env[INITIALIZE_TIMEOUT_ENV];
  return (fromEnv && parse(fromEnv)) || DEFAULT_INITIALIZE_TIMEOUT_MS;
}

function describeMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

export class InitializeWatch implements Peer {
  readonly label: string;
  readonly traceName?: string;
  private timer: NodeJS.Timeout | null = null;
  /** The id of the `initialize` on the wire to the agent, while it waits. */
  private waiting: string | number | null = null;
  private timedOut = false;

  constructor(
    private readonly inner: Peer,
    private readonly options: InitializeWatchOptions,
  ) {
    this.label = inner.label;
    this.traceName = inner.traceName;
  }

  open(sink: PeerSink): Promise<void> {
    this.timedOut = false;
    return this.inner
      .open({
        message: (value) => {
          if (this.waiting !== null && isAnswerTo(value, this.waiting)) {
            this.clear();
            this.waiting = null;
          } else if (this.timedOut && isAnswer(value)) {
            return; // the late answer to the initialize that was already failed
          }
          if (!this.timedOut) sink.message(value);
        },
        malformed: (detail) => sink.malformed(detail),
        closed: (reason, detail) => {
          this.clear();
          sink.closed(reason, detail);
        },
        congested: sink.congested && ((congested) => sink.congested!(congested)),
      })
      .then(() => {
        this.sink = sink;
      });
  }

  private sink: PeerSink | null = null;

  send(message: JsonRpcMessage): void {
    const m = message as { method?: unknown; id?: unknown };
    if (
      m.method === Methods.initialize &&
      (typeof m.id === "string" || typeof m.id === "number") &&
      this.waiting === null &&
      !this.timedOut
    ) {
      this.waiting = m.id;
      this.timer = setTimeout(() => this.expire(), this.options.timeoutMs);
      this.timer.unref?.();
    }
    this.inner.send(message);
  }

  private expire(): void {
    this.timer = null;
    if (this.waiting === null) return;
    this.timedOut = true;
    const setting = this.options.setBy ? ` (change it with ${this.options.setBy})` : "";
    const output = saysOutput(this.inner) ? this.inner.output() : { said: "", detail: undefined };
    this.sink?.closed(
      `did not answer initialize within ${describeMs(this.options.timeoutMs)}${setting}; is it an ACP agent, and does it start without a terminal?${output.said}`,
      output.detail,
    );
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  close(): Promise<void> {
    this.clear();
    return this.inner.close();
  }

  pauseInput(): void {
    this.inner.pauseInput?.();
  }

  resumeInput(): void {
    this.inner.resumeInput?.();
  }
}

function isAnswer(value: unknown): boolean {
  return typeof value === "object" && value !== null && !("method" in value) && "id" in value;
}

function isAnswerTo(value: unknown, id: string | number): boolean {
  return isAnswer(value) && (value as { id: unknown }).id === id;
}
