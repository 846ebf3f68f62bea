/**
 * The last lines a process wrote that were not JSON-RPC — a usage text, a banner, a login prompt
 * on stdout — kept so that when the agent exits or never answers `initialize`, the error the
 * client gets shows what it said instead of only "exited with code 64". Bounded: the latest
 * {@link MAX_LINES} lines and {@link MAX_CHARS} characters, each line escaped (`sanitizeForLog`:
 * control characters such as a banner's colour codes become visible escapes) and cut at
 * {@link MAX_LINE_CHARS}. Costs nothing while the process writes only JSON.
 */
import { sanitizeForLog } from "../log.js";

const MAX_LINES = 20;
const MAX_CHARS = 4096;
const MAX_LINE_CHARS = 512;

export class OutputTail {
  private readonly kept: string[] = [];
  private chars = 0;

  push(line: string): void {
    const text = sanitizeForLog(line.trimEnd(), MAX_LINE_CHARS);
    if (text === "") return;
    this.kept.push(text);
    this.chars += text.length;
    while (this.kept.length > MAX_LINES || (this.kept.length > 1 && this.chars > MAX_CHARS)) this.chars -= this.kept.shift()!.length;
  }

  /** The kept lines, oldest first. */
  lines(): string[] {
    return [...this.kept];
  }

  /** The kept lines on one line (` | ` between them), or "" when there are none. */
  text(): string {
    return this.kept.join(" | ");
  }
}
