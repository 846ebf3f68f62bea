/**
 * What a lax reader takes for a member. Go's `encoding/json` matches member names
 * case-insensitively (and the last match wins), so a rule that judges a member must judge every
 * member a reader after Cordon could take for it, not only the one `JSON.parse` reads.
 */
import { paramsObject } from "../../protocol/json-rpc.js";

/** The members of `value` whose names equal `lowerName` but for case, as `[name, value]`, in order. */
export function membersLike(value: unknown, lowerName: string): [string, unknown][] {
  const o = paramsObject(value);
  return o ? Object.entries(o).filter(([k]) => k.toLowerCase() === lowerName) : [];
}
