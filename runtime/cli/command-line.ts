/**
 * Splits a command line the way a POSIX shell would for simple cases — single and double quotes,
 * backslash escapes, whitespace — without running a shell. Leading `NAME=value` words become
 * environment variables, as in `--proxy-cmd "DEBUG=1 node proxy.js"`.
 */
export interface CommandLine {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} quote in: ${line}`);
  if (inWord) words.push(word);
  return words;
}

export function parseCommandLine(line: string): CommandLine {
  const words = splitWords(line);
  const env: Record<string, string> = {};
  while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) {
    const w = words.shift()!;
    const eq = w.indexOf("=");
    env[w.slice(0, eq)] = w.slice(eq + 1);
  }
  if (words.length === 0) throw new Error(`no command in: ${JSON.stringify(line)}`);
  return { command: words[0], args: words.slice(1), env };
}
