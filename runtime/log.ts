/**
 * Cordon's diagnostics. Everything goes to stderr: stdout carries ACP and nothing else.
 * Level from `CORDON_LOG` (error | warn | info | debug), default `info`.
 */
export type Level = "error" | "warn" | "info" | "debug";
const ORDER: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
  enabled(level: Level): boolean;
  child(prefix: string): Logger;
}

export function createLogger(
  level: Level = parseLevel(process.env.CORDON_LOG),
  write: (line: string) => void = (line) => process.stderr.write(line),
  prefix = "cordon",
): Logger {
  const at = (l: Level) => (message: string) => {
    if (ORDER[l] <= ORDER[level]) write(`[${prefix}] ${l === "info" ? "" : `${l}: `}${message}\n`);
  };
  return {
    error: at("error"),
    warn: at("warn"),
    info: at("info"),
    debug: at("debug"),
    enabled: (l) => ORDER[l] <= ORDER[level],
    child: (p) => createLogger(level, write, `${prefix}:${p}`),
  };
}

export function parseLevel(value: string | undefined): Level {
  return value && value in ORDER ? (value as Level) : "info";
}

export const isLevel = (value: unknown): value is Level => typeof value === "string" && value in ORDER;
