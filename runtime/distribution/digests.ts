/** The two digests a package is pinned by: the tarball's sha512 SRI (npm's `integrity`) and the `.wasm`'s sha256. */
import { createHash } from "node:crypto";

export const sha512Integrity = (bytes: Uint8Array) => `sha512-${createHash("sha512").update(bytes).digest("base64")}`;

export const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * Whether `bytes` match an SRI string. Only sha512 counts: a registry that offers only sha1
 * (`shasum`) or an SRI with other algorithms is not trusted for identity.
 */
export function matchesIntegrity(bytes: Uint8Array, sri: string): boolean {
  const ours = sha512Integrity(bytes);
  return sri.split(/\s+/).some((part) => part === ours);
}
