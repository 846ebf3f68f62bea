/**
 * The reference agent's on-disk session store.
 *
 * A store is a folder; each session is a sub-folder named by its id (`sess-<uuid>`) holding two files:
 *
 * - `session.json` — the session record ({@link StoredSession}): format tag, id, `cwd`,
 *   `additionalDirectories`, `createdAt`, `updatedAt`, the tool-call counter, the session state
 *   (`acp:mode`, `acp:config:<id>`, `acp:title`) and, for a fork, `forkedFrom`. It is rewritten whole,
 *   atomically (written to a temporary file, then renamed over the old one).
 * - `history.jsonl` — the conversation, one JSON object per line, appended as it happens:
 *   `{"kind":"user","prompt":[ContentBlock…]}` for a prompt (the blocks exactly as received) and
 *   `{"kind":"update","update":SessionUpdate}` for every user, agent, thought and tool update the agent
 *   sent (exactly as sent). `session/load` replays it in order.
 *
 * MCP server entries are not stored (they may carry secrets in `env`/`headers`; every load and resume
 * supplies them again). Several agent processes may share a store: records are replaced atomically and
 * history lines are appended whole, so a reader never sees half a record.
 *
 * Location: `cordon reference-agent --store <dir>`; else `$CORDON_AGENT_STORE`; else
 * `$XDG_STATE_HOME/cordon/sessions`; else `<os temp dir>/cordon-<uid>/sessions` (see {@link defaultStoreDir}).
 */
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ContentBlock, RequestError, type SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import type { SessionState } from "./controls.js";

/** The `format` tag of a `session.json`. */
export const STORE_FORMAT = "cordon-reference-agent/session/1";

/** What `session.json` holds. */
export interface StoredSession {
  format: typeof STORE_FORMAT;
  sessionId: string;
  cwd: string;
  additionalDirectories: string[];
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601: the last prompt turn or state change. */
  updatedAt: string;
  /** How many tool-call ids (`tool-<n>`) the session has handed out. */
  toolCalls: number;
  state: SessionState;
  /** The session this one was forked from. */
  forkedFrom?: string;
}

/** One line of `history.jsonl`. */
export type HistoryEntry = { kind: "user"; prompt: ContentBlock[] } | { kind: "update"; update: SessionUpdate };

const SESSION_ID = /^sess-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RECORD = "session.json";
const HISTORY = "history.jsonl";

/** Whether `id` is shaped like an id this agent hands out (anything else is never looked up on disk). */
export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id);
}

/**
 * The store folder used when `--store` is not given: `$CORDON_AGENT_STORE`, else
 * `$XDG_STATE_HOME/cordon/sessions`, else `cordon-<uid>/sessions` under the OS temp dir.
 */
export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CORDON_AGENT_STORE) return env.CORDON_AGENT_STORE;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "cordon", "sessions");
  const uid = typeof process.getuid === "function" ? String(process.getuid()) : "user";
  return join(tmpdir(), `cordon-${uid}`, "sessions");
}

let tempCounter = 0;

export class SessionStore {
  constructor(readonly dir: string) {}

  /** Creates the store folder if needed. */
  ensure(): void {
    mkdirSync(this.dir, { recursive: true });
  }

  private folder(sessionId: string): string {
    if (!isSessionId(sessionId)) throw new Error(`not a session id: ${sessionId}`);
    return join(this.dir, sessionId);
  }

  /** Whether the store holds this session. */
  has(sessionId: string): boolean {
    return isSessionId(sessionId) && existsSync(join(this.folder(sessionId), RECORD));
  }

  /** The session record, or `undefined` if the store does not hold it (or it is unreadable). */
  read(sessionId: string): StoredSession | undefined {
    if (!isSessionId(sessionId)) return undefined;
    let text: string;
    try {
      text = readFileSync(join(this.folder(sessionId), RECORD), "utf8");
    } catch {
      return undefined;
    }
    return parseRecord(text, sessionId);
  }

  /** Creates a session's folder with its record and an empty history. */
  create(record: StoredSession): void {
    this.ensure();
    mkdirSync(this.folder(record.sessionId), { recursive: true });
    writeFileSync(join(this.folder(record.sessionId), HISTORY), "", { flag: "a" });
    this.write(record);
  }

  /** Replaces the session record atomically. */
  write(record: StoredSession): void {
    const file = join(this.folder(record.sessionId), RECORD);
    const temp = `${file}.${process.pid}.${++tempCounter}.tmp`;
    writeFileSync(temp, `${JSON.stringify(record, null, 2)}\n`);
    renameSync(temp, file);
  }

  /** Appends one entry to a session's history. */
  append(sessionId: string, entry: HistoryEntry): void {
    appendFileSync(join(this.folder(sessionId), HISTORY), `${JSON.stringify(entry)}\n`);
  }

  /**
   * A session's history, in order. A last line cut short (a writer died mid-line) is ignored; any other
   * unreadable line is an internal error.
   */
  history(sessionId: string): HistoryEntry[] {
    let text: string;
    try {
      text = readFileSync(join(this.folder(sessionId), HISTORY), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    // Every complete line ends with "\n": the last piece is "" or a line cut short; drop it either way.
    const complete = text.split("\n").slice(0, -1);
    const entries: HistoryEntry[] = [];
    complete.forEach((line, index) => {
      if (line === "") return;
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        throw RequestError.internalError(
          { sessionId, line: index + 1 },
          `session store: history line ${index + 1} of ${sessionId} is not JSON`,
        );
      }
      const kind = (entry as { kind?: unknown }).kind;
      if (kind !== "user" && kind !== "update") {
        throw RequestError.internalError(
          { sessionId, line: index + 1 },
          `session store: history line ${index + 1} of ${sessionId} has no known kind`,
        );
      }
      entries.push(entry as HistoryEntry);
    });
    return entries;
  }

  /** Copies `sourceId`'s history into a new session with this record; the source is not touched. */
  fork(sourceId: string, record: StoredSession): void {
    mkdirSync(this.folder(record.sessionId), { recursive: true });
    const source = join(this.folder(sourceId), HISTORY);
    const target = join(this.folder(record.sessionId), HISTORY);
    if (existsSync(source)) copyFileSync(source, target);
    else writeFileSync(target, "");
    this.write(record);
  }

  /** Removes a session; returns whether there was one. */
  delete(sessionId: string): boolean {
    if (!isSessionId(sessionId)) return false;
    const folder = this.folder(sessionId);
    const existed = existsSync(folder);
    rmSync(folder, { recursive: true, force: true });
    return existed;
  }

  /** Every readable session record in the store (unordered). */
  list(): StoredSession[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const records: StoredSession[] = [];
    for (const name of names) {
      const record = this.read(name);
      if (record) records.push(record);
    }
    return records;
  }
}

function parseRecord(text: string, sessionId: string): StoredSession | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const r = value as Partial<StoredSession>;
  if (
    r?.format !== STORE_FORMAT ||
    r.sessionId !== sessionId ||
    typeof r.cwd !== "string" ||
    !Array.isArray(r.additionalDirectories) ||
    typeof r.createdAt !== "string" ||
    typeof r.updatedAt !== "string" ||
    typeof r.toolCalls !== "number" ||
    typeof r.state !== "object" ||
    r.state === null
  ) {
    return undefined;
  }
  return r as StoredSession;
}
