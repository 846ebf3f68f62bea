/**
 * What a peer's death leaves to answer. The router calls these once the hop has failed; the
 * supervisor (supervisor.ts) then decides whether a proxy restarts.
 *
 * - Every request that was inside the dead peer is answered with the error naming it, to whoever
 *   asked (an instance of the asker that is gone gets nothing: its successor may reuse the id).
 * - After the agent's death, its errors travel back through the proxies like any answer; they get
 *   a moment, then whatever the client still waits for is answered directly, and the conductor ends.
 */
import { ErrorCodes, errorResponse, idFromKey, idKey, type JsonRpcResponse } from "../protocol/json-rpc.js";
import type { RouteEvent } from "./events.js";
import type { FailureData } from "./failure.js";
import type { Hop, Outgoing } from "./hop.js";

/** How long proxies get to relay the agent's death to the client before the conductor answers for them. */
const AGENT_DEATH_GRACE_MS = 250;

/** Answers the requests `dead` held (its drained `outgoing`) with `error`. */
export function answerHeld(dead: Hop, outgoing: [string, Outgoing][], error: JsonRpcResponse, emit: (event: RouteEvent) => void): void {
  for (const [key, pending] of outgoing) {
    if (pending.kind === "own") pending.answer(error);
    else if (pending.fromGeneration === pending.from.generation) {
      const answered = { answerer: dead, asker: pending.from, id: idFromKey(key), askerId: pending.fromId, method: pending.method };
      emit({ kind: "answered", ...answered, answer: error, stale: false });
      pending.from.forget(idKey(pending.fromId));
      if (pending.from.alive) pending.from.peer.send({ ...error, id: pending.fromId });
    }
  }
}

/** The agent died: answer what the client still waits for once the proxies had their moment, then `exit`. */
export function afterAgentDeath(client: Hop, reason: string, data: FailureData, exit: () => void): void {
  const deadline = Date.now() + AGENT_DEATH_GRACE_MS;
  const finish = () => {
    if (client.incoming.size > 0 && Date.now() < deadline) {
      setTimeout(finish, 5);
      return;
    }
    for (const [key, record] of [...client.incoming]) {
      client.forget(key);
      client.peer.send(errorResponse(record.id, ErrorCodes.internalError, reason, data));
    }
    exit();
  };
  finish();
}
