/**
 * Worker-thread side of `WorkerSandbox`: owns one guest instance and runs it to completion for
 * each delivered message. Nothing here is trusted with policy — the parent thread holds the
 * watchdog and decides what a failure means; this side only reports.
 */
import { parentPort } from "node:worker_threads";
import { CanonicalHost, describe, GuestFault } from "./canonical-host.js";
import type { WorkerReply, WorkerRequest } from "./worker-protocol.js";

const port = parentPort!;
let host: CanonicalHost | null = null;

const reply = (message: WorkerReply) => port.postMessage(message);
const failure = (error: unknown): WorkerReply => ({
  type: "failed",
  kind: error instanceof GuestFault ? "fault" : "trap",
  message: describe(error),
});

port.on("message", (request: WorkerRequest) => {
  if (request.type === "start") {
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
  if (!host) return;
  const t = performance.now();
  try {
    const output = host.receive(request.message);
    reply({ type: "done", output, guestMs: performance.now() - t, units: host.lastOutputUnits });
  } catch (error) {
    host = null;
    reply(failure(error));
  }
});
