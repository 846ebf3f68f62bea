/** A component with its `cordon:manifest` section replaced, as the SDK's build would embed another manifest. */
import { MANIFEST_SECTION } from "../../runtime/sandbox/manifest.js";
import { readU32, sections } from "../../runtime/sandbox/wasm-binary.js";
import { withCustomSection } from "../fixtures/custom-section.js";

export function withManifest(component: Uint8Array, manifest: object): Uint8Array {
  const kept: Uint8Array[] = [component.subarray(0, 8)];
  for (const s of sections(component)) {
    if (s.id === 0) {
      const [length, at] = readU32(component, s.body);
      if (Buffer.from(component.subarray(at, at + length)).toString("utf8") === MANIFEST_SECTION) continue;
    }
    kept.push(component.subarray(s.start, s.end));
  }
  return withCustomSection(Buffer.concat(kept), MANIFEST_SECTION, JSON.stringify(manifest));
}
