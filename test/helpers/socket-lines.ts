/**
 * Reads newline-delimited JSON from a socket for tests: `next()` resolves with the next message
 * (already received or future); `closed` when the peer closes. Errors are swallowed: tests that
 * provoke a reset look at `closed`.
 */
import type { Socket } from "node:net";

import type { Json } from "./raw-client.js";

export type { Json };

export interface SocketLines {
  next(): Promise<Json>;
  /** Messages received and not yet taken by `next`. */
  unread(): Json[];
  closed: Promise<void>;
}

export function socketLines(socket: Socket): SocketLines {
  const got: Json[] = [];
  const waiters: ((m: Json) => void)[] = [];
  let buffer = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const m = JSON.parse(buffer.slice(0, nl)) as Json;
      buffer = buffer.slice(nl + 1);
      const w = waiters.shift();
      if (w) w(m);
      else got.push(m);
    }
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const next = (): Promise<Json> => (got.length ? Promise.resolve(got.shift()!) : new Promise((resolve) => waiters.push(resolve)));
  return { next, unread: () => [...got], closed };
}
