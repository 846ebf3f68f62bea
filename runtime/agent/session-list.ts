/**
 * `session/list`: which stored sessions a page holds, in which order, and the opaque cursor that
 * continues it.
 *
 * Order: most recently updated first, ties by session id — a total order, so a cursor (the sort key of
 * the previous page's last session, as base64url JSON `{v: 1, u: updatedAt, id: sessionId}`) names a
 * position that stays meaningful while sessions are added, changed or deleted between pages: the next
 * page holds the sessions ordered after it. A session updated between two pages moves to the front and
 * may be missed or seen twice, as with any keyset paging.
 *
 * Cost: the store keeps no index, so every page reads every stored record (`SessionStore.list`) and
 * sorts the matching ones — O(n log n) in the sessions of the store, per page.
 */
import { isAbsolute, resolve } from "node:path";
import { type ListSessionsRequest, type ListSessionsResponse, RequestError } from "@agentclientprotocol/sdk/unstable";
import { STATE_TITLE } from "./controls.js";
import type { SessionStore, StoredSession } from "./store.js";

/** Sessions per `session/list` page unless `--page-size` says otherwise. */
export const DEFAULT_PAGE_SIZE = 50;

/** The sort key of a session, and what a cursor carries. */
export interface CursorKey {
  updatedAt: string;
  sessionId: string;
}

export const encodeCursor = (key: CursorKey): string =>
  Buffer.from(JSON.stringify({ v: 1, u: key.updatedAt, id: key.sessionId })).toString("base64url");

/** The key a cursor of this agent carries; anything else → -32602. */
export function decodeCursor(cursor: string): CursorKey {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { v?: unknown; u?: unknown; id?: unknown };
    if (value.v === 1 && typeof value.u === "string" && typeof value.id === "string") return { updatedAt: value.u, sessionId: value.id };
  } catch {
    // Falls through to the error below.
  }
  throw RequestError.invalidParams({ cursor }, "not a session/list cursor from this agent");
}

/** Most recently updated first; ties by id. Negative: `a` comes first. */
export function compareRecency(a: CursorKey, b: CursorKey): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt ? -1 : 1;
  return a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0;
}

/**
 * One page of the sessions of `store` for `params`: `cwd` (absolute, else -32602) keeps the sessions
 * of exactly that directory (compared after normalising), `cursor` starts after the session it names.
 * The params are checked before the store is read.
 */
export function listSessions(
  store: Pick<SessionStore, "list">,
  params: Pick<ListSessionsRequest, "cwd" | "cursor">,
  pageSize: number,
): ListSessionsResponse {
  let cwd: string | undefined;
  if (params.cwd !== undefined && params.cwd !== null) {
    if (!isAbsolute(params.cwd)) throw RequestError.invalidParams({ cwd: params.cwd }, "cwd must be an absolute path");
    cwd = resolve(params.cwd);
  }
  const after = params.cursor !== undefined && params.cursor !== null ? decodeCursor(params.cursor) : undefined;
  const keyOf = (r: StoredSession): CursorKey => ({ updatedAt: r.updatedAt, sessionId: r.sessionId });
  const matching = store
    .list()
    .filter((r) => cwd === undefined || resolve(r.cwd) === cwd)
    .filter((r) => after === undefined || compareRecency(keyOf(r), after) > 0)
    .sort((a, b) => compareRecency(keyOf(a), keyOf(b)));
  const page = matching.slice(0, pageSize);
  const last = page[page.length - 1];
  return {
    sessions: page.map((r) => {
      const title = r.state[STATE_TITLE];
      return {
        sessionId: r.sessionId,
        cwd: r.cwd,
        ...(r.additionalDirectories.length > 0 ? { additionalDirectories: r.additionalDirectories } : {}),
        ...(typeof title === "string" ? { title } : {}),
        updatedAt: r.updatedAt,
      };
    }),
    ...(matching.length > page.length && last ? { nextCursor: encodeCursor(keyOf(last)) } : {}),
  };
}
