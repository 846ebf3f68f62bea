/**
 * What the trace viewer shows, computed from a `--trace` file: the lanes (participants, in chain
 * order) and one entry per message, with its kind, label and session.
 *
 * A trace is untrusted input — any proxy can put any string into the messages it sends, and a
 * trace file may be cut off mid-line — so everything here is defensive: lines that are not JSON
 * objects are counted and skipped, participant names are looked up in `Map`s (never as object
 * keys, so `__proto__` is just a name), and nothing is interpreted beyond reading fields.
 */

export type MessageKind = "request" | "response" | "notification" | "error" | "dropped" | "log";

export interface Lane {
  name: string;
  /** How Cordon's components are placed: the client first, proxies in chain order, the bridge, the agent last. */
  role: "client" | "proxy" | "bridge" | "agent";
}

export interface ViewMessage {
  /** Position in the trace file's event order (0-based). */
  seq: number;
  ts: number | null;
  kind: MessageKind;
  /** Lane index of the sender (for `dropped` and `log`: the component the event is about). */
  from: number;
  /** Lane index of the receiver; -1 for `dropped` (refused by Cordon) and `log`. */
  to: number;
  /**
   * Lanes the message was routed past on its way from `from` to `to` (proxies that never saw it:
   * not watching it, bypassed). From the trace's `past` record; for traces written before Cordon
   * recorded it, the proxy and bridge lanes strictly between the two, which is the same thing
   * since each event is one hop.
   */
  past: number[];
  /** The method, or for a response the method of the request it answers (when paired). */
  method: string;
  id: string | number | null;
  session: string | null;
  /** One line of text drawn on the arrow. */
  label: string;
  /** The trace event as it was in the file. */
  event: unknown;
}

export interface TraceModel {
  lanes: Lane[];
  messages: ViewMessage[];
  sessions: string[];
  /** Lines that were not JSON objects of a known event type. */
  skipped: number;
}

export interface ModelOptions {
  /** Names for `proxy:N` participants, by N (e.g. from the chain config). */
  proxyNames?: string[];
}

/** Longest label drawn on an arrow; the full message is one click away. */
export const MAX_LABEL_CHARS = 80;

type Json = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const idOf = (v: unknown): string | number | null => (typeof v === "string" || typeof v === "number" ? v : null);

export function buildTraceModel(text: string, options: ModelOptions = {}): TraceModel {
  const events: Json[] = [];
  let skipped = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      skipped++;
      continue;
    }
    const type = (value as Json).type;
    if (type !== "request" && type !== "response" && type !== "notification" && type !== "trace") {
      skipped++;
      continue;
    }
    events.push(value as Json);
  }

  const rename = (participant: string): string => {
    const m = /^proxy:(\d+)$/.exec(participant);
    const name = m ? options.proxyNames?.[Number(m[1])] : undefined;
    return name ?? participant;
  };

  // Participants in order of first appearance; then placed by role.
  const seen = new Map<string, number>();
  const note = (p: string | null) => {
    if (p !== null && !seen.has(p)) seen.set(p, seen.size);
  };
  for (const e of events) {
    if (e.type === "trace") note(str(e.component));
    else {
      note(str(e.from));
      note(str(e.to));
    }
  }
  const lanes = orderLanes([...seen.keys()]).map((raw) => ({ raw, name: rename(raw), role: roleOf(raw) }));
  const laneIndex = new Map(lanes.map((lane, i) => [lane.raw, i]));
  const lane = (p: unknown) => (typeof p === "string" ? (laneIndex.get(p) ?? -1) : -1);

  /** The lanes of a `past` record (names that are no lane are ignored), or the inferred ones. */
  const pastLanes = (past: unknown, from: number, to: number): number[] => {
    if (Array.isArray(past)) {
      const found = past.map(lane).filter((i) => i >= 0 && i !== from && i !== to);
      return [...new Set(found)].sort((a, b) => a - b);
    }
    const out: number[] = [];
    for (let i = Math.min(from, to) + 1; i < Math.max(from, to); i++)
      if (lanes[i].role === "proxy" || lanes[i].role === "bridge") out.push(i);
    return out;
  };

  const messages: ViewMessage[] = [];
  // Requests waiting for their response, by hop and id ("to→from#id" as the response will travel).
  const open = new Map<string, ViewMessage>();
  const pairKey = (from: unknown, to: unknown, id: unknown) => JSON.stringify([from, to, id]);
  for (const [seq, e] of events.entries()) {
    const ts = typeof e.ts === "number" && Number.isFinite(e.ts) ? e.ts : null;
    const base = { seq, ts, event: e };
    switch (e.type) {
      case "request":
      case "notification": {
        const from = lane(e.from);
        const to = lane(e.to);
        if (from < 0 || to < 0) {
          skipped++;
          continue;
        }
        const method = str(e.method) ?? "(no method)";
        const id = e.type === "request" ? idOf(e.id) : null;
        const session = str(e.session) ?? sessionIn(e.params);
        const detail = updateKind(e.params);
        const m: ViewMessage = {
          ...base,
          kind: e.type,
          from,
          to,
          past: pastLanes(e.past, from, to),
          method,
          id,
          session,
          label: `${method}${id === null ? "" : ` #${id}`}${detail ? ` ${detail}` : ""}`,
        };
        messages.push(m);
        if (e.type === "request") open.set(pairKey(e.to, e.from, e.id), m);
        continue;
      }
      case "response": {
        const from = lane(e.from);
        const to = lane(e.to);
        if (from < 0 || to < 0) {
          skipped++;
          continue;
        }
        const key = pairKey(e.from, e.to, e.id);
        const request = open.get(key);
        open.delete(key);
        const isError = e.is_error === true;
        const id = idOf(e.id);
        const method = request?.method ?? "";
        // A session's first answer (session/new, fork…) names the session: its request belongs to it too.
        const session = request?.session ?? sessionIn(e.payload);
        if (request && request.session === null && session !== null) request.session = session;
        const what = isError ? `error${errorText(e.payload)}` : "result";
        const label = `${method ? `${method} ` : ""}${id === null ? "" : `#${id} `}${what}`;
        messages.push({
          ...base,
          kind: isError ? "error" : "response",
          from,
          to,
          past: pastLanes(e.past, from, to),
          method,
          id,
          session,
          label,
        });
        continue;
      }
      case "trace": {
        const from = lane(e.component);
        if (from < 0) {
          skipped++;
          continue;
        }
        const text = str(e.message) ?? "";
        if ("dropped" in e) {
          const dropped = e.dropped as Json | null;
          const method = typeof dropped === "object" && dropped !== null ? (str(dropped.method) ?? "") : "";
          const id = typeof dropped === "object" && dropped !== null ? idOf(dropped.id) : null;
          const session = typeof dropped === "object" && dropped !== null ? sessionIn(dropped.params) : null;
          messages.push({
            ...base,
            kind: "dropped",
            from,
            to: -1,
            past: [],
            method,
            id,
            session,
            label: `dropped${method ? ` ${method}` : ""}: ${text}`,
          });
        } else {
          messages.push({
            ...base,
            kind: "log",
            from,
            to: -1,
            past: [],
            method: "",
            id: null,
            session: null,
            label: `${str(e.level) ?? "log"}: ${text}`,
          });
        }
        continue;
      }
    }
  }
  for (const m of messages) m.label = clip(m.label, MAX_LABEL_CHARS);

  const sessions = [...new Set(messages.map((m) => m.session).filter((s): s is string => s !== null))];
  return { lanes: lanes.map(({ name, role }) => ({ name, role })), messages, sessions, skipped };
}

function roleOf(participant: string): Lane["role"] {
  if (participant === "client") return "client";
  if (participant === "agent") return "agent";
  if (participant === "mcp-bridge") return "bridge";
  return "proxy";
}

/** client, proxies (`proxy:N` by N, other names in order of first appearance), the bridge, the agent. */
function orderLanes(participants: string[]): string[] {
  const rank = (p: string, i: number): [number, number] => {
    const m = /^proxy:(\d+)$/.exec(p);
    if (p === "client") return [0, 0];
    if (m) return [1, Number(m[1])];
    if (p === "mcp-bridge") return [3, 0];
    if (p === "agent") return [4, 0];
    return [2, i];
  };
  return participants
    .map((p, i) => ({ p, r: rank(p, i) }))
    .sort((a, b) => a.r[0] - b.r[0] || a.r[1] - b.r[1])
    .map(({ p }) => p);
}

function sessionIn(params: unknown): string | null {
  if (typeof params !== "object" || params === null) return null;
  return str((params as Json).sessionId);
}

/** `session/update`'s variant (`agent_message_chunk`…), which says more than the method. */
function updateKind(params: unknown): string | null {
  if (typeof params !== "object" || params === null) return null;
  const update = (params as Json).update;
  if (typeof update !== "object" || update === null) return null;
  return str((update as Json).sessionUpdate);
}

function errorText(payload: unknown): string {
  if (typeof payload !== "object" || payload === null) return "";
  const p = payload as Json;
  const code = typeof p.code === "number" ? ` ${p.code}` : "";
  const message = str(p.message);
  return `${code}${message ? `: ${message}` : ""}`;
}

/** At most `max` characters, on one line (control characters shown as spaces). */
function clip(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ");
  const chars = [...flat];
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join("")}…`;
}
