/**
 * `Buffer`'s own UTF-16 copy methods, called directly: `write` and `toString` check and normalise
 * their arguments in JavaScript first, which measured ~4 times the copy itself for a 200-byte
 * message (a tenth of a watching proxy's host work per crossing). Callers pass arguments already
 * in bounds. Node has had both since its first Buffer; `write`/`toString` are the fallback should
 * a runtime lack them. Used for WebAssembly memories: a guest's (sandbox/canonical-host.ts) and the
 * JSON check's (json-check.ts).
 */
type Ucs2Buffer = Buffer & {
  ucs2Write?(text: string, offset: number, length: number): number;
  ucs2Slice?(start: number, end: number): string;
};

/** Writes `text` into `view` from byte `offset` as UTF-16LE, at most `length` bytes; returns the bytes written. */
export const ucs2Write = (view: Buffer, text: string, offset: number, length: number): number =>
  (view as Ucs2Buffer).ucs2Write?.(text, offset, length) ?? view.write(text, offset, length, "utf16le");

/** The UTF-16LE text of `view`'s bytes `[start, end)`. */
export const ucs2Slice = (view: Buffer, start: number, end: number): string =>
  (view as Ucs2Buffer).ucs2Slice?.(start, end) ?? view.toString("utf16le", start, end);
