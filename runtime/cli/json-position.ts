/**
 * Where `JSON.parse` stopped, as an editor shows it: `line:column` (both from 1), with V8's reason
 * and without its character offset — "Expected double-quoted property name in JSON at position
 * 212" becomes `{ line: 9, column: 5, reason: "Expected double-quoted property name" }`. Text that
 * ends too soon is placed at its end. Newer V8s add "(line L column C)" themselves; either way the
 * position is computed here from the offset, so every Node says the same.
 */
export interface JsonSyntaxPosition {
  line: number;
  column: number;
  reason: string;
}

/** The position of the syntax error `error` (thrown by `JSON.parse(text)`), or null when its message gives none. */
export function jsonSyntaxPosition(text: string, error: Error): JsonSyntaxPosition | null {
  const message = error.message;
  const at = / in JSON at position (\d+)/.exec(message);
  let offset: number;
  if (at) offset = Number(at[1]);
  else if (/^Unexpected end of JSON input/.test(message)) offset = text.length;
  else return null;
  const reason = message
    .replace(/ in JSON at position \d+.*$/, "")
    .replace(/ \(line \d+ column \d+\)$/, "")
    .trim();
  const before = text.slice(0, Math.min(offset, text.length));
  const lineStart = before.lastIndexOf("\n") + 1;
  return { line: before.split("\n").length, column: before.length - lineStart + 1, reason };
}
