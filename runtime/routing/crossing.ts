/**
 * An answer to a request that was routed past proxies (`Hop.skips`) must not overtake what those
 * proxies still owe: had the request gone through them, its answer would have come back through
 * them, behind their pending output. So the answer waits here until each proxy between the
 * answerer and the asker is idle (`Peer.whenIdle`), in the order the answer travels, and a turn's
 * updates still precede its answer.
 *
 * Cost: nothing when no proxy in between owes output (each `whenIdle` runs at once); otherwise one
 * callback held per waiting answer and proxy.
 */
import { type Logger, sanitizeForLog } from "../log.js";
import type { Hop } from "./hop.js";

/** Runs `deliver` once every proxy strictly between positions `from` and `to` owes no output. */
export function crossing(proxies: readonly Hop[], from: number, to: number, deliver: () => void, log: Logger): void {
  const step = to > from ? 1 : -1;
  for (let i = from + step; i !== to; i += step) {
    const hop = proxies[i];
    if (hop.bypassed || !hop.alive || !hop.peer.whenIdle) continue;
    let synchronous = true;
    let ranAtOnce = false;
    hop.peer.whenIdle(() => {
      if (synchronous) return void (ranAtOnce = true);
      try {
        crossing(proxies, i, to, deliver, log);
      } catch (error) {
        log.error(`internal error while routing an answer past ${hop.label}: ${sanitizeForLog(String(error), 2000)}`);
      }
    });
    synchronous = false;
    if (!ranAtOnce) return; // resumed from the callback, past this proxy
  }
  deliver();
}
