/**
 * Every grant name a package may request and a chain config may give: the routing's (`GRANTS`:
 * fs, terminal and the agent grants) and the sandbox's WASI grants. Their plain words are the
 * ones `cordon inspect` and `cordon check` use (`cli/grant-words.ts`).
 */
import { grantMeaning } from "../cli/grant-words.js";
import { GRANTS } from "../routing/grants.js";
import { WASI_GRANTS } from "../sandbox/wasi-grants.js";

export const KNOWN_GRANTS: readonly string[] = [...GRANTS, ...WASI_GRANTS];

/** `terminal` → `it may run commands in a terminal the client opens, …`. */
export const describeGrant = (grant: string) => `it may ${grantMeaning(grant)}`;
