/**
 * The bound on connections that have not authenticated yet, shared by the bridge's loopback
 * listeners (anyone on the machine can connect to a loopback port): a connection must authenticate
 * within {@link PRE_AUTH_TIMEOUT_MS}, may have at most {@link MAX_PRE_AUTH_BYTES} buffered before it
 * does (each listener enforces the bytes on its own framing), and at most {@link MAX_WAITING} wait
 * at a time.
 *
 * {@link WaitingRoom} keeps the timers and the count for a listener that makes room by closing the
 * oldest waiting connection (the HTTP listener: an agent's HTTP client sends its request head at
 * once and does not retry a refused connection, so refusing newcomers would lock the agent out
 * while a squatter holds the room; closing the oldest lets a fresh authenticated request in however
 * many silent ones keep arriving). The TCP listener instead refuses newcomers with a `busy` line,
 * since its bridge command retries (`tcp-endpoint.ts`).
 *
 * Cost: one timer and one map entry per waiting connection; nothing per byte.
 */
import type { Socket } from "node:net";

/** Time a connection has to authenticate (the stdio bridge's hello, the HTTP request head). */
export const PRE_AUTH_TIMEOUT_MS = 3000;
/** What an unauthenticated connection may have buffered (a hello line, an HTTP request head). */
export const MAX_PRE_AUTH_BYTES = 4096;
/** Connections waiting to authenticate at one time. */
export const MAX_WAITING = 16;

export interface WaitingRoomLimits {
  timeoutMs?: number;
  maxWaiting?: number;
}

/** Why a waiting connection was closed. */
export type Expelled = "timeout" | "evicted";

export class WaitingRoom {
  /** Waiting connections in arrival order (the first is the oldest), with their deadline timers. */
  private readonly waiting = new Map<Socket, NodeJS.Timeout>();
  private readonly timeoutMs: number;
  private readonly maxWaiting: number;

  /** `onExpel` is told after the room has destroyed a connection. */
  constructor(
    limits: WaitingRoomLimits,
    private readonly onExpel: (why: Expelled) => void,
  ) {
    this.timeoutMs = limits.timeoutMs ?? PRE_AUTH_TIMEOUT_MS;
    this.maxWaiting = Math.max(1, limits.maxWaiting ?? MAX_WAITING);
  }

  /** Connections waiting now. */
  get size(): number {
    return this.waiting.size;
  }

  /** A new connection: it waits until {@link WaitingRoom.admit}ted, closed, or expelled. The oldest makes room if the room is full. */
  enter(socket: Socket): void {
    while (this.waiting.size >= this.maxWaiting) {
      const oldest = this.waiting.keys().next().value as Socket;
      this.expel(oldest, "evicted");
    }
    // A timer that fires after the event loop was blocked may run before the request that arrived
    // meanwhile is parsed: look once more after the pending I/O.
    const timer = setTimeout(() => setImmediate(() => this.waiting.has(socket) && this.expel(socket, "timeout")), this.timeoutMs);
    timer.unref();
    this.waiting.set(socket, timer);
    socket.once("close", () => this.leave(socket));
  }

  /** The connection authenticated: it no longer waits, and no longer counts. */
  admit(socket: Socket): void {
    this.leave(socket);
  }

  /** Whether the connection is still waiting to authenticate. */
  has(socket: Socket): boolean {
    return this.waiting.has(socket);
  }

  private leave(socket: Socket): void {
    const timer = this.waiting.get(socket);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.waiting.delete(socket);
  }

  private expel(socket: Socket, why: Expelled): void {
    this.leave(socket);
    socket.destroy();
    this.onExpel(why);
  }
}
