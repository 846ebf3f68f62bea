/**
 * Worker-thread side of `WorkerSandbox`: owns one guest instance and runs it to completion for
 * each delivered message. Nothing here is trusted with policy — the parent thread holds the
 * watchdog and decides what a failure means; this side only reports.
 *
 * A batch's results go back together, one `postMessage` for the batch, except that what is held
 * is sent at once past `FLUSH_MS` since the last reply or past `FLUSH_UNITS` of output: the
 * parent's watchdog measures the time since a delivery last came back, and the worker's heap is
 * sized for one delivery's output (`workerHeapLimitMiB`), not a batch's.
 *
 * Held: while the parent holds this proxy's deliveries back (its output is not being taken: a
 * slow client), the worker stops between two deliveries of a batch and waits for the hold to end,
 * so what a pause cannot take back is the delivery running, not the rest of the batch. It says so
 * first (`held`): the parent's watchdog does not count that wait as the guest's.
 */
import { parentPort } from "node:worker_threads";
import { CanonicalHost, describe, GuestFault } from "./canonical-host.js";
import { withMemoryAtTrap } from "./memory-at-trap.js";
import type { DeliveryResult, WorkerReply, WorkerRequest } from "./worker-protocol.js";

/** Results held longer than this (ms) are sent before the next delivery runs. */
const FLUSH_MS = 2;
/** Output held beyond this many units is sent before the next delivery runs. */
const FLUSH_UNITS = 64 * 1024;

/** How often a held worker looks at the word again (it is also woken when the hold ends). */
const HELD_POLL_MS = 100;

const port = parentPort!;
let host: CanonicalHost | null = null;
let hold: Int32Array | null = null;

const reply = (message: WorkerReply) => port.postMessage(message);
/** The guest's memory cap, in pages (from `start`). */
let maxMemoryPages = Number.POSITIVE_INFINITY;
const failure = (error: unknown): WorkerReply =>
  error instanceof GuestFault
    ? { type: "failed", kind: "fault", message: describe(error) }
    : { type: "failed", kind: "trap", message: withMemoryAtTrap(describe(error), host?.memoryBytes, maxMemoryPages) };

port.on("message", (request: WorkerRequest) => {
  if (request.type === "start") {
    hold = new Int32Array(request.hold);
    maxMemoryPages = request.limits.maxMemoryPages;
    try {
      host = new CanonicalHost(request.module, {
        encodings: request.encodings,
        maxMessageUnits: request.limits.maxMessageUnits,
        maxOutputUnitsPerDelivery: request.limits.maxOutputUnitsPerDelivery,
        maxSendsPerReceive: request.limits.maxSendsPerReceive,
        grants: request.grants,
      });
      reply({ type: "started" });
    } catch (error) {
      reply(failure(error));
    }
    return;
  }
  let results: DeliveryResult[] = [];
  let heldUnits = 0;
  let since = performance.now();
  /** Sends the results held so far (if any). */
  const flush = (now: number) => {
    if (results.length > 0) reply({ type: "done", results });
    results = [];
    heldUnits = 0;
    since = now;
  };
  for (const message of request.messages) {
    if (!host) return;
    if (Atomics.load(hold!, 0) === 1) {
      flush(since);
      // Said again for a new hold begun before this one's end was seen: the parent counts by number.
      for (let said = -1; Atomics.load(hold!, 0) === 1; Atomics.wait(hold!, 0, 1, HELD_POLL_MS)) {
        const number = Atomics.load(hold!, 1);
        if (number !== said) reply({ type: "held", hold: (said = number) });
      }
      since = performance.now();
    }
    const t = performance.now();
    let output: string[];
    try {
      output = host.receive(message);
    } catch (error) {
      const failed = failure(error); // while the host (and the memory it names) is still there
      host = null;
      flush(since); // what came before it, first
      reply(failed);
      return;
    }
    const now = performance.now();
    results.push({ output, guestMs: now - t, units: host.lastOutputUnits });
    heldUnits += host.lastOutputUnits;
    if (heldUnits > FLUSH_UNITS || now - since > FLUSH_MS) flush(now);
  }
  flush(since);
});
