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
  let pos = 8;
  const u32 = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (pos >= bytes.length) throw new Error("binary is truncated");
      const b = bytes[pos++];
      result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result >>> 0;
      shift += 7;
    }
  };
  while (pos < bytes.length) {
    const id = bytes[pos++];
    const size = u32();
    const end = pos + size;
    if (id === 0) {
      const nameLength = u32();
      const name = Buffer.from(bytes.subarray(pos, pos + nameLength)).toString("utf8");
      if (name === MANIFEST_SECTION) {
        const text = Buffer.from(bytes.subarray(pos + nameLength, end)).toString("utf8");
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
    }
    pos = end;
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
