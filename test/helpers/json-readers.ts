/**
 * Three JSON readers that are lax where real ones are, to see what a peer that is not Node could
 * read in the text Cordon forwards (test/hostile-json.test.ts):
 *
 * - `go`: like Go's `encoding/json` decoding into a struct: member names match case-insensitively
 *   (ASCII case, the Kelvin sign and the long s fold too) and the last one wins;
 * - `firstKey`: a repeated name keeps its first value (several streaming parsers, some maps);
 * - `rawKey`: names compared as written, escapes not decoded (`"\u006dethod"` is not `method`);
 *   the last one wins.
 *
 * Values are decoded as `JSON.parse` decodes them. Written for small test messages: recursive,
 * no validation beyond what the tests send.
 */
export interface Reader {
  name: string;
  /** The value of member `path` (each name looked up as this reader matches names), or undefined. */
  get(text: string, ...path: (string | number)[]): unknown;
}

interface KeyPolicy {
  /** The identity of a member name for this reader. */
  key(written: string, decoded: string): string;
  firstWins: boolean;
}

const goFold = (name: string): string => name.toLowerCase().replaceAll("ſ", "s");

function reader(name: string, policy: KeyPolicy): Reader {
  return {
    name,
    get(text, ...path) {
      let value = parse(text, policy);
      for (const step of path) {
        if (value === null || typeof value !== "object") return undefined;
        value = typeof step === "number" ? (value as unknown[])[step] : (value as Record<string, unknown>)[policy.key(step, step)];
      }
      return value;
    },
  };
}

export const readers: readonly Reader[] = [
  { name: "JSON.parse", get: (text, ...path) => path.reduce<any>((v, step) => v?.[step], JSON.parse(text)) },
  reader("go", { key: (_written, decoded) => goFold(decoded), firstWins: false }),
  reader("first-key", { key: (_written, decoded) => decoded, firstWins: true }),
  reader("raw-key", { key: (written) => written, firstWins: false }),
];

/** What each reader reads at `path` in `text`, by reader name. */
export function readings(text: string, ...path: (string | number)[]): Record<string, unknown> {
  return Object.fromEntries(readers.map((r) => [r.name, r.get(text, ...path)]));
}

function parse(text: string, policy: KeyPolicy): unknown {
  let pos = 0;
  const ws = () => {
    while (/\s/.test(text[pos] ?? "")) pos++;
  };
  const string = (): { written: string; decoded: string } => {
    const start = pos;
    pos++;
    while (text[pos] !== '"') pos += text[pos] === "\\" ? 2 : 1;
    pos++;
    const literal = text.slice(start, pos);
    return { written: literal.slice(1, -1), decoded: JSON.parse(literal) as string };
  };
  const value = (): unknown => {
    ws();
    const c = text[pos];
    if (c === '"') return string().decoded;
    if (c === "{") {
      pos++;
      const object: Record<string, unknown> = Object.create(null);
      ws();
      if (text[pos] === "}") return (pos++, object);
      for (;;) {
        ws();
        const name = string();
        ws();
        pos++; // the colon
        const member = value();
        const key = policy.key(name.written, name.decoded);
        if (!(policy.firstWins && key in object)) object[key] = member;
        ws();
        if (text[pos++] === "}") return object;
      }
    }
    if (c === "[") {
      pos++;
      const array: unknown[] = [];
      ws();
      if (text[pos] === "]") return (pos++, array);
      for (;;) {
        array.push(value());
        ws();
        if (text[pos++] === "]") return array;
      }
    }
    const literal = /^-?[\w.+-]+/.exec(text.slice(pos))![0];
    pos += literal.length;
    return JSON.parse(literal);
  };
  return value();
}
