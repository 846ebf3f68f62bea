/**
 * A proxy's manifest: what it says about itself, embedded by the SDK's build tool as a custom
 * section named `cordon:manifest` (JSON) at the top level of the component. Optional — a
 * component without one is still a valid proxy — and never trusted for authority: requested
 * grants are only shown and compared with what the chain config grants.
 *
 *   { "name": "redact", "version": "0.1.0", "description": "...",
 *     "config": { JSON Schema of the proxy's config }, "grants": ["fs:read"] }
 */
import { z } from "zod";
import { readU32, sections } from "./wasm-binary.js";

export const MANIFEST_SECTION = "cordon:manifest";

export const ManifestSchema = z
  .object({
    name: z.string().optional(),
    version: z.string().optional(),
    description: z.string().optional(),
    config: z.record(z.string(), z.unknown()).optional(),
    grants: z.array(z.string()).optional(),
  })
  .passthrough();

export type Manifest = z.infer<typeof ManifestSchema>;

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
    const parsed = ManifestSchema.safeParse(json);
    if (!parsed.success) throw new Error(`its ${MANIFEST_SECTION} section is malformed: ${parsed.error.issues[0]?.message}`);
    return parsed.data;
  }
  return null;
}

/** Checks a proxy's config against the JSON Schema in its manifest; returns the problems found. */
export function configProblems(manifest: Manifest | null, config: unknown): string[] {
  if (!manifest?.config) return [];
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
