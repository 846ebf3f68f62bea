/**
 * A proxy's manifest: what it says about itself, embedded by the SDK's build tool as a custom
 * section named `cordon:manifest` (JSON) at the top level of the component. Optional — a
 * component without one is still a valid proxy — and never trusted for authority: requested
 * grants are only shown and compared with what the chain config grants.
 *
 *   { "name": "redact", "version": "0.1.0", "description": "...",
 *     "config": { JSON Schema of the proxy's config }, "grants": ["fs:read"],
 *     "watches": { "methods": ["session/request_permission"], "updates": ["agent_message_chunk"], "answers": [] } }
 *
 * `watches` (optional) is the proxy's interest filter (`components/interest-filter.ts`): the
 * methods it handles and the `session/update` kinds (`sessionUpdate`) it looks at. Everything
 * else passes it without entering its sandbox, exactly as its SDK would forward it. No `watches`:
 * it sees every message. `watches.answers` names the methods whose answers the proxy sees when it
 * forwards such a request; the answers to the others go straight back to whoever sent the request
 * (absent: it sees every answer). It grants nothing either: a proxy that declares it does not
 * watch something only gives up seeing it.
 *
 * The shape is checked by hand (no schema library on the start-up path); the config's JSON Schema
 * is compiled with zod only when a proxy has one, loaded then.
 */
import { readU32, sections } from "./wasm-binary.js";

export const MANIFEST_SECTION = "cordon:manifest";

export interface Watches {
  /** Methods (requests and notifications, from either side) the proxy handles. */
  methods?: string[];
  /** `session/update` kinds it looks at; `session/update` in `methods` means all of them. */
  updates?: string[];
  /**
   * Methods whose answers it sees when it forwards such a request; the answer to any other request
   * it forwards goes past it, to whoever sent the request (interest-filter.ts). Absent: every answer.
   */
  answers?: string[];
}

export interface Manifest {
  name?: string;
  version?: string;
  description?: string;
  config?: Record<string, unknown>;
  grants?: string[];
  watches?: Watches;
  [extra: string]: unknown;
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** What is wrong with a parsed manifest, or null. */
export function manifestProblem(m: unknown): string | null {
  if (!isObject(m)) return "a manifest is a JSON object";
  for (const key of ["name", "version", "description"]) {
    if (m[key] !== undefined && typeof m[key] !== "string") return `"${key}" must be a string`;
  }
  if (m.config !== undefined && !isObject(m.config)) return '"config" must be a JSON Schema object';
  if (m.grants !== undefined && !isStrings(m.grants)) return '"grants" must be an array of strings';
  if (m.watches !== undefined) {
    if (!isObject(m.watches)) return '"watches" must be an object {methods?, updates?, answers?}';
    for (const key of Object.keys(m.watches)) {
      if (key !== "methods" && key !== "updates" && key !== "answers") {
        return `"watches" has an unknown member "${key}" (methods, updates, answers)`;
      }
      if (!isStrings(m.watches[key])) return `"watches.${key}" must be an array of strings`;
    }
  }
  return null;
}

/** Reads the manifest custom section of a component (or core module); null when there is none. */
export function readManifest(bytes: Uint8Array): Manifest | null {
  for (const { id, body, end } of sections(bytes)) {
    if (id !== 0) continue;
    const [nameLength, name0] = readU32(bytes, body);
    const name = Buffer.from(bytes.subarray(name0, name0 + nameLength)).toString("utf8");
    if (name !== MANIFEST_SECTION) continue;
    const text = Buffer.from(bytes.subarray(name0 + nameLength, end)).toString("utf8");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new Error(`its ${MANIFEST_SECTION} section is not JSON (${(error as Error).message})`);
    }
    const problem = manifestProblem(json);
    if (problem) throw new Error(`its ${MANIFEST_SECTION} section is malformed: ${problem}`);
    return json as Manifest;
  }
  return null;
}

/** The empty-object schema every config-less proxy declares: `{}` passes it without compiling anything. */
function acceptsEmptyObject(schema: Record<string, unknown>, config: unknown): boolean {
  if (!isObject(config) || Object.keys(config).length > 0) return false;
  const keys = Object.keys(schema);
  return (
    schema.type === "object" &&
    keys.every((k) => k === "type" || k === "additionalProperties" || k === "properties" || k === "description" || k === "title")
  );
}

/** Checks a proxy's config against the JSON Schema in its manifest; returns the problems found. */
export async function configProblems(manifest: Manifest | null, config: unknown): Promise<string[]> {
  if (!manifest?.config) return [];
  if (acceptsEmptyObject(manifest.config, config)) return [];
  const { z } = await import("zod");
  let schema;
  try {
    schema = z.fromJSONSchema(manifest.config as never);
  } catch (error) {
    return [`its manifest's config schema cannot be used (${(error as Error).message})`];
  }
  const result = schema.safeParse(config);
  if (result.success) return [];
  return result.error.issues.map((issue) => `${issue.path.length ? issue.path.join(".") : "(config)"}: ${issue.message}`);
}
