/**
 * Registry signatures, npm's scheme: the registry signs `${name}@${version}:${integrity}` with
 * ECDSA P-256 (SHA-256) and lists the signatures in the version's `dist.signatures`; its public
 * keys are at `/-/npm/v1/keys` (base64 SPKI DER). As in the npm CLI: when the registry offers keys,
 * a version without a valid signature by one of them is refused; a registry with no keys is
 * recorded as `not-offered` (many private registries and mirrors sign nothing).
 */
import { createPublicKey, verify } from "node:crypto";
import { PackageRefused } from "./errors.js";
import type { RegistryKey } from "./registry-client.js";

export type SignatureRecord = { status: "verified"; keyid: string } | { status: "not-offered" };

export function checkSignatures(
  keys: RegistryKey[] | null,
  name: string,
  version: string,
  integrity: string,
  signatures: { keyid: string; sig: string }[] | undefined,
  publishedAt?: string,
): SignatureRecord {
  if (keys === null) return { status: "not-offered" };
  const what = `${name}@${version}`;
  if (!signatures?.length) {
    throw new PackageRefused("ESIGNATURE", `${what} has no registry signature, but the registry signs packages (it offers keys): refused`);
  }
  const message = Buffer.from(`${what}:${integrity}`);
  for (const { keyid, sig } of signatures) {
    const key = keys.find((k) => k.keyid === keyid);
    if (!key) continue;
    if (key.expires && publishedAt && Date.parse(publishedAt) > Date.parse(key.expires)) continue; // signed after the key expired
    let ok = false;
    try {
      const publicKey = createPublicKey({ key: Buffer.from(key.key, "base64"), format: "der", type: "spki" });
      ok = verify("sha256", message, publicKey, Buffer.from(sig, "base64"));
    } catch {
      ok = false;
    }
    if (ok) return { status: "verified", keyid };
    throw new PackageRefused(
      "ESIGNATURE",
      `${what}: the registry signature by key ${keyid} does not verify over "${what}:${integrity}": refused`,
    );
  }
  throw new PackageRefused(
    "ESIGNATURE",
    `${what}: no signature by a key the registry offers (${keys.map((k) => k.keyid).join(", ")}): refused`,
  );
}
